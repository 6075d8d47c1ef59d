#include "tenancy/sync/tier_patches.h"

#include <string>

#include "tenancy/host/gpu_holdings.h"
#include "tenancy/host/names.h"
#include "tenancy/host/render.h"

namespace septa::tenancy::sync {
namespace {

using nlohmann::json;

constexpr const char* kGpu = "nvidia.com/gpu";
constexpr const char* kKaiScheduler = "kai-scheduler";
constexpr const char* kKaiQueueLabel = "kai.scheduler/queue";
constexpr const char* kKueueQueueLabel = "kueue.x-k8s.io/queue-name";
constexpr const char* kKueuePriorityLabel = "kueue.x-k8s.io/priority-class";
// KAI's fraction annotations and HAMi's device pin.
constexpr const char* kKaiFraction = "gpu-fraction";
constexpr const char* kKaiMemory = "gpu-memory";
constexpr const char* kHamiUuid = "nvidia.com/use-gpuuuid";

// "0.25" for 250 milli, "1" for 1000.
std::string Decimal(int milli) {
  if (milli >= 1000) return "1";
  std::string digits = std::to_string(1000 + milli).substr(1);
  while (!digits.empty() && digits.back() == '0') digits.pop_back();
  return "0." + digits;
}

json& ResourcesOf(json& pod, const ContainerGpuAsk& ask) { return pod["spec"][ask.list][ask.index]["resources"]; }

// Replaces resource `from` by `to` = `value` in limits and requests.
void Rewrite(json& resources, const std::string& from, const std::string& to, const json& value) {
  for (const char* kind : {"limits", "requests"}) {
    if (!resources.contains(kind) || !resources[kind].contains(from)) continue;
    resources[kind].erase(from);
    if (!to.empty()) resources[kind][to] = value;
    if (resources[kind].empty()) resources.erase(kind);
  }
}

std::string Uuid(const VirtualClusterView& vcluster, const std::string& node, int index) {
  for (const gpu::InventoryNode& n : vcluster.nodes) {
    if (n.name != node) continue;
    for (const gpu::InventoryGpu& g : n.gpus) {
      if (g.index == index) return g.uuid;
    }
  }
  return "";
}

// HAMi's device pin: the UUIDs of the chosen GPUs (omitted when the view
// does not know one: the pod is still pinned to the node).
void PinDevices(json& pod, const VirtualClusterView& vcluster, const PodAssignment& a) {
  std::string uuids;
  for (int g : a.gpus) {
    const std::string uuid = Uuid(vcluster, a.node, g);
    if (uuid.empty()) return;
    uuids += (uuids.empty() ? "" : ",") + uuid;
  }
  if (!uuids.empty()) pod["metadata"]["annotations"][kHamiUuid] = uuids;
}

void PatchShared(json& pod, const SyncSettings& settings, const VirtualClusterView& vcluster, const GpuAsk& ask,
                 const PodAssignment& a) {
  const ContainerGpuAsk& c = ask.containers.front();
  json& resources = ResourcesOf(pod, c);
  if (settings.fraction_backend == FractionBackend::kKai) {
    // KAI reads the share from annotations and must schedule the pod itself;
    // an nvidia.com/gpu resource would ask the device plugin for a whole GPU.
    Rewrite(resources, kGpu, "", json());
    if (resources.empty()) pod["spec"][c.list][c.index].erase("resources");
    if (ask.gpu_memory_mib > 0) {
      pod["metadata"]["annotations"][kKaiMemory] = std::to_string(ask.gpu_memory_mib);
    } else {
      pod["metadata"]["annotations"][kKaiFraction] = Decimal(a.milli_gpu);
    }
    pod["spec"]["schedulerName"] = kKaiScheduler;
    return;
  }
  // HAMi: one vGPU, its memory (MiB, or a percentage where the reservation
  // tracks none) and compute percentage.
  Rewrite(resources, kGpu, "", json());  // limits alone: requests of extended resources default to them
  const int percent = (a.milli_gpu + 9) / 10;
  json& limits = resources["limits"];
  limits[kGpu] = "1";
  if (a.gpu_memory_mib > 0) {  // asked, or the fraction's part of the share's memory
    limits["nvidia.com/gpumem"] = std::to_string(a.gpu_memory_mib);
  } else {
    limits["nvidia.com/gpumem-percentage"] = std::to_string(percent);
  }
  limits["nvidia.com/gpucores"] = std::to_string(percent);
  PinDevices(pod, vcluster, a);
}

void AddRequiredNodeExpressions(json& spec, const json& expressions) {
  json& required = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"];
  json& terms = required["nodeSelectorTerms"];
  if (!terms.is_array() || terms.empty()) terms = json::array({json::object()});
  // Terms are ORed and expressions ANDed: every term of the tenant's gets ours.
  for (json& term : terms) {
    for (const json& e : expressions) term["matchExpressions"].push_back(e);
  }
}

// The reservation is the admission to its node: the taints a platform puts
// on its GPU nodes (`dedicated=gpu:NoSchedule`) keep pods that hold nothing
// there away, not the pod Septa pins to what it reserved. Kubernetes' own
// condition taints (node.kubernetes.io/..., not-ready, unreachable) say the
// node is unwell and stay untolerated; so does another tenant's exclusive
// taint, which a node holding this reservation cannot carry.
void TolerateReservedNodeTaints(json& spec, const VirtualClusterView& vcluster, const std::string& node_name) {
  for (const gpu::InventoryNode& node : vcluster.nodes) {
    if (node.name != node_name) continue;
    for (const gpu::Taint& taint : node.taints) {
      if (taint.key.starts_with("node.kubernetes.io/") || taint.key.starts_with("node.cloudprovider.kubernetes.io/") ||
          taint.key == host::kExclusiveTenantKey)
        continue;
      json toleration = {{"key", taint.key}, {"operator", "Equal"}, {"value", taint.value}};
      if (!taint.effect.empty()) toleration["effect"] = taint.effect;
      spec["tolerations"].push_back(std::move(toleration));
    }
  }
}

void PatchScheduler(json& pod, const SyncSettings& settings, const VirtualClusterView& vcluster) {
  json& labels = pod["metadata"]["labels"];
  switch (settings.scheduler) {
    case host::Scheduler::kKai:
      // The provisioner names the virtual cluster's leaf queue after its host namespace.
      pod["spec"]["schedulerName"] = kKaiScheduler;
      labels[kKaiQueueLabel] = vcluster.host_namespace;
      // A gang's pods are marked by PatchGang (gangs.h); others KAI groups alone.
      break;
    case host::Scheduler::kKueue:
      labels[kKueueQueueLabel] = std::string(host::kLocalQueueName);
      labels[kKueuePriorityLabel] = vcluster.host_namespace;
      break;
    case host::Scheduler::kDefault: break;
  }
}

}  // namespace

std::string RuntimeClassFor(const VirtualClusterView& vcluster, bool uses_gpu) {
  const auto tier = vcluster.tier.gpu_sharing;
  if (uses_gpu || tier == gpu::Tier::kDedicated || tier == gpu::Tier::kExclusive) return vcluster.tier.runtime_class;
  return "";
}

void ApplyTierPatches(json& pod, const SyncSettings& settings, const VirtualClusterView& vcluster, const GpuAsk& ask,
                      const PodAssignment& a) {
  json& spec = pod["spec"];
  const std::string runtime = RuntimeClassFor(vcluster, !ask.Empty());
  if (!runtime.empty()) spec["runtimeClassName"] = runtime;
  if (!settings.bind_node_name) PatchScheduler(pod, settings, vcluster);

  switch (vcluster.tier.gpu_sharing) {
    case gpu::Tier::kIsolated:
      for (const ContainerGpuAsk& c : ask.containers) {
        Rewrite(ResourcesOf(pod, c), kGpu, host::MigResourceName(a.mig_profile), std::to_string(c.count));
      }
      break;
    case gpu::Tier::kShared:
      if (!ask.Empty()) PatchShared(pod, settings, vcluster, ask, a);
      break;
    case gpu::Tier::kDedicated:
      if (!ask.Empty() && settings.fraction_backend == FractionBackend::kHami) PinDevices(pod, vcluster, a);
      break;
    case gpu::Tier::kExclusive: {
      // Every pod of an exclusive tenant runs on its nodes, GPU or not.
      spec["tolerations"].push_back({{"key", host::kExclusiveTenantKey},
                                     {"operator", "Equal"},
                                     {"value", vcluster.tenant},
                                     {"effect", "NoSchedule"}});
      if (a.node.empty()) {
        AddRequiredNodeExpressions(
            spec, json::array({{{"key", host::ReservedNodeLabel(vcluster.host_namespace)}, {"operator", "Exists"}}}));
      }
      break;
    }
  }
  if (a.node.empty()) {
    // A pod that holds no GPU runs on the platform's CPU pool, never on a
    // GPU node, whose CPU and memory belong to its GPUs' holders (issue 28,
    // H2). Exclusive pods stay on their own nodes (above).
    if (vcluster.tier.gpu_sharing != gpu::Tier::kExclusive) {
      AddRequiredNodeExpressions(spec, json::array({{{"key", host::kGpuProductLabel}, {"operator", "DoesNotExist"}}}));
    }
    return;
  }
  TolerateReservedNodeTaints(spec, vcluster, a.node);
  if (settings.bind_node_name) {
    spec["nodeName"] = a.node;
  } else {
    AddRequiredNodeExpressions(
        spec,
        json::array({{{"key", "kubernetes.io/hostname"}, {"operator", "In"}, {"values", json::array({a.node})}}}));
  }
}

}  // namespace septa::tenancy::sync
