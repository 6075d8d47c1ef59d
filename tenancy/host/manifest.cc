#include "tenancy/host/manifest.h"

namespace septa::tenancy::host {

std::map<std::string, std::string> VClusterLabels(std::string_view tenant, std::string_view vcluster) {
  return {
      {kManagedByLabel, kManagedByValue}, {kTenantLabel, std::string(tenant)}, {kVClusterLabel, std::string(vcluster)}};
}

std::map<std::string, std::string> SharedLabels() {
  return {{kManagedByLabel, kManagedByValue}, {kSharedLabel, "true"}};
}

nlohmann::json Manifest(std::string_view api_version, std::string_view kind, std::string_view name, std::string_view ns,
                        const std::map<std::string, std::string>& labels) {
  nlohmann::json meta = {{"name", name}, {"labels", labels}};
  if (!ns.empty()) meta["namespace"] = ns;
  return {{"apiVersion", api_version}, {"kind", kind}, {"metadata", std::move(meta)}};
}

nlohmann::json HostDnsEgress() {
  nlohmann::json ports = nlohmann::json::array();
  for (const char* protocol : {"UDP", "TCP"}) ports.push_back({{"protocol", protocol}, {"port", 53}});
  return {{"to", nlohmann::json::array(
                     {{{"namespaceSelector", {{"matchLabels", {{"kubernetes.io/metadata.name", "kube-system"}}}}},
                       {"podSelector", {{"matchLabels", {{"k8s-app", "kube-dns"}}}}}}})},
          {"ports", std::move(ports)}};
}

}  // namespace septa::tenancy::host
