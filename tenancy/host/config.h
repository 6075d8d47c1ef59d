// How septad renders host objects: the scheduler it drives, Pod Security
// levels by trust tier, where the virtual control plane listens (for the
// network policy), the syncer's identity and the container defaults.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>

#include "common/status.h"
#include "tenancy/trust_tier.h"

namespace septa::tenancy::host {

enum class Scheduler { kDefault, kKai, kKueue };
std::string_view SchedulerName(Scheduler scheduler);  // "default", "kai", "kueue"
// "kai" | "kueue" | "default"; INVALID_ARGUMENT naming `field` otherwise.
Result<Scheduler> ParseScheduler(std::string_view field, std::string_view text);

// How shared-tier GPU fractions reach the host's GPU stack: KAI's
// `gpu-fraction` annotations (no extended resource), or HAMi's vGPUs (each
// pod takes one `nvidia.com/gpu` slot plus `nvidia.com/gpumem`/`gpucores`).
enum class FractionBackend { kKai, kHami };

struct RenderConfig {
  Scheduler scheduler = Scheduler::kDefault;
  // With HAMi, a shared tenant's ResourceQuota cannot pin nvidia.com/gpu at
  // 0 (every fractional pod asks one vGPU slot); Septa's syncer enforces the
  // milli-GPU budget itself either way.
  FractionBackend fraction_backend = FractionBackend::kKai;
  // Pod Security level ("privileged" | "baseline" | "restricted") by trust
  // tier name; a tier not listed gets DefaultPsaLevel of its GPU sharing.
  std::map<std::string, std::string> psa_levels;
  // The trust tiers whose virtual clusters may have NodePort and
  // LoadBalancer services on the host. Such a service opens a port on every
  // host node (or a cloud load balancer) to the outside, which on a shared
  // host is not one tenant's decision: any other tier's namespace quota
  // holds services.nodeports and services.loadbalancers at 0, and the
  // syncer refuses them with an event.
  std::set<std::string> external_service_tiers;
  // By trust tier, the host integrations (tenancy/sync/host_keys.h: external
  // DNS, load balancers, certificates, service meshes...) whose label and
  // annotation keys its virtual clusters' objects may carry to the host,
  // where a controller of the platform's acts on them. None by default.
  std::map<std::string, std::set<std::string>> integration_domains;
  // The virtual API server as the host's pods reach it: an IP address or a
  // CIDR, and its port; and the port the virtual cluster's DNS listens on
  // (vCluster's is 1053).
  std::string virtual_api_address = "127.0.0.1";
  int virtual_api_port = 6444;
  int dns_port = 1053;
  // Who applies the objects (server-side apply's field manager).
  std::string field_manager = "septa";
  // The syncer's identity on the host; its Role is bound to this subject.
  std::string syncer_user = "septa-syncer";
  // What a container that asks for nothing requests (LimitRange
  // defaultRequest), capped by the virtual cluster's quota.
  std::int64_t default_request_cpu_milli = 100;
  std::int64_t default_request_memory_mib = 128;
};

// baseline for shared and isolated, restricted for dedicated and exclusive.
std::string_view DefaultPsaLevel(gpu::Tier tier);
// The level `config` gives `tier`.
std::string PsaLevel(const RenderConfig& config, const TrustTier& tier);
// Whether `config` lets `tier` have NodePort and LoadBalancer services.
bool ExternalServicesAllowed(const RenderConfig& config, const TrustTier& tier);

// The integration domains `config` allows `tier`.
std::set<std::string> IntegrationDomainsAllowed(const RenderConfig& config, const TrustTier& tier);

// Every field in range; violations name the field ("psa_levels.shared",
// "virtual_api_address", "dns_port", ...).
Status ValidateRenderConfig(const RenderConfig& config);

}  // namespace septa::tenancy::host
