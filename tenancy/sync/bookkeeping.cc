#include "tenancy/sync/bookkeeping.h"

#include <algorithm>
#include <vector>

#include "tenancy/host/names.h"

namespace septa::tenancy::sync {
namespace {

std::string StringAt(const nlohmann::json& object, std::string_view section, std::string_view key) {
  const auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return "";
  const auto map = meta->find(section);
  if (map == meta->end() || !map->is_object()) return "";
  const auto value = map->find(key);
  return value != map->end() && value->is_string() ? value->get<std::string>() : "";
}

std::string MetaString(const nlohmann::json& object, std::string_view key) {
  const auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return "";
  const auto value = meta->find(key);
  return value != meta->end() && value->is_string() ? value->get<std::string>() : "";
}

}  // namespace

std::string JoinCopiedKeys(const std::set<std::string>& keys) {
  std::string out;
  for (const std::string& key : keys) out += (out.empty() ? "" : ",") + key;
  return out;
}

std::set<std::string> SplitCopiedKeys(std::string_view value) {
  std::set<std::string> out;
  std::size_t start = 0;
  while (start < value.size()) {
    const std::size_t end = std::min(value.find(',', start), value.size());
    if (end > start) out.emplace(value.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

std::string HostObjectName(std::string_view name, std::string_view ns, std::string_view vcluster) {
  return host::SafeConcat({name, "x", ns, "x", vcluster});
}

std::optional<VirtualRef> VirtualRefOf(const nlohmann::json& host_object, std::string_view tenant,
                                       std::string_view vcluster) {
  if (StringAt(host_object, "labels", kSyncedLabel) != "true" ||
      StringAt(host_object, "labels", kTenantLabel) != tenant ||
      StringAt(host_object, "labels", kVclusterLabel) != vcluster)
    return std::nullopt;
  if (StringAt(host_object, "annotations", kHostNameAnnotation) != MetaString(host_object, "name") ||
      StringAt(host_object, "annotations", kHostNamespaceAnnotation) != MetaString(host_object, "namespace"))
    return std::nullopt;
  VirtualRef ref{StringAt(host_object, "annotations", kVirtualNamespaceAnnotation),
                 StringAt(host_object, "annotations", kVirtualNameAnnotation),
                 StringAt(host_object, "annotations", kVirtualUidAnnotation)};
  if (ref.ns.empty() || ref.name.empty() || ref.uid.empty()) return std::nullopt;
  return ref;
}

}  // namespace septa::tenancy::sync
