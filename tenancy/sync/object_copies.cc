#include "tenancy/sync/object_copies.h"

#include <string>

#include "tenancy/sync/bookkeeping.h"

namespace septa::tenancy::sync {
namespace {

using nlohmann::json;

constexpr const char* kServiceAccountTokenType = "kubernetes.io/service-account-token";

// What a copy carries besides metadata.
constexpr const char* kContentFields[] = {"data", "binaryData", "type", "immutable"};

}  // namespace

std::string_view KindName(CopiedKind kind) { return kind == CopiedKind::kConfigMap ? "ConfigMap" : "Secret"; }

Result<json> HostCopy(CopiedKind kind, const VirtualClusterView& vcluster, const json& virtual_object) {
  const json meta = virtual_object.is_object() ? virtual_object.value("metadata", json::object()) : json::object();
  for (const char* field : {"name", "namespace", "uid"}) {
    if (!meta.contains(field) || !meta[field].is_string() || meta[field].get<std::string>().empty())
      return Status(Code::kInvalidArgument,
                    std::string(KindName(kind)) + " metadata." + field + ": missing (a virtual object has one)");
  }
  json copy = {
      {"apiVersion", "v1"},
      {"kind", std::string(KindName(kind))},
      {"metadata", HostMetadata(KindName(kind), meta, vcluster.tenant, vcluster.vcluster, vcluster.host_namespace,
                                vcluster.integration_domains, {"kubectl.kubernetes.io/last-applied-configuration"})}};
  for (const char* field : kContentFields) {
    if (virtual_object.contains(field) && !virtual_object[field].is_null()) copy[field] = virtual_object[field];
  }
  // On the host, a service-account token Secret is filled by the host's
  // token controller with a token of the host's service account it names;
  // the copy carries the virtual cluster's token as plain data instead.
  if (kind == CopiedKind::kSecret && copy.value("type", "") == kServiceAccountTokenType) copy["type"] = "Opaque";
  return copy;
}

bool CopyUpToDate(const json& want, const json& host_copy) {
  if (!LabelsAndAnnotationsEqual(want, host_copy)) return false;
  for (const char* field : kContentFields) {
    if (ComparedField(want, field) != ComparedField(host_copy, field)) return false;
  }
  return true;
}

}  // namespace septa::tenancy::sync
