#include "tenancy/host/render.h"

#include <algorithm>

#include "common/text.h"
#include "tenancy/host/gpu_holdings.h"
#include "tenancy/host/manifest.h"
#include "tenancy/host/names.h"
#include "tenancy/host/quantity.h"
#include "tenancy/host/scheduler_queues.h"
#include "tenancy/names.h"
#include "tenancy/quota.h"
#include "tenancy/validation.h"
#include "tenancy/virtual_cluster_ref.h"

namespace septa::tenancy::host {

namespace {

using nlohmann::json;
using Labels = std::map<std::string, std::string>;

json NamespaceObject(const std::string& ns, const Labels& labels, const std::string& psa_level) {
  Labels all = labels;
  for (const char* mode : {"enforce", "warn", "audit"}) {
    const std::string key = std::string("pod-security.kubernetes.io/") + mode;
    all[key] = psa_level;
    all[key + "-version"] = "latest";
  }
  return Manifest("v1", "Namespace", ns, "", all);
}

// Requests only: a limit quota would refuse every pod whose containers set
// no limit below the LimitRange's default, which is the whole quota.
json ResourceQuotaObject(const std::string& ns, const Labels& labels, const WorkloadQuota& quota,
                         const GpuHoldings& holdings, bool external_services, bool asleep) {
  json hard = json::object();
  if (!external_services) {  // RenderConfig::external_service_tiers
    hard["services.nodeports"] = "0";
    hard["services.loadbalancers"] = "0";
  }
  if (asleep) {
    hard["pods"] = std::string(kSleepingPods);
  } else if (quota.pods > 0) {
    hard["pods"] = std::to_string(quota.pods);
  }
  if (quota.cpu_milli > 0) hard["requests.cpu"] = CpuQuantity(quota.cpu_milli);
  if (quota.memory_mib > 0) hard["requests.memory"] = MemoryQuantity(quota.memory_mib);
  // Extended resources take only the requests. form in a quota.
  for (const auto& [resource, count] : holdings.resources) hard["requests." + resource] = std::to_string(count);
  json out = Manifest("v1", "ResourceQuota", kResourceQuotaName, ns, labels);
  out["spec"] = {{"hard", std::move(hard)}};
  return out;
}

// A container that asks for nothing gets the configured request (never
// more than the quota), so the quota admits it; one that sets no limit gets
// the whole quota as its limit, which no request the quota admits exceeds.
json LimitRangeObject(const std::string& ns, const Labels& labels, const WorkloadQuota& quota,
                      const RenderConfig& config) {
  std::int64_t cpu_request = config.default_request_cpu_milli;
  std::int64_t memory_request = config.default_request_memory_mib;
  json limit = json::object();
  if (quota.cpu_milli > 0) {
    cpu_request = std::min(cpu_request, quota.cpu_milli);
    limit["cpu"] = CpuQuantity(quota.cpu_milli);
  }
  if (quota.memory_mib > 0) {
    memory_request = std::min(memory_request, quota.memory_mib);
    limit["memory"] = MemoryQuantity(quota.memory_mib);
  }
  json item = {{"type", "Container"},
               {"defaultRequest", {{"cpu", CpuQuantity(cpu_request)}, {"memory", MemoryQuantity(memory_request)}}}};
  if (!limit.empty()) item["default"] = std::move(limit);
  json out = Manifest("v1", "LimitRange", kLimitRangeName, ns, labels);
  out["spec"] = {{"limits", json::array({std::move(item)})}};
  return out;
}

std::string Cidr(const std::string& address) {
  if (address.find('/') != std::string::npos) return address;
  return address + (address.find(':') != std::string::npos ? "/128" : "/32");
}

std::vector<json> NetworkPolicies(const std::string& ns, const Labels& labels, const RenderConfig& config) {
  const json all_pods = {{"podSelector", json::object()}};
  const json both = json::array({"Ingress", "Egress"});
  json deny = Manifest("networking.k8s.io/v1", "NetworkPolicy", kDefaultDenyPolicyName, ns, labels);
  deny["spec"] = {{"podSelector", json::object()}, {"policyTypes", both}};

  json egress = json::array();
  // The namespace's own pods: with control_plane host, the virtual cluster's
  // CoreDNS and API server among them.
  egress.push_back({{"to", json::array({all_pods})}});
  egress.push_back(HostDnsEgress());  // the cluster DNS the pods otherwise use, and nothing else on its port
  egress.push_back(
      {{"to", json::array({{{"ipBlock", {{"cidr", Cidr(config.virtual_api_address)}}}}})},
       {"ports", json::array({{{"protocol", "TCP"}, {"port", config.virtual_api_port}}})}});  // the virtual API server
  json allow = Manifest("networking.k8s.io/v1", "NetworkPolicy", kAllowPolicyName, ns, labels);
  allow["spec"] = {{"podSelector", json::object()},
                   {"policyTypes", both},
                   {"ingress", json::array({{{"from", json::array({all_pods})}}})},
                   {"egress", std::move(egress)}};
  return {std::move(deny), std::move(allow)};
}

std::vector<json> Rbac(const std::string& ns, const Labels& labels, const RenderConfig& config) {
  // Synced pods run as this account: no token, and no binding grants it anything.
  json account = Manifest("v1", "ServiceAccount", kWorkloadServiceAccountName, ns, labels);
  account["automountServiceAccountToken"] = false;

  const json all = {"get", "list", "watch", "create", "update", "patch", "delete"};
  json rules = json::array();
  rules.push_back({{"apiGroups", json::array({""})},
                   {"resources", {"configmaps", "endpoints", "persistentvolumeclaims", "pods", "secrets", "services"}},
                   {"verbs", all}});
  rules.push_back({{"apiGroups", json::array({""})},
                   {"resources", json::array({"pods/status"})},
                   {"verbs", {"get", "update", "patch"}}});
  rules.push_back({{"apiGroups", json::array({""})},
                   {"resources", json::array({"events"})},
                   {"verbs", {"get", "list", "watch", "create", "patch"}}});
  rules.push_back({{"apiGroups", json::array({""})},
                   {"resources", json::array({"serviceaccounts"})},
                   {"verbs", {"get", "list", "watch"}}});
  for (const json& rule : SchedulerSyncerRules(config.scheduler)) rules.push_back(rule);
  json role = Manifest("rbac.authorization.k8s.io/v1", "Role", kSyncerRoleName, ns, labels);
  role["rules"] = std::move(rules);

  json binding = Manifest("rbac.authorization.k8s.io/v1", "RoleBinding", kSyncerRoleName, ns, labels);
  binding["roleRef"] = {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Role"}, {"name", kSyncerRoleName}};
  binding["subjects"] =
      json::array({{{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "User"}, {"name", config.syncer_user}}});
  return {std::move(account), std::move(role), std::move(binding)};
}

std::vector<NodePatch> NodePatches(const Reservation& reservation, const std::string& ns) {
  std::map<std::string, NodePatch> by_node;
  const std::string tier(gpu::TierName(reservation.tier));
  auto add = [&](const std::string& node) -> NodePatch& {
    NodePatch& patch = by_node[node];
    patch.node = node;
    patch.labels[ReservedNodeLabel(ns)] = tier;
    return patch;
  };
  if (reservation.tier == gpu::Tier::kDedicated) {
    for (const ReservedGpu& g : reservation.gpus) add(g.node);
  } else if (reservation.tier == gpu::Tier::kExclusive) {
    for (const std::string& node : reservation.nodes) {
      NodePatch& patch = add(node);
      patch.labels[kExclusiveTenantKey] = reservation.tenant;
      // NoSchedule, not NoExecute: the node's GPU daemons (device plugin,
      // feature discovery) keep running; nothing new of anyone else lands.
      patch.taints = {{kExclusiveTenantKey, reservation.tenant, "NoSchedule"}};
    }
  }
  std::vector<NodePatch> out;
  for (auto& [node, patch] : by_node) out.push_back(std::move(patch));
  return out;
}

Status CheckInputs(const TrustTier& tier, const VirtualCluster& vcluster, const Reservation& reservation,
                   const RenderConfig& config) {
  SEPTA_RETURN_IF_ERROR(ValidateRenderConfig(config));
  SEPTA_RETURN_IF_ERROR(ValidateTenantName("vcluster.tenant", vcluster.tenant));
  SEPTA_RETURN_IF_ERROR(ValidateVirtualClusterName("vcluster.name", vcluster.name));
  // The name stored with the virtual cluster, never derived again here: a
  // changed HostNamespaceName must not move an existing one.
  if (!IsDns1123Label(vcluster.host_namespace)) {
    return InvalidField("vcluster.host_namespace", "must be the DNS-1123 label the virtual cluster was given");
  }
  SEPTA_RETURN_IF_ERROR(ValidateWorkloadQuota(vcluster.quota));
  if (!IsDns1123Label(tier.name, kMaxNameLength)) {
    return InvalidField("trust_tier.name", "must be a DNS-1123 label of at most 40 characters");
  }
  SEPTA_RETURN_IF_ERROR(ValidateQueueSettings(vcluster.queue));
  if (reservation.tenant != vcluster.tenant || reservation.vcluster != vcluster.name) {
    return FailedPrecondition(
        "reservation of " + tenancy::VirtualClusterText(reservation.tenant, reservation.vcluster) +
        " given for virtual cluster " + tenancy::VirtualClusterText(vcluster.tenant, vcluster.name));
  }
  if (reservation.tier != tier.gpu_sharing) {
    return FailedPrecondition("reservation is " + std::string(gpu::TierName(reservation.tier)) + ", trust tier \"" +
                              tier.name + "\" shares GPUs as " + std::string(gpu::TierName(tier.gpu_sharing)));
  }
  return Status::Ok();
}

}  // namespace

std::string ReservedNodeLabel(std::string_view host_namespace) {
  return "vcluster.septa.dev/" + std::string(host_namespace);
}

Result<HostObjects> RenderHostObjects(const TrustTier& tier, const VirtualCluster& vcluster,
                                      const Reservation& reservation, const std::vector<gpu::InventoryNode>& nodes,
                                      const RenderConfig& config) {
  SEPTA_RETURN_IF_ERROR(CheckInputs(tier, vcluster, reservation, config));
  auto holdings = HoldingsOf(reservation, nodes, config.scheduler == Scheduler::kKueue);
  SEPTA_RETURN_IF_ERROR(holdings);
  if (tier.gpu_sharing == gpu::Tier::kShared && config.fraction_backend == FractionBackend::kHami) {
    holdings->resources.erase(kGpuResource);
  }

  HostObjects out;
  out.host_namespace = vcluster.host_namespace;
  out.field_manager = config.field_manager;
  const std::string& ns = out.host_namespace;
  const Labels labels = VClusterLabels(vcluster.tenant, vcluster.name);
  auto append = [&out](std::vector<json> objects) {
    for (json& o : objects) out.objects.push_back(std::move(o));
  };
  out.objects.push_back(NamespaceObject(ns, labels, PsaLevel(config, tier)));
  out.objects.push_back(ResourceQuotaObject(ns, labels, vcluster.quota, *holdings,
                                            ExternalServicesAllowed(config, tier),
                                            vcluster.state == VirtualClusterState::kSleeping));
  out.objects.push_back(LimitRangeObject(ns, labels, vcluster.quota, config));
  append(NetworkPolicies(ns, labels, config));
  append(Rbac(ns, labels, config));
  switch (config.scheduler) {
    case Scheduler::kKai: append(KaiQueues(tier, vcluster, ns, *holdings)); break;
    case Scheduler::kKueue: append(KueueQueues(vcluster, ns, *holdings)); break;
    case Scheduler::kDefault: break;
  }
  out.node_patches = NodePatches(reservation, ns);
  return out;
}

json ObjectList(const HostObjects& rendered) {
  return {{"apiVersion", "v1"}, {"kind", "List"}, {"metadata", json::object()}, {"items", rendered.objects}};
}

json NodePatchesJson(const std::vector<NodePatch>& patches) {
  json out = json::array();
  for (const NodePatch& p : patches) {
    json taints = json::array();
    for (const gpu::Taint& t : p.taints) taints.push_back({{"key", t.key}, {"value", t.value}, {"effect", t.effect}});
    out.push_back({{"node", p.node}, {"labels", p.labels}, {"taints", std::move(taints)}});
  }
  return out;
}

}  // namespace septa::tenancy::host
