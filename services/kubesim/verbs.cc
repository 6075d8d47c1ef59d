// get, list, create, update, patch, delete, deletecollection and pod binding.
#include <boost/beast/http/field.hpp>

#include "common/documents.h"
#include "services/kubesim/api_internal.h"
#include "services/kubesim/apply.h"
#include "services/kubesim/objects.h"
#include "services/kubesim/patches.h"
#include "services/kubesim/selectors.h"
#include "services/kubesim/service_ips.h"
#include "services/kubesim/workload_defaults.h"

namespace septa::kubesim {

namespace bhttp = boost::beast::http;
using nlohmann::json;

namespace {

bool IsService(const ResourceType& t) { return t.group.empty() && t.resource == "services"; }

std::string ContentType(const Call& call) {
  std::string ct(call.request[bhttp::field::content_type]);
  auto semi = ct.find(';');
  if (semi != std::string::npos) ct.resize(semi);
  while (!ct.empty() && ct.back() == ' ') ct.pop_back();
  return ct;
}

// The continue token: the list's resource version and the last key served.
std::string EncodeContinue(std::uint64_t rv, const std::string& key) { return json{{"rv", rv}, {"start", key}}.dump(); }

bool DecodeContinue(const std::string& token, std::uint64_t& rv, std::string& key) {
  auto parsed = ParseJson(token, {.max_bytes = token.size(), .max_depth = 1});
  if (!parsed.ok()) return false;
  const json& j = *parsed;
  if (!j.is_object() || !j.contains("rv") || !j["rv"].is_number_unsigned() || !j.contains("start") ||
      !j["start"].is_string())
    return false;
  rv = j["rv"].get<std::uint64_t>();
  key = j["start"].get<std::string>();
  return true;
}

std::string JsonString(const std::string& s) { return json(s).dump(); }

ApiResult<Mutation> Put(json obj) { return Mutation{Mutation::Kind::kPut, std::move(obj)}; }

bool HasFinalizers(const json& obj) {
  const json md = obj.value("metadata", json::object());
  return md.contains("finalizers") && md["finalizers"].is_array() && !md["finalizers"].empty();
}

}  // namespace

ApiResult<json> ParseBody(const Call& call, bool allow_array) {
  std::string ct = ContentType(call);
  if (ct != "application/json" && ct != "application/yaml" && ct != "" && ct.rfind("application/", 0) != 0) {
    return UnsupportedMediaTypeError(
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json, application/yaml");
  }
  if (ct == "application/vnd.kubernetes.protobuf") {
    return UnsupportedMediaTypeError(
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json, application/yaml");
  }
  auto parsed = ParseJsonOrYaml(call.request.body());
  if (!parsed.ok()) {
    // kube-apiserver's words for a body it cannot decode (a 400).
    ApiError& error = parsed.error();
    error.message = "the object provided is unrecognized (must be of type " + call.type->kind + "): " + error.message;
    return parsed;
  }
  json& j = *parsed;
  if (!j.is_object() && !(allow_array && j.is_array())) {
    return BadRequestError("the body of the request must be a JSON object");
  }
  // What kube-apiserver's decoder refuses before anything reads the object:
  // metadata that is not an object (null is no metadata).
  if (auto md = j.find("metadata"); j.is_object() && md != j.end()) {
    if (md->is_null()) {
      j.erase(md);
    } else if (!md->is_object()) {
      return BadRequestError("the object provided is unrecognized (must be of type " + call.type->kind +
                             "): metadata must be an object");
    }
  }
  return parsed;
}

// Fields the API does not declare: with fieldValidation=Strict (kubectl
// create/apply/replace send it) the request is refused, worded as the API
// server words it; otherwise they are dropped, as the API server's decoder
// drops them (Warn, its default, also sends a Warning header there).
static ApiError DropOrRefuseUndeclaredFields(const Call& call, json& obj) {
  std::vector<std::string> unknown = UnknownFields(*call.type, obj);
  if (unknown.empty()) return {};
  if (call.Query("fieldValidation") != "Strict") {
    for (const std::string& path : unknown) {
      if (path.starts_with("metadata.")) obj["metadata"].erase(path.substr(9));
      else obj.erase(path);
    }
    return {};
  }
  std::string message = call.type->kind + " in version \"" + call.version + "\" cannot be handled as a " +
                        call.type->kind + ": strict decoding error: ";
  for (std::size_t i = 0; i < unknown.size(); ++i)
    message += (i ? ", " : "") + ("unknown field \"" + unknown[i] + "\"");
  return BadRequestError(std::move(message));
}

// Checks kind / apiVersion / namespace of a body against the URL and fills
// in what the client left out.
static ApiResult<json> Conform(const Call& call, json obj, bool allow_name_from_url) {
  const ResourceType& t = *call.type;
  if (ApiError strict = DropOrRefuseUndeclaredFields(call, obj); !strict.reason.empty()) return strict;
  std::string kind = obj.value("kind", "");
  if (!kind.empty() && kind != t.kind) {
    return BadRequestError("the API version in the data (" + obj.value("apiVersion", "") + ") and kind (" + kind +
                           ") do not match the requested resource " + t.resource);
  }
  std::string av = obj.value("apiVersion", "");
  if (!av.empty() && av != call.api_version()) {
    auto slash = av.find('/');
    std::string group = slash == std::string::npos ? "" : av.substr(0, slash);
    if (group != t.group) {
      return BadRequestError("the API version in the data (" + av + ") does not match the expected API version (" +
                             call.api_version() + ")");
    }
  }
  obj["kind"] = t.kind;
  obj["apiVersion"] = call.api_version();
  if (!obj.contains("metadata") || !obj["metadata"].is_object()) obj["metadata"] = json::object();
  json& md = obj["metadata"];
  std::string body_ns = md.value("namespace", "");
  if (t.namespaced) {
    if (!body_ns.empty() && body_ns != call.ns) {
      return BadRequestError("the namespace of the provided object does not match the namespace sent on the request");
    }
    md["namespace"] = call.ns;
  } else {
    md.erase("namespace");
  }
  if (!call.name.empty()) {
    std::string body_name = md.value("name", "");
    if (body_name.empty() && allow_name_from_url) {
      md["name"] = call.name;
    } else if (body_name != call.name) {
      return BadRequestError("the name of the object (" + body_name + ") does not match the name on the URL (" +
                             call.name + ")");
    }
  }
  return obj;
}

// Server-set fields and defaults of a new object; no storage access.
static ApiResult<json> PrepareNew(Cluster& cluster, const ResourceType& t, json obj) {
  json& md = obj["metadata"];
  if (md.value("name", "").empty() && !md.value("generateName", "").empty()) {
    KUBESIM_ASSIGN_OR_RETURN(const std::string suffix, RandomSuffix(cluster.random));
    md["name"] = md["generateName"].get<std::string>() + suffix;
  }
  auto causes = Validate(t, obj);
  if (!causes.empty()) return InvalidError(t.kind, t.group, md.value("name", ""), std::move(causes));
  KUBESIM_ASSIGN_OR_RETURN(md["uid"], NewUid(cluster.random));
  causes = DefaultAndValidateWorkload(t, obj);
  if (!causes.empty()) return InvalidError(t.kind, t.group, md.value("name", ""), std::move(causes));
  md["creationTimestamp"] = FormatRfc3339(cluster.clock.Now());
  md["generation"] = 1;
  md.erase("resourceVersion");
  md.erase("deletionTimestamp");
  md.erase("deletionGracePeriodSeconds");
  if (t.group.empty() && t.resource == "pods") {
    obj["status"] = {{"phase", "Pending"}, {"qosClass", "BestEffort"}};
    if (!obj["spec"].contains("schedulerName")) obj["spec"]["schedulerName"] = "default-scheduler";
  } else if (t.group.empty() && t.resource == "namespaces") {
    obj["spec"]["finalizers"] = {"kubernetes"};
    obj["status"] = {{"phase", "Active"}};
  } else if (t.group == "apiextensions.k8s.io" && t.resource == "customresourcedefinitions") {
    const json spec = obj.value("spec", json::object());
    const json names = spec.value("names", json::object());
    std::string expected = names.value("plural", "") + "." + spec.value("group", "");
    if (md.value("name", "") != expected || names.value("kind", "").empty() || !spec.contains("versions")) {
      return InvalidError(t.kind, t.group, md.value("name", ""),
                          {{"FieldValueInvalid", "must be spec.names.plural+\".\"+spec.group with a kind and versions",
                            "metadata.name"}});
    }
    obj["status"] = {{"acceptedNames", names},
                     {"storedVersions", json::array({spec["versions"][0].value("name", "v1")})},
                     {"conditions",
                      {{{"type", "NamesAccepted"}, {"status", "True"}, {"reason", "NoConflicts"}},
                       {{"type", "Established"}, {"status", "True"}, {"reason", "InitialNamesAccepted"}}}}};
  }
  return obj;
}

// The common end of update, patch and apply: keeps what clients may not
// change, bumps the generation, and deletes an object whose last finalizer
// went while it was being deleted.
// `used_service_ips`: for a service, the addresses in use (the caller holds
// service_ips_mu), should the update move it across ExternalName.
static ApiResult<Mutation> FinishUpdate(Cluster& cluster, const ResourceType& t, const json& current, json proposed,
                                        const std::string& subresource, const std::string& manager,
                                        const std::string& api_version,
                                        const std::set<std::uint32_t>* used_service_ips = nullptr) {
  const json& cur_md = current["metadata"];
  json& md = proposed["metadata"];
  std::string rv = md.value("resourceVersion", "");
  if (!rv.empty() && rv != cur_md.value("resourceVersion", "")) {
    return StaleUpdateError(t.resource, t.group, cur_md.value("name", ""));
  }
  if (subresource == "status") {
    json next = current;
    next["status"] = proposed.value("status", json::object());
    proposed = std::move(next);
  } else if (t.has_status) {
    if (current.contains("status")) proposed["status"] = current["status"];
    else proposed.erase("status");
  }
  json& pmd = proposed["metadata"];
  for (const char* keep : {"uid", "creationTimestamp", "deletionTimestamp", "generation", "name", "namespace"}) {
    if (cur_md.contains(keep)) pmd[keep] = cur_md[keep];
    else pmd.erase(keep);
  }
  if (!pmd.contains("managedFields") && cur_md.contains("managedFields"))
    pmd["managedFields"] = cur_md["managedFields"];
  auto causes = Validate(t, proposed);
  if (causes.empty() && IsService(t)) causes = KeepAllocatedServiceValues(current, proposed);
  if (causes.empty() && IsService(t) && used_service_ips != nullptr && subresource.empty()) {
    causes = ReallocateOnTypeChange(current, proposed, *used_service_ips, cluster.random);
  }
  if (causes.empty()) causes = DefaultAndValidateWorkload(t, proposed);
  if (!causes.empty()) return InvalidError(t.kind, t.group, pmd.value("name", ""), std::move(causes));
  if (SpecChanged(current, proposed)) pmd["generation"] = cur_md.value("generation", 1) + 1;
  if (!manager.empty()) RecordUpdate(&current, proposed, manager, api_version, FormatRfc3339(cluster.clock.Now()));
  if (pmd.contains("deletionTimestamp") && !HasFinalizers(proposed)) {
    return Mutation{Mutation::Kind::kDelete, std::move(proposed)};
  }
  return Put(std::move(proposed));
}

static ApiError NamespaceProblem(Cluster& cluster, const ResourceType& t, const std::string& ns) {
  if (!t.namespaced) return {};
  ObjectPtr n = cluster.storage.Get("namespaces", "", ns);
  if (!n) return NotFoundError("namespaces", "", ns);
  if ((*n)["metadata"].contains("deletionTimestamp")) {
    return ForbiddenError("unable to create new content in namespace " + ns + " because it is being terminated");
  }
  return {};
}

std::set<std::uint32_t> ApiServer::Impl::UsedServiceIps() const {
  std::set<std::uint32_t> used;
  for (const ObjectPtr& service : cluster.storage.List("services", "", nullptr, 0, "").items) {
    for (std::uint32_t ip : ClusterIpsOf(*service)) used.insert(ip);
  }
  return used;
}

// A new service's cluster IP, chosen among those not in `used`.
static ApiResult<json> AllocateServiceIp(Cluster& cluster, const ResourceType& t, json service,
                                         const std::set<std::uint32_t>& used) {
  auto causes = AllocateClusterIp(service, used, cluster.random);
  if (!causes.empty()) return InvalidError(t.kind, t.group, service["metadata"].value("name", ""), std::move(causes));
  return service;
}

ApiResult<ObjectPtr> ApiServer::Impl::CreateParsed(const ResourceType& t, const std::string& ns, json obj, bool dry_run,
                                                   const std::string& manager) {
  ApiError ns_problem = NamespaceProblem(cluster, t, ns);
  if (!ns_problem.reason.empty()) return ns_problem;
  KUBESIM_ASSIGN_OR_RETURN(json ready, PrepareNew(cluster, t, std::move(obj)));
  std::unique_lock<std::mutex> service_ips;
  if (IsService(t)) {
    service_ips = std::unique_lock(service_ips_mu);
    KUBESIM_ASSIGN_OR_RETURN(ready, AllocateServiceIp(cluster, t, std::move(ready), UsedServiceIps()));
  }
  // Pods pass LimitRanger and ResourceQuota admission, then are stored, as one step.
  const bool is_pod = t.group.empty() && t.resource == "pods";
  std::unique_lock<std::mutex> admission;
  ResourceAmounts usage;
  if (is_pod) {
    admission = std::unique_lock(pod_admission_mu);
    KUBESIM_ASSIGN_OR_RETURN(AdmittedPod admitted, AdmitPod(std::move(ready), PodAdmissionContextFor(ns)));
    ready = std::move(admitted.pod);
    usage = std::move(admitted.usage);
  }
  if (!manager.empty())
    RecordUpdate(nullptr, ready, manager, ready.value("apiVersion", ""), FormatRfc3339(cluster.clock.Now()));
  std::string name = ready["metadata"]["name"];
  auto stored = cluster.storage.Mutate(
      t.key(), ns, name,
      [&](const json* current) -> ApiResult<Mutation> {
        if (current) return AlreadyExistsError(t.resource, t.group, name);
        return Put(std::move(ready));
      },
      dry_run);
  if (is_pod && stored.ok() && !dry_run) ChargeQuotas(ns, usage, false);
  if (admission.owns_lock()) admission.unlock();
  if (stored.ok() && !dry_run) {
    AfterWrite(t, ns, *stored, false);
    if (t.group.empty() && t.resource == "namespaces") {
      // As the service account controller does: every namespace has "default".
      if (auto sa = cluster.registry.Find("", "v1", "serviceaccounts")) {
        (void)CreateParsed(*sa, name,
                           {{"apiVersion", "v1"},
                            {"kind", "ServiceAccount"},
                            {"metadata", {{"name", "default"}, {"namespace", name}}}},
                           false, "");
      }
    }
  }
  return stored;
}

void ApiServer::Impl::Get(Call& call) {
  ObjectPtr obj = cluster.storage.Get(call.type->key(), call.ns, call.name);
  if (!obj) return ReplyError(*call.exchange, NotFoundError(call.type->resource, call.type->group, call.name));
  if (call.table) {
    return ReplyJson(*call.exchange, 200,
                     ToTable(*call.type, {obj.get()}, (*obj)["metadata"].value("resourceVersion", ""),
                             cluster.clock.Now(), call.Query("includeObject") == "Object")
                         .dump());
  }
  ReplyJson(*call.exchange, 200, Encode(call, *obj));
}

void ApiServer::Impl::List(Call& call) {
  auto labels = LabelSelector::Parse(call.Query("labelSelector"));
  if (!labels.ok()) return ReplyError(*call.exchange, labels.error());
  auto fields = FieldSelector::Parse(call.Query("fieldSelector"));
  if (!fields.ok()) return ReplyError(*call.exchange, fields.error());
  std::size_t limit = options.default_page_size;
  if (std::string l = call.Query("limit"); !l.empty()) {
    try {
      limit = std::stoul(l);
    } catch (...) {
      return ReplyError(*call.exchange, BadRequestError("invalid limit \"" + l + "\""));
    }
  }
  std::uint64_t list_rv = 0;
  std::string start_after;
  if (std::string token = call.Query("continue"); !token.empty()) {
    if (!DecodeContinue(token, list_rv, start_after)) {
      return ReplyError(*call.exchange, BadRequestError("invalid continue token"));
    }
    if (list_rv < cluster.storage.compacted_resource_version()) {
      return ReplyError(*call.exchange,
                        GoneError("The provided continue parameter is too old to display a consistent list result. "
                                  "You can start a new list without the continue parameter."));
    }
  }
  const auto& label_sel = *labels;
  const auto& field_sel = *fields;
  auto filter = [&](const json& obj) {
    const json& md = obj["metadata"];
    auto it = md.find("labels");
    return label_sel.Matches(it == md.end() ? json() : *it) && field_sel.Matches(obj);
  };
  ListResult result = cluster.storage.List(call.type->key(), call.ns, filter, limit, start_after);
  std::uint64_t rv = list_rv != 0 ? list_rv : result.resource_version;
  std::string next = result.last_key.empty() ? "" : EncodeContinue(rv, result.last_key);
  if (call.table) {
    std::vector<const json*> objs;
    for (const auto& o : result.items) objs.push_back(o.get());
    json table =
        ToTable(*call.type, objs, std::to_string(rv), cluster.clock.Now(), call.Query("includeObject") == "Object");
    if (!next.empty()) table["metadata"]["continue"] = next;
    return ReplyJson(*call.exchange, 200, table.dump());
  }
  std::string body;
  body.reserve(256 + result.items.size() * 512);
  body += "{\"kind\":" + JsonString(call.type->list_kind()) + ",\"apiVersion\":" + JsonString(call.api_version()) +
          ",\"metadata\":{\"resourceVersion\":\"" + std::to_string(rv) + "\"";
  if (!next.empty()) body += ",\"continue\":" + JsonString(next);
  body += "},\"items\":[";
  for (std::size_t i = 0; i < result.items.size(); ++i) {
    if (i) body.push_back(',');
    if (call.type->from_crd) {
      body += Encode(call, *result.items[i]);  // may need another apiVersion
    } else {
      body += *result.texts[i];
    }
  }
  body += "]}";
  ReplyJson(*call.exchange, 200, std::move(body));
}

void ApiServer::Impl::Create(Call& call) {
  auto body = ParseBody(call);
  if (!body.ok()) return ReplyError(*call.exchange, body.error());
  auto obj = Conform(call, std::move(*body), false);
  if (!obj.ok()) return ReplyError(*call.exchange, obj.error());
  auto stored = CreateParsed(*call.type, call.ns, std::move(*obj), call.DryRun(), call.Query("fieldManager"));
  if (!stored.ok()) return ReplyError(*call.exchange, stored.error());
  ReplyJson(*call.exchange, 201, Encode(call, **stored));
}

void ApiServer::Impl::Update(Call& call) {
  auto body = ParseBody(call);
  if (!body.ok()) return ReplyError(*call.exchange, body.error());
  auto conformed = Conform(call, std::move(*body), false);
  if (!conformed.ok()) return ReplyError(*call.exchange, conformed.error());
  json proposed = std::move(*conformed);
  const ResourceType& t = *call.type;
  std::string manager = call.Query("fieldManager");
  // A service moved across ExternalName is given or loses an address.
  std::unique_lock<std::mutex> service_ips;
  std::set<std::uint32_t> used_service_ips;
  if (IsService(t)) {
    service_ips = std::unique_lock(service_ips_mu);
    used_service_ips = UsedServiceIps();
  }
  auto stored = cluster.storage.Mutate(
      t.key(), call.ns, call.name,
      [&](const json* current) -> ApiResult<Mutation> {
        if (!current) return NotFoundError(t.resource, t.group, call.name);
        return FinishUpdate(cluster, t, *current, std::move(proposed), call.subresource, manager, call.api_version(),
                            service_ips.owns_lock() ? &used_service_ips : nullptr);
      },
      call.DryRun());
  if (!stored.ok()) return ReplyError(*call.exchange, stored.error());
  const ObjectPtr& obj = *stored;
  if (!call.DryRun()) AfterWrite(t, call.ns, obj, cluster.storage.Get(t.key(), call.ns, call.name) == nullptr);
  ReplyJson(*call.exchange, 200, Encode(call, *obj));
}

void ApiServer::Impl::Patch(Call& call) {
  const std::string ct = ContentType(call);
  const bool apply = ct == "application/apply-patch+yaml";
  if (ct != "application/merge-patch+json" && ct != "application/json-patch+json" &&
      ct != "application/strategic-merge-patch+json" && !apply) {
    return ReplyError(*call.exchange,
                      UnsupportedMediaTypeError("the body of the request was in an unknown format - "
                                                "accepted media types include: application/json-patch+json, "
                                                "application/merge-patch+json, application/apply-patch+yaml"));
  }
  const ResourceType& t = *call.type;
  if (ct == "application/strategic-merge-patch+json" && t.from_crd) {
    return ReplyError(*call.exchange,
                      UnsupportedMediaTypeError("strategic merge patch is not supported for custom resources"));
  }
  auto body = ParseBody(call, /*allow_array=*/ct == "application/json-patch+json");
  if (!body.ok()) return ReplyError(*call.exchange, body.error());
  json patch = std::move(*body);
  const std::string manager = call.Query("fieldManager");
  if (apply && manager.empty()) {
    return ReplyError(*call.exchange, BadRequestError("PATCH requests with apply-patch need a fieldManager"));
  }
  const bool force = call.Query("force") == "true";
  const std::string now = FormatRfc3339(cluster.clock.Now());

  json intent;
  if (apply) {
    auto conformed = Conform(call, patch, true);
    if (!conformed.ok()) return ReplyError(*call.exchange, conformed.error());
    intent = std::move(*conformed);
    if (!cluster.storage.Get(t.key(), call.ns, call.name)) {
      ApiError ns_problem = NamespaceProblem(cluster, t, call.ns);
      if (!ns_problem.reason.empty()) return ReplyError(*call.exchange, ns_problem);
    }
  }
  // A pod that apply creates is admitted like any other (see CreateParsed).
  std::unique_lock<std::mutex> admission;
  PodAdmissionContext admission_context;
  ResourceAmounts usage;
  if (apply && t.group.empty() && t.resource == "pods") {
    admission = std::unique_lock(pod_admission_mu);
    admission_context = PodAdmissionContextFor(call.ns);
  }
  // A service that apply creates gets its cluster IP as CreateParsed's do;
  // one patched across ExternalName is given or loses one.
  std::unique_lock<std::mutex> service_ips;
  std::set<std::uint32_t> used_service_ips;
  if (IsService(t)) {
    service_ips = std::unique_lock(service_ips_mu);
    used_service_ips = UsedServiceIps();
  }
  bool created = false;
  auto stored = cluster.storage.Mutate(
      t.key(), call.ns, call.name,
      [&](const json* current) -> ApiResult<Mutation> {
        if (!current && !apply) return NotFoundError(t.resource, t.group, call.name);
        if (apply) {
          ApplyRequest req{current, &intent, manager, force, call.api_version(), now, t.resource, t.group, call.name};
          KUBESIM_ASSIGN_OR_RETURN(json applied, ServerSideApply(req));
          if (!current) {
            created = true;
            KUBESIM_ASSIGN_OR_RETURN(json fresh, PrepareNew(cluster, t, std::move(applied)));
            if (service_ips.owns_lock()) {
              KUBESIM_ASSIGN_OR_RETURN(fresh, AllocateServiceIp(cluster, t, std::move(fresh), used_service_ips));
            }
            if (!admission.owns_lock()) return Put(std::move(fresh));
            KUBESIM_ASSIGN_OR_RETURN(AdmittedPod admitted, AdmitPod(std::move(fresh), admission_context));
            usage = std::move(admitted.usage);
            return Put(std::move(admitted.pod));
          }
          return FinishUpdate(cluster, t, *current, std::move(applied), call.subresource, "", call.api_version(),
                              service_ips.owns_lock() ? &used_service_ips : nullptr);
        }
        KUBESIM_ASSIGN_OR_RETURN(json p, ct == "application/merge-patch+json" ? ApplyMergePatch(*current, patch)
                                         : ct == "application/json-patch+json"
                                             ? ApplyJsonPatch(*current, patch)
                                             : ApplyStrategicMergePatch(*current, patch));
        if (!p.is_object() || !p.contains("metadata") || !p["metadata"].is_object()) {
          return BadRequestError("the patch removed the object's metadata");
        }
        if (p["metadata"].value("name", "") != call.name) {
          return BadRequestError("the name of the object cannot be changed by a patch");
        }
        if (ApiError strict = DropOrRefuseUndeclaredFields(call, p); !strict.reason.empty()) return strict;
        // A resourceVersion in a patch is a precondition; without one the
        // patch applies to whatever is current.
        if (!patch.is_object() || !patch.contains("metadata") || !patch["metadata"].contains("resourceVersion")) {
          p["metadata"]["resourceVersion"] = (*current)["metadata"].value("resourceVersion", "");
        }
        return FinishUpdate(cluster, t, *current, std::move(p), call.subresource, manager, call.api_version(),
                            service_ips.owns_lock() ? &used_service_ips : nullptr);
      },
      call.DryRun());
  if (admission.owns_lock() && created && stored.ok() && !call.DryRun()) ChargeQuotas(call.ns, usage, false);
  if (admission.owns_lock()) admission.unlock();
  if (!stored.ok()) return ReplyError(*call.exchange, stored.error());
  const ObjectPtr& obj = *stored;
  if (!call.DryRun()) AfterWrite(t, call.ns, obj, cluster.storage.Get(t.key(), call.ns, call.name) == nullptr);
  ReplyJson(*call.exchange, created ? 201 : 200, Encode(call, *obj));
}

ApiResult<ObjectPtr> ApiServer::Impl::DeleteOne(const ResourceType& t, const std::string& ns, const std::string& name,
                                                const json& options, bool dry_run) {
  const json pre = options.value("preconditions", json::object());
  const std::string now = FormatRfc3339(cluster.clock.Now());
  bool removed = false;
  auto result = cluster.storage.Mutate(
      t.key(), ns, name,
      [&](const json* current) -> ApiResult<Mutation> {
        if (!current) return NotFoundError(t.resource, t.group, name);
        const json& md = (*current)["metadata"];
        if (pre.contains("uid") && pre["uid"].is_string() && pre["uid"] != md.value("uid", "")) {
          return ConflictError(t.resource, t.group, name,
                               "Precondition failed: UID in precondition: " + pre["uid"].get<std::string>() +
                                   ", UID in object meta: " + md.value("uid", ""));
        }
        if (pre.contains("resourceVersion") && pre["resourceVersion"].is_string() &&
            pre["resourceVersion"] != md.value("resourceVersion", "")) {
          return ConflictError(
              t.resource, t.group, name,
              "Precondition failed: ResourceVersion in precondition: " + pre["resourceVersion"].get<std::string>() +
                  ", ResourceVersion in object meta: " + md.value("resourceVersion", ""));
        }
        const bool is_namespace = t.group.empty() && t.resource == "namespaces";
        if (HasFinalizers(*current) || is_namespace) {
          if (md.contains("deletionTimestamp")) return Mutation{};  // already being deleted
          json next = *current;
          next["metadata"]["deletionTimestamp"] = now;
          next["metadata"]["deletionGracePeriodSeconds"] = 0;
          if (is_namespace) next["status"]["phase"] = "Terminating";
          return Put(std::move(next));
        }
        removed = true;
        return Mutation{Mutation::Kind::kDelete, {}};
      },
      dry_run);
  if (!result.ok() || dry_run) return result;
  const ObjectPtr& obj = *result;
  if (t.group.empty() && t.resource == "namespaces") {
    DeleteNamespaceContents(name);
    MaybeFinalizeNamespace(name);
  }
  if (removed && options.value("propagationPolicy", "Background") != "Orphan") {
    // Garbage collection of dependents, done at once.
    const std::string uid = (*obj)["metadata"].value("uid", "");
    for (const auto& dt : cluster.registry.All()) {
      if (!dt->namespaced || ns.empty()) continue;
      auto owned = cluster.storage.List(
          dt->key(), ns,
          [&](const json& o) {
            for (const auto& ref : o["metadata"].value("ownerReferences", json::array()))
              if (ref.value("uid", "") == uid) return true;
            return false;
          },
          0, "");
      for (const auto& d : owned.items)
        (void)DeleteOne(*dt, ns, (*d)["metadata"].value("name", ""), json::object(), false);
    }
  }
  AfterWrite(t, ns, obj, removed);
  return result;
}

// DeleteOptions from the body, bounded as every body is (they are copied
// and compared recursively); a body that is not an object is ignored.
static ApiResult<json> DeleteOptionsOf(const Call& call) {
  json options = json::object();
  if (!call.request.body().empty()) {
    auto body = ParseJsonOrYaml(call.request.body());
    if (!body.ok()) return body;
    if (body->is_object()) options = std::move(*body);
  }
  if (std::string p = call.Query("propagationPolicy"); !p.empty()) options["propagationPolicy"] = p;
  return options;
}

void ApiServer::Impl::Delete(Call& call) {
  auto options = DeleteOptionsOf(call);
  if (!options.ok()) return ReplyError(*call.exchange, options.error());
  auto result = DeleteOne(*call.type, call.ns, call.name, *options, call.DryRun());
  if (!result.ok()) return ReplyError(*call.exchange, result.error());
  ReplyJson(*call.exchange, 200, Encode(call, **result));
}

void ApiServer::Impl::DeleteCollection(Call& call) {
  auto labels = LabelSelector::Parse(call.Query("labelSelector"));
  if (!labels.ok()) return ReplyError(*call.exchange, labels.error());
  auto fields = FieldSelector::Parse(call.Query("fieldSelector"));
  if (!fields.ok()) return ReplyError(*call.exchange, fields.error());
  const auto& ls = *labels;
  const auto& fs = *fields;
  auto matching = cluster.storage.List(
      call.type->key(), call.ns,
      [&](const json& o) { return ls.Matches(o["metadata"].value("labels", json())) && fs.Matches(o); }, 0, "");
  auto options = DeleteOptionsOf(call);
  if (!options.ok()) return ReplyError(*call.exchange, options.error());
  std::string body = "{\"kind\":" + JsonString(call.type->list_kind()) +
                     ",\"apiVersion\":" + JsonString(call.api_version()) + ",\"metadata\":{},\"items\":[";
  bool first = true;
  for (const auto& o : matching.items) {
    auto r = DeleteOne(*call.type, (*o)["metadata"].value("namespace", ""), (*o)["metadata"].value("name", ""),
                       *options, call.DryRun());
    if (!r.ok()) continue;  // deleted meanwhile
    body += (first ? "" : ",") + Encode(call, **r);
    first = false;
  }
  body += "]}";
  ReplyJson(*call.exchange, 200, std::move(body));
}

void ApiServer::Impl::Bind(Call& call) {
  auto body = ParseBody(call);
  if (!body.ok()) return ReplyError(*call.exchange, body.error());
  const json& binding = *body;
  std::string node = binding.value("target", json::object()).value("name", "");
  if (node.empty()) {
    return ReplyError(*call.exchange, InvalidError("Binding", "", call.name,
                                                   {{"FieldValueRequired", "Required value", "target.name"}}));
  }
  const std::string now = FormatRfc3339(cluster.clock.Now());
  auto result = cluster.storage.Mutate(
      "pods", call.ns, call.name,
      [&](const json* current) -> ApiResult<Mutation> {
        if (!current) return NotFoundError("pods", "", call.name);
        std::string bound = current->value("spec", json::object()).value("nodeName", "");
        if (!bound.empty()) {
          return ConflictError("pods", "", call.name,
                               "pod " + call.name + " is already assigned to node \"" + bound + "\"");
        }
        json next = *current;
        next["spec"]["nodeName"] = node;
        json& conditions = next["status"]["conditions"];
        if (!conditions.is_array()) conditions = json::array();
        conditions.push_back({{"type", "PodScheduled"}, {"status", "True"}, {"lastTransitionTime", now}});
        return Put(std::move(next));
      },
      call.DryRun());
  if (!result.ok()) return ReplyError(*call.exchange, result.error());
  ReplyJson(
      *call.exchange, 201,
      json{{"kind", "Status"}, {"apiVersion", "v1"}, {"metadata", json::object()}, {"status", "Success"}, {"code", 201}}
          .dump());
}

namespace {

// The kind a CustomResourceDefinition adds, when it is complete.
void RegisterCustomResource(ResourceRegistry& registry, const json& crd_object) {
  const json spec = crd_object.value("spec", json::object());
  const json names = spec.value("names", json::object());
  ResourceType crd;
  crd.group = spec.value("group", "");
  crd.resource = names.value("plural", "");
  crd.singular = names.value("singular", "");
  crd.kind = names.value("kind", "");
  crd.short_names = names.value("shortNames", std::vector<std::string>{});
  crd.namespaced = spec.value("scope", "Namespaced") == "Namespaced";
  crd.from_crd = true;
  for (const auto& v : spec.value("versions", json::array())) {
    if (!v.value("served", true)) continue;
    bool storage_version = v.value("storage", false);
    std::string name = v.value("name", "");
    if (storage_version) crd.versions.insert(crd.versions.begin(), name);
    else crd.versions.push_back(name);
    if (v.value("subresources", json::object()).contains("status")) crd.has_status = true;
  }
  if (!crd.versions.empty() && !crd.kind.empty()) registry.Register(std::move(crd));
}

}  // namespace

void ApiServer::RestoreCustomResourceTypes() {
  auto crds = impl_->cluster.storage.List("customresourcedefinitions.apiextensions.k8s.io", "", nullptr, 0, "");
  for (const auto& crd : crds.items) RegisterCustomResource(impl_->cluster.registry, *crd);
}

void ApiServer::Impl::AfterWrite(const ResourceType& t, const std::string& ns, const ObjectPtr& obj, bool deleted) {
  if (t.group == "apiextensions.k8s.io" && t.resource == "customresourcedefinitions") {
    const json spec = obj->value("spec", json::object());
    const json names = spec.value("names", json::object());
    const std::string group = spec.value("group", "");
    const std::string plural = names.value("plural", "");
    if (deleted) {
      cluster.registry.Unregister(group, plural);
      cluster.storage.DropType(group.empty() ? plural : plural + "." + group);
      return;
    }
    RegisterCustomResource(cluster.registry, *obj);
    return;
  }
  if (t.group.empty() && t.resource == "pods") SyncQuotas();
  if (t.group.empty() && t.resource == "resourcequotas" && !deleted) RefreshQuotas(ns);
  if (deleted && t.namespaced && !ns.empty()) {
    ObjectPtr n = cluster.storage.Get("namespaces", "", ns);
    if (n && (*n)["metadata"].contains("deletionTimestamp")) MaybeFinalizeNamespace(ns);
  }
}

void ApiServer::Impl::DeleteNamespaceContents(const std::string& ns) {
  for (const auto& t : cluster.registry.All()) {
    if (!t->namespaced) continue;
    auto objects = cluster.storage.List(t->key(), ns, nullptr, 0, "");
    for (const auto& o : objects.items)
      (void)DeleteOne(*t, ns, (*o)["metadata"].value("name", ""), json::object(), false);
  }
}

void ApiServer::Impl::MaybeFinalizeNamespace(const std::string& ns) {
  for (const auto& t : cluster.registry.All()) {
    if (t->namespaced && !cluster.storage.List(t->key(), ns, nullptr, 1, "").items.empty()) return;
  }
  (void)cluster.storage.Mutate("namespaces", "", ns, [&](const json* current) -> ApiResult<Mutation> {
    if (!current || !(*current)["metadata"].contains("deletionTimestamp")) return Mutation{};
    return Mutation{Mutation::Kind::kDelete, {}};
  });
}

}  // namespace septa::kubesim
