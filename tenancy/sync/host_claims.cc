#include "tenancy/sync/host_claims.h"

#include "tenancy/sync/bookkeeping.h"
#include "tenancy/sync/host_keys.h"
#include "tenancy/sync/pod_references.h"

namespace septa::tenancy::sync {
namespace {

using nlohmann::json;

// The spec fields a host copy takes from its virtual claim as they are.
constexpr const char* kClaimSpecFields[] = {"accessModes", "resources", "storageClassName", "volumeMode"};
// The status fields copied up.
constexpr const char* kClaimStatusFields[] = {"phase", "accessModes", "capacity", "conditions", "allocatedResources"};

// Whether `spec.<field>` asks for something: not absent, null, "" or empty.
bool Given(const json& spec, const char* field) {
  const json value = ComparedField(spec, field);
  return !value.is_null() && value != "";
}

// `spec.<field>` (dataSource or dataSourceRef) as the host copy has it: a
// claim of the same namespace renamed to its copy; anything else refused.
std::variant<json, Refusal> HostDataSource(const json& source, std::string_view field, std::string_view ns,
                                           std::string_view vcluster) {
  const std::string path = "spec." + std::string(field);
  auto string_at = [&source](const char* key) {
    auto it = source.find(key);
    return it != source.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  const json group = ComparedField(source, "apiGroup");  // a claim is of the core group: none or ""
  if (!source.is_object() || string_at("kind") != kClaimKind || !(group.is_null() || group == "") ||
      string_at("name").empty()) {
    return Refusal{path,
                   "a claim's data source may only be another claim of its namespace: snapshots and volume "
                   "populators are not synced to the host"};
  }
  if (Given(source, "namespace") && string_at("namespace") != ns) {
    return Refusal{path + ".namespace", "a claim's data source must be in the claim's own namespace"};
  }
  return json{{"kind", kClaimKind}, {"name", HostObjectName(string_at("name"), ns, vcluster)}};
}

}  // namespace

Result<HostClaimResult> HostClaim(const VirtualClusterView& vcluster, const json& virtual_claim) {
  const json meta = virtual_claim.is_object() ? virtual_claim.value("metadata", json::object()) : json::object();
  for (const char* field : {"name", "namespace", "uid"}) {
    if (!meta.contains(field) || !meta[field].is_string() || meta[field].get<std::string>().empty())
      return Status(Code::kInvalidArgument,
                    std::string(kClaimKind) + " metadata." + field + ": missing (a virtual object has one)");
  }
  if (auto refusal = CheckTenantKeys(meta, vcluster.integration_domains)) return HostClaimResult(*refusal);
  const json spec = SpecOf(virtual_claim);
  if (Given(spec, "volumeName")) {
    return HostClaimResult(Refusal{"spec.volumeName",
                                   "a virtual cluster's claim may not name a host PersistentVolume: it could bind "
                                   "another tenant's released volume; its storage class provisions one"});
  }
  if (Given(spec, "selector")) {
    return HostClaimResult(Refusal{"spec.selector",
                                   "a virtual cluster's claim may not select host PersistentVolumes by label: it "
                                   "could bind another tenant's released volume"});
  }
  json host_spec = json::object();
  for (const char* field : kClaimSpecFields) {
    if (spec.contains(field) && !spec[field].is_null()) host_spec[field] = spec[field];
  }
  for (const char* field : {"dataSource", "dataSourceRef"}) {
    if (!Given(spec, field)) continue;
    auto source = HostDataSource(spec[field], field, meta["namespace"].get<std::string>(), vcluster.vcluster);
    if (auto* refusal = std::get_if<Refusal>(&source)) return HostClaimResult(*std::move(refusal));
    host_spec[field] = std::get<json>(std::move(source));
  }
  return HostClaimResult(json{
      {"apiVersion", "v1"},
      {"kind", std::string(kClaimKind)},
      {"metadata", HostMetadata(kClaimKind, meta, vcluster.tenant, vcluster.vcluster, vcluster.host_namespace,
                                vcluster.integration_domains, {"kubectl.kubernetes.io/last-applied-configuration"})},
      {"spec", std::move(host_spec)}});
}

bool ClaimUpToDate(const json& want, const json& host_claim) {
  if (!LabelsAndAnnotationsEqual(want, host_claim)) return false;
  return ComparedField(SpecOf(want), "resources") == ComparedField(SpecOf(host_claim), "resources");
}

json ClaimUpdate(const json& want, const json& host_claim) {
  json update = host_claim;
  for (const char* map : {"labels", "annotations"}) {
    const json value = ComparedField(want.value("metadata", json::object()), map);
    if (value.is_null()) {
      update["metadata"].erase(map);
    } else {
      update["metadata"][map] = value;
    }
  }
  if (json resources = ComparedField(SpecOf(want), "resources"); !resources.is_null()) {
    update["spec"]["resources"] = std::move(resources);
  }
  return update;
}

std::optional<json> ClaimStatusUp(const json& virtual_claim, const json& host_claim) {
  const json host_status = host_claim.value("status", json::object());
  const json virtual_status = virtual_claim.value("status", json::object());
  bool same = true;
  for (const char* field : kClaimStatusFields) {
    same = same && ComparedField(host_status, field) == ComparedField(virtual_status, field);
  }
  if (same) return std::nullopt;
  json status = virtual_status.is_object() ? virtual_status : json::object();
  for (const char* field : kClaimStatusFields) {
    if (json value = ComparedField(host_status, field); value.is_null()) {
      status.erase(field);
    } else {
      status[field] = std::move(value);
    }
  }
  return status;
}

std::optional<Refusal> EphemeralClaimOfAnother(
    const json& virtual_pod, const std::function<std::optional<json>(const std::string& name)>& claim_named) {
  const json spec = SpecOf(virtual_pod);
  const auto volumes = spec.find("volumes");
  if (volumes == spec.end() || !volumes->is_array()) return std::nullopt;
  const std::string pod = MetadataField(virtual_pod, "name"), uid = MetadataField(virtual_pod, "uid");
  for (std::size_t i = 0; i < volumes->size(); ++i) {
    const json& volume = (*volumes)[i];
    if (!volume.is_object() || !volume.contains("ephemeral") || !volume.value("name", json()).is_string()) continue;
    const std::string claim = EphemeralClaimName(pod, volume["name"].get<std::string>());
    const std::optional<json> found = claim_named(claim);
    if (!found) continue;
    // Its controller: the pod it was created for.
    std::string owner;
    bool own = false;
    for (const json& ref : found->value("metadata", json::object()).value("ownerReferences", json::array())) {
      if (!ref.is_object() || !ref.value("controller", false)) continue;
      own = ref.value("kind", "") == "Pod" && ref.value("uid", "") == uid;
      owner = ref.value("kind", "") + " " + ref.value("name", "");
    }
    if (own) continue;
    return Refusal{"spec.volumes[" + std::to_string(i) + "].ephemeral",
                   "its claim " + claim + " was not created for this pod" +
                       (owner.empty() ? std::string() : " but for " + owner) + " (\"" + pod + "\" with volume \"" +
                       volume["name"].get<std::string>() +
                       "\" and another pod and volume name one claim): rename the pod or the volume"};
  }
  return std::nullopt;
}

}  // namespace septa::tenancy::sync
