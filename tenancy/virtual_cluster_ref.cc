#include "tenancy/virtual_cluster_ref.h"

namespace septa::tenancy {

std::string VirtualClusterText(std::string_view tenant, std::string_view vcluster) {
  std::string text;
  text.reserve(tenant.size() + 1 + vcluster.size());
  text.append(tenant).append("/").append(vcluster);
  return text;
}

std::string VirtualClusterResource(std::string_view tenant, std::string_view vcluster) {
  return "tenants/" + std::string(tenant) + "/vclusters/" + std::string(vcluster);
}

std::optional<VirtualClusterRef> ParseVirtualClusterRef(std::string_view text) {
  const std::size_t slash = text.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == text.size()) return std::nullopt;
  if (text.find('/', slash + 1) != std::string_view::npos) return std::nullopt;
  return VirtualClusterRef{std::string(text.substr(0, slash)), std::string(text.substr(slash + 1))};
}

}  // namespace septa::tenancy
