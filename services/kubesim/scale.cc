#include "services/kubesim/scale.h"

#include <boost/beast/http/field.hpp>

#include "services/kubesim/api_internal.h"
#include "services/kubesim/patches.h"

namespace septa::kubesim {

namespace bhttp = boost::beast::http;
using nlohmann::json;

namespace {

// spec.selector as the label selector string the Scale's status carries.
std::string SelectorText(const json& selector) {
  std::string out;
  auto add = [&](const std::string& term) { out += (out.empty() ? "" : ",") + term; };
  const json match_labels = selector.value("matchLabels", json::object());
  for (const auto& [k, v] : match_labels.items()) add(k + "=" + (v.is_string() ? v.get<std::string>() : v.dump()));
  for (const auto& e : selector.value("matchExpressions", json::array())) {
    const std::string key = e.value("key", "");
    const std::string op = e.value("operator", "");
    std::string values;
    for (const auto& v : e.value("values", json::array())) values += (values.empty() ? "" : ",") + v.get<std::string>();
    if (op == "In") add(key + " in (" + values + ")");
    else if (op == "NotIn") add(key + " notin (" + values + ")");
    else if (op == "Exists") add(key);
    else if (op == "DoesNotExist") add("!" + key);
  }
  return out;
}

}  // namespace

bool ServesScale(const ResourceType& type) {
  return type.group == "apps" &&
         (type.resource == "deployments" || type.resource == "replicasets" || type.resource == "statefulsets");
}

json ScaleOf(const json& object) {
  const json& md = object["metadata"];
  json meta = json::object();
  for (const char* key : {"name", "namespace", "uid", "resourceVersion", "creationTimestamp"})
    if (md.contains(key)) meta[key] = md[key];
  const json spec = object.value("spec", json::object());
  return {{"kind", "Scale"},
          {"apiVersion", "autoscaling/v1"},
          {"metadata", std::move(meta)},
          {"spec", {{"replicas", spec.value("replicas", 1)}}},
          {"status",
           {{"replicas", object.value("status", json::object()).value("replicas", 0)},
            {"selector", SelectorText(spec.value("selector", json::object()))}}}};
}

void ApiServer::Impl::Scale(Call& call) {
  const ResourceType& t = *call.type;
  const auto method = call.request.method();
  if (method == bhttp::verb::get) {
    ObjectPtr obj = cluster.storage.Get(t.key(), call.ns, call.name);
    if (!obj) return ReplyError(*call.exchange, NotFoundError(t.resource, t.group, call.name));
    return ReplyJson(*call.exchange, 200, ScaleOf(*obj).dump());
  }
  if (method != bhttp::verb::put && method != bhttp::verb::patch) {
    return ReplyError(*call.exchange,
                      MethodNotAllowedError("the server does not allow this method on the requested resource"));
  }
  auto body = ParseJsonOrYaml(call.request.body());
  if (!body.ok()) return ReplyError(*call.exchange, body.error());
  const json& sent = *body;
  std::string ct(call.request[bhttp::field::content_type]);
  ct = ct.substr(0, ct.find(';'));
  auto stored = cluster.storage.Mutate(
      t.key(), call.ns, call.name,
      [&](const json* current) -> ApiResult<Mutation> {
        if (!current) return NotFoundError(t.resource, t.group, call.name);
        const json scale = ScaleOf(*current);
        ApiResult<json> wanted = sent;
        if (method == bhttp::verb::patch) {
          if (ct == "application/json-patch+json") wanted = ApplyJsonPatch(scale, sent);
          else if (ct == "application/merge-patch+json") wanted = ApplyMergePatch(scale, sent);
          else if (ct == "application/strategic-merge-patch+json") wanted = ApplyStrategicMergePatch(scale, sent);
          else return UnsupportedMediaTypeError("the body of the request was in an unknown format");
        }
        if (!wanted.ok()) return wanted.error();
        const json& w = *wanted;
        if (!w.is_object()) return BadRequestError("the body of the request must be a JSON object");
        const std::string rv = w.value("metadata", json::object()).value("resourceVersion", "");
        if (!rv.empty() && rv != (*current)["metadata"].value("resourceVersion", ""))
          return StaleUpdateError(t.resource, t.group, call.name);
        const json replicas = w.value("spec", json::object()).value("replicas", json());
        if (!replicas.is_number_integer() || replicas.get<long long>() < 0 || replicas.get<long long>() > INT32_MAX) {
          return InvalidError("Scale", "autoscaling", call.name,
                              {{"FieldValueInvalid", "must be greater than or equal to 0", "spec.replicas"}});
        }
        if ((*current)["spec"].value("replicas", 1) == replicas) return Mutation{};
        json next = *current;
        next["spec"]["replicas"] = replicas;
        next["metadata"]["generation"] = next["metadata"].value("generation", 1) + 1;
        return Mutation{Mutation::Kind::kPut, std::move(next)};
      },
      call.DryRun());
  if (!stored.ok()) return ReplyError(*call.exchange, stored.error());
  ReplyJson(*call.exchange, 200, ScaleOf(**stored).dump());
}

}  // namespace septa::kubesim
