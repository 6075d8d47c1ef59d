// Discovery documents: what kubectl reads before anything else. Plain JSON
// only; kubectl falls back from aggregated discovery when it gets this.
#include <set>

#include "services/kubesim/api_internal.h"
#include "services/kubesim/scale.h"

namespace septa::kubesim {

using nlohmann::json;

namespace {

json ResourceList(const std::string& group_version, const std::vector<std::shared_ptr<const ResourceType>>& types,
                  const std::string& version) {
  json resources = json::array();
  const json verbs = {"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"};
  for (const auto& t : types) {
    if (!t->serves(version)) continue;
    json r = {{"name", t->resource},
              {"singularName", t->singular},
              {"namespaced", t->namespaced},
              {"kind", t->kind},
              {"verbs", IsTokenReview(*t) ? json::array({"create"}) : verbs}};
    if (!t->short_names.empty()) r["shortNames"] = t->short_names;
    if (t->resource == "pods" || t->resource == "services" || t->resource == "deployments" ||
        t->resource == "replicasets" || t->resource == "statefulsets" || t->resource == "jobs") {
      r["categories"] = {"all"};
    }
    resources.push_back(std::move(r));
    if (t->has_status) {
      resources.push_back({{"name", t->resource + "/status"},
                           {"singularName", ""},
                           {"namespaced", t->namespaced},
                           {"kind", t->kind},
                           {"verbs", {"get", "patch", "update"}}});
    }
    if (ServesScale(*t)) {
      resources.push_back({{"name", t->resource + "/scale"},
                           {"singularName", ""},
                           {"namespaced", true},
                           {"group", "autoscaling"},
                           {"version", "v1"},
                           {"kind", "Scale"},
                           {"verbs", {"get", "patch", "update"}}});
    }
    if (t->group.empty() && t->resource == "serviceaccounts") {
      resources.push_back({{"name", "serviceaccounts/token"},
                           {"singularName", ""},
                           {"namespaced", true},
                           {"group", "authentication.k8s.io"},
                           {"version", "v1"},
                           {"kind", "TokenRequest"},
                           {"verbs", {"create"}}});
    }
    if (t->group.empty() && t->resource == "pods") {
      resources.push_back({{"name", "pods/binding"},
                           {"singularName", ""},
                           {"namespaced", true},
                           {"kind", "Binding"},
                           {"verbs", {"create"}}});
    }
  }
  return {{"kind", "APIResourceList"}, {"apiVersion", "v1"}, {"groupVersion", group_version}, {"resources", resources}};
}

json GroupDocument(const std::string& group, const std::vector<std::shared_ptr<const ResourceType>>& types) {
  std::vector<std::string> versions;
  for (const auto& t : types) {
    if (t->group != group) continue;
    for (const auto& v : t->versions) {
      if (std::find(versions.begin(), versions.end(), v) == versions.end()) versions.push_back(v);
    }
  }
  json vs = json::array();
  for (const auto& v : versions) vs.push_back({{"groupVersion", group + "/" + v}, {"version", v}});
  return {{"name", group}, {"versions", vs}, {"preferredVersion", vs.empty() ? json::object() : vs[0]}};
}

}  // namespace

bool ApiServer::Impl::Discovery(Call& call, const std::vector<std::string>& s) {
  http::Exchange& ex = *call.exchange;
  if (call.request.method() != boost::beast::http::verb::get) return false;
  auto types = cluster.registry.All();
  if (s.size() == 1 && s[0] == "version") {
    std::string minor = options.server_version.substr(options.server_version.find('.') + 1);
    minor = minor.substr(0, minor.find('.'));
    ReplyJson(ex, 200,
              json{{"major", "1"},
                   {"minor", minor},
                   {"gitVersion", options.server_version},
                   {"gitCommit", "kubesim"},
                   {"gitTreeState", "clean"},
                   {"buildDate", "2024-01-01T00:00:00Z"},
                   {"goVersion", "go1.22.0"},
                   {"compiler", "gc"},
                   {"platform", "linux/amd64"}}
                  .dump());
    return true;
  }
  if (s.size() == 1 && s[0] == "api") {
    ReplyJson(ex, 200,
              json{{"kind", "APIVersions"},
                   {"versions", {"v1"}},
                   {"serverAddressByClientCIDRs", {{{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", "127.0.0.1"}}}}}
                  .dump());
    return true;
  }
  if (s.size() == 2 && s[0] == "api" && s[1] == "v1") {
    std::vector<std::shared_ptr<const ResourceType>> core;
    for (const auto& t : types)
      if (t->group.empty()) core.push_back(t);
    ReplyJson(ex, 200, ResourceList("v1", core, "v1").dump());
    return true;
  }
  if (s.size() == 1 && s[0] == "apis") {
    std::set<std::string> seen;
    json groups = json::array();
    for (const auto& t : types) {
      if (t->group.empty() || !seen.insert(t->group).second) continue;
      groups.push_back(GroupDocument(t->group, types));
    }
    ReplyJson(ex, 200, json{{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", groups}}.dump());
    return true;
  }
  if (s.size() == 2 && s[0] == "apis") {
    json g = GroupDocument(s[1], types);
    if (g["versions"].empty()) return false;
    g["kind"] = "APIGroup";
    g["apiVersion"] = "v1";
    ReplyJson(ex, 200, g.dump());
    return true;
  }
  if (s.size() == 3 && s[0] == "apis") {
    std::vector<std::shared_ptr<const ResourceType>> in_group;
    for (const auto& t : types)
      if (t->group == s[1] && t->serves(s[2])) in_group.push_back(t);
    if (in_group.empty()) return false;
    ReplyJson(ex, 200, ResourceList(s[1] + "/" + s[2], in_group, s[2]).dump());
    return true;
  }
  return false;
}

}  // namespace septa::kubesim

namespace septa::kubesim {

// A minimal OpenAPI v3: kubectl only needs to see, per kind, a PATCH
// operation that accepts `fieldValidation`, so that it leaves validation to
// the server instead of downloading schemas for client-side checks.
bool ApiServer::Impl::OpenApi(Call& call, const std::vector<std::string>& s) {
  if (s.empty() || s[0] != "openapi") return false;
  http::Exchange& ex = *call.exchange;
  if (s.size() < 2 || s[1] != "v3") {
    ReplyError(ex, NotFoundError("openapi", "", s.size() > 1 ? s[1] : ""));
    return true;
  }
  auto types = cluster.registry.All();
  if (s.size() == 2) {
    json paths = json::object();
    for (const auto& t : types) {
      for (const auto& v : t->versions) {
        std::string gv = t->group.empty() ? "api/" + v : "apis/" + t->group + "/" + v;
        paths[gv] = {{"serverRelativeURL", "/openapi/v3/" + gv}};
      }
    }
    ReplyJson(ex, 200, json{{"paths", paths}}.dump());
    return true;
  }
  std::string group, version;
  // /openapi/v3/api/<v> or /openapi/v3/apis/<group>/<v>
  if (s.size() == 4 && s[2] == "api") {
    version = s[3];
  } else if (s.size() == 5 && s[2] == "apis") {
    group = s[3];
    version = s[4];
  } else {
    ReplyError(ex, NotFoundError("openapi", "", ""));
    return true;
  }
  json paths = json::object();
  const json param = {{"name", "fieldValidation"}, {"in", "query"}, {"schema", {{"type", "string"}}}};
  for (const auto& t : types) {
    if (t->group != group || !t->serves(version)) continue;
    std::string prefix = group.empty() ? "/api/" + version : "/apis/" + group + "/" + version;
    std::string path = prefix + (t->namespaced ? "/namespaces/{namespace}/" : "/") + t->resource + "/{name}";
    json gvk = {{"group", group}, {"version", version}, {"kind", t->kind}};
    json op = {{"x-kubernetes-group-version-kind", gvk},
               {"parameters", json::array({param})},
               {"responses", {{"200", {{"description", "OK"}}}}}};
    paths[path] = {{"patch", op}, {"put", op}};
    paths[prefix + (t->namespaced ? "/namespaces/{namespace}/" : "/") + t->resource] = {{"post", op}};
  }
  ReplyJson(ex, 200,
            json{{"openapi", "3.0.0"},
                 {"info", {{"title", "Kubernetes"}, {"version", options.server_version}}},
                 {"paths", paths}}
                .dump());
  return true;
}

}  // namespace septa::kubesim
