// The syncer's translation of a virtual cluster's pod to its host pod and of
// the host pod's status back (../shared/docs/SYNCER-FACTS.md), with the tier
// patches that are Septa's core: runtime class, GPU resources rewritten to
// what the reservation holds, scheduler and queue, and the pod pinned inside
// the reservation. Pure and deterministic: same inputs, same JSON.
//
// The host pods are the record of what the virtual cluster's pods use of its
// reservation (their `septa.dev/` assignment annotations, AssignmentOf): a
// restarted syncer reads them back and places the next pod around them.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "gpu/inventory.h"
#include "tenancy/host/config.h"
#include "tenancy/reservation.h"
#include "tenancy/trust_tier.h"

namespace septa::tenancy::sync {

// How shared-tier fractions are handed to the host's GPU stack; one type
// with the provisioner's rendering, which sizes the quota by it.
using FractionBackend = host::FractionBackend;

// septad's configuration of the syncer, the same for every virtual cluster.
struct SyncSettings {
  host::Scheduler scheduler = host::Scheduler::kKai;  // the provisioner's
  // `none` in the words: no scheduler admits pods, so the syncer
  // binds them itself with spec.nodeName (never otherwise).
  bool bind_node_name = false;
  FractionBackend fraction_backend = FractionBackend::kKai;
  // What a shared pod that asks for `nvidia.com/gpu: 1` and no fraction gets.
  int default_fraction_milli = 250;
  // The virtual API server and DNS as host pods reach them.
  std::string virtual_api_host = "127.0.0.1";
  int virtual_api_port = 6444;
  std::string dns_nameserver;  // empty: DNS is not rewritten
  std::string cluster_domain = "cluster.local";
};

// One virtual cluster, as the syncer sees it when it translates its pods.
struct VirtualClusterView {
  std::string tenant;
  std::string vcluster;
  std::string host_namespace;
  TrustTier tier;                  // runtime_class, gpu_sharing, credential cap
  std::string psa_level;           // privileged | baseline | restricted (host::PsaLevel)
  bool external_services = false;  // NodePort and LoadBalancer services (host::ExternalServicesAllowed)
  // The host integrations whose keys its objects may carry to the host
  // (host_keys.h; host::IntegrationDomainsAllowed).
  std::set<std::string> integration_domains;
  Reservation reservation;
  std::vector<gpu::InventoryNode> nodes;  // the nodes the reservation names (GPU UUIDs, products)
};

// What one synced pod uses of the reservation, as recorded on its host pod.
struct PodAssignment {
  std::string node;
  std::vector<int> gpus;    // GPU indices on the node (dedicated, shared; empty for exclusive: any)
  std::string mig_profile;  // isolated
  int mig_count = 0;
  int milli_gpu = 0;  // shared, per GPU
  std::int64_t gpu_memory_mib = 0;
  int whole_gpus = 0;  // exclusive: GPUs used on the node, any of them
  // What the pod requests of the node's CPU and memory, counted against the
  // reservation's share of the node (node_share.h).
  std::int64_t cpu_milli = 0;
  std::int64_t memory_mib = 0;
  bool operator==(const PodAssignment&) const = default;
};

// Why a pod is not synced: the field of the virtual pod and what limits it
// ("spec.containers[0].resources.limits[nvidia.com/gpu]: 2 GPUs requested,
// the reservation has 1 free of 1"), for the SyncRefused event and condition.
struct Refusal {
  std::string field;
  std::string message;
  bool operator==(const Refusal&) const = default;
};

struct HostPod {
  nlohmann::json object;  // the host pod to create, names and references rewritten
  PodAssignment assignment;
};

// The host pod for `virtual_pod`, placed around `others` (the assignments of
// the virtual cluster's other synced pods), or why it may not run.
std::variant<HostPod, Refusal> TranslatePodDown(const SyncSettings& settings, const VirtualClusterView& vcluster,
                                                const nlohmann::json& virtual_pod,
                                                const std::vector<PodAssignment>& others);

// The tenant's service account token. The syncer mints it through the
// virtual API (TokenRequest bound to the virtual pod, audience
// https://kubernetes.default.svc) and writes it into this host Secret (keys
// token, ca.crt, namespace), which TranslatePodDown mounts at
// /var/run/secrets/kubernetes.io/serviceaccount in place of the virtual pod's
// serviceAccountToken projection, or into every container when the virtual
// pod has none and does not opt out (automountServiceAccountToken: false).
// Named by the virtual pod's UID: "septa-sa-token-<uid>" never equals a
// HostObjectName (those contain "-x-" or are 63 characters long).
std::string TokenSecretName(std::string_view virtual_pod_uid);
// Whether the host pod mounts the token (the syncer then mints it).
bool MountsServiceAccountToken(const nlohmann::json& virtual_pod);
// The lifetime the virtual pod asks (its serviceAccountToken projection's
// expirationSeconds), if it asks one.
std::optional<std::int64_t> RequestedTokenExpiration(const nlohmann::json& virtual_pod);
// What to ask the virtual API for: `requested` (Kubernetes' default 3607 s
// when absent) capped by the tier's credential_ttl_max_seconds (no cap when
// that is 0), raised to Kubernetes' minimum of 600 s below the cap. vCluster ignores the
// request and mints 10-year tokens.
std::int64_t TokenExpirationSeconds(std::optional<std::int64_t> requested, const TrustTier& tier);

// The assignment a host pod written by TranslatePodDown records; nullopt
// when it records none (not a synced pod, or its annotations were edited).
std::optional<PodAssignment> AssignmentOf(const nlohmann::json& host_pod);

// The virtual pod's status from the host pod's: phase, conditions, IPs,
// start time, container statuses filtered to the virtual spec's containers
// (sidecars injected on the host stay hidden), the virtual QoS class kept.
nlohmann::json StatusUp(const nlohmann::json& virtual_pod, const nlohmann::json& host_pod);

// After creation: a JSON merge patch that brings the host pod to what the
// virtual pod now asks (images, activeDeadlineSeconds, tolerations as a
// union, scheduling gates and labels/annotations merged three-way: the host
// pod records which keys were copied from the virtual one, so a key deleted
// there is deleted here and keys the host side added — Kueue's admission
// gate — survive); keys that may not reach the host (host_keys.h, with the
// integration domains `integrations` allowed) are never copied, whenever
// the tenant adds them; nullopt when nothing changes.
std::optional<nlohmann::json> HostPodPatch(const nlohmann::json& virtual_pod, const nlohmann::json& host_pod,
                                           const std::set<std::string>& integrations);

}  // namespace septa::tenancy::sync
