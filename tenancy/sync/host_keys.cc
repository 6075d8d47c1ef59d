#include "tenancy/sync/host_keys.h"

#include <algorithm>
#include <array>

#include "tenancy/host/manifest.h"

namespace septa::tenancy::sync {
namespace {

using nlohmann::json;

// Domains whose keys are the host's: Septa's own, and the schedulers' and
// device plugins' pod keys (a tenant who set them would pick its own queue,
// gang or GPU share past the reservation).
constexpr std::array<std::string_view, 8> kHostDomains = {
    "septa.dev", "kai.scheduler", "kueue.x-k8s.io",      "runai",
    "hami.io",   "nvidia.com",    "scheduling.x-k8s.io", "volcano.sh"};
// The one septa.dev domain a tenant may set: simulation knobs such as
// simulation.septa.dev/gpu-memory-mib, which only kubesim reads (its
// dcgm-exporter, docs/kubesim.md); a real host ignores them.
constexpr std::string_view kSimulationDomain = "simulation.septa.dev";
// Single keys that are the host's. Unprefixed: KAI's and Run:ai's fraction
// and group annotations. Kubernetes': the group name of the scheduler
// plugins' gangs; a Secret's service-account annotations, on which the
// host's token controller would fill a copy with a token of the host's own
// service account of that name; kube-proxy's service-proxy-name and
// headless labels, the endpoint controllers' managed-by and skip-mirror.
constexpr std::array<std::string_view, 12> kHostKeys = {"gpu-fraction",
                                                        "gpu-memory",
                                                        "gpu-fraction-num-devices",
                                                        "pod-group-name",
                                                        "runai-gpu-group",
                                                        "scheduling.k8s.io/group-name",
                                                        "kubernetes.io/service-account.name",
                                                        "kubernetes.io/service-account.uid",
                                                        "service.kubernetes.io/service-proxy-name",
                                                        "service.kubernetes.io/headless",
                                                        "endpoints.kubernetes.io/managed-by",
                                                        "endpointslice.kubernetes.io/skip-mirror"};

// Keys that make a controller on the host act: publish a name, take an
// address or a load balancer, issue a certificate, inject containers.
constexpr std::array<std::string_view, 16> kIntegrationDomains = {
    "external-dns.alpha.kubernetes.io",  // DNS records in the platform's zones
    "service.beta.kubernetes.io",        // cloud load balancers
    "cloud.google.com",
    "networking.gke.io",
    "metallb.universe.tf",  // addresses from the platform's pools
    "metallb.io",
    "ingress.kubernetes.io",  // and nginx., alb., traefik. ...
    "cert-manager.io",        // certificates from the platform's issuers
    "istio.io",               // sidecar.istio.io: injected sidecars, init containers with NET_ADMIN
    "linkerd.io",
    "kuma.io",
    "consul.hashicorp.com",
    "vault.hashicorp.com",  // the Vault agent injector, with a role the tenant names
    "admission.datadoghq.com",
    "dapr.io",
    "sidecar.opentelemetry.io"};

// "a.b/c" -> "a.b"; "" for an unprefixed key.
std::string_view DomainOf(std::string_view key) {
  const std::size_t slash = key.find('/');
  return slash == std::string_view::npos ? std::string_view() : key.substr(0, slash);
}

// `domain` is `of` or a subdomain of it.
bool InDomain(std::string_view domain, std::string_view of) {
  if (domain.size() < of.size() || domain.substr(domain.size() - of.size()) != of) return false;
  return domain.size() == of.size() || domain[domain.size() - of.size() - 1] == '.';
}

template <std::size_t N>
const std::string_view* DomainIn(std::string_view key, const std::array<std::string_view, N>& domains) {
  const std::string_view domain = DomainOf(key);
  if (domain.empty()) return nullptr;
  auto it = std::find_if(domains.begin(), domains.end(), [&](std::string_view d) { return InDomain(domain, d); });
  return it == domains.end() ? nullptr : &*it;
}

}  // namespace

bool IsHostKey(std::string_view key) {
  if (DomainOf(key) == kSimulationDomain) return false;  // knobs only a simulator reads (kubesim's dcgm-exporter)
  return DomainIn(key, kHostDomains) != nullptr ||
         std::find(kHostKeys.begin(), kHostKeys.end(), key) != kHostKeys.end();
}

bool ReservedByValue(std::string_view key, const json& value) {
  return key == host::kManagedByLabel && value.is_string() && value.get<std::string>() == host::kManagedByValue;
}

std::optional<std::string_view> IntegrationDomainOf(std::string_view key) {
  const std::string_view* domain = DomainIn(key, kIntegrationDomains);
  return domain ? std::optional<std::string_view>(*domain) : std::nullopt;
}

bool IsIntegrationDomain(std::string_view domain) {
  return std::find(kIntegrationDomains.begin(), kIntegrationDomains.end(), domain) != kIntegrationDomains.end();
}

std::string IntegrationDomainList() {
  std::string out;
  for (std::string_view domain : kIntegrationDomains) out += (out.empty() ? "" : ", ") + std::string(domain);
  return out;
}

bool CopiedToHost(std::string_view key, const json& value, const std::set<std::string>& allowed) {
  if (IsHostKey(key) || ReservedByValue(key, value)) return false;
  const auto integration = IntegrationDomainOf(key);
  return !integration || allowed.contains(std::string(*integration));
}

std::optional<Refusal> CheckTenantKeys(const json& metadata, const std::set<std::string>& allowed,
                                       const std::set<std::string, std::less<>>& inputs) {
  if (!metadata.is_object()) return std::nullopt;
  for (const char* section : {"labels", "annotations"}) {
    auto keys = metadata.find(section);
    if (keys == metadata.end() || !keys->is_object()) continue;
    const bool annotations = std::string_view(section) == "annotations";
    for (const auto& [key, value] : keys->items()) {
      if (annotations && inputs.contains(key)) continue;
      const std::string field = "metadata." + std::string(section) + "[" + key + "]";
      if (IsHostKey(key)) return Refusal{field, "the key is reserved for the host"};
      if (ReservedByValue(key, value)) {
        return Refusal{field, "the value " + value.get<std::string>() + " is reserved for the host's own objects"};
      }
      if (const auto integration = IntegrationDomainOf(key);
          integration && !allowed.contains(std::string(*integration))) {
        return Refusal{field, "keys of " + std::string(*integration) +
                                  " make a controller of the host act on the copy, which the trust tier does not "
                                  "allow (an admin allows it with integration_keys)"};
      }
    }
  }
  return std::nullopt;
}

}  // namespace septa::tenancy::sync
