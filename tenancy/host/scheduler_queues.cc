#include "tenancy/host/scheduler_queues.h"

#include <set>

#include "tenancy/host/manifest.h"
#include "tenancy/host/names.h"
#include "tenancy/host/quantity.h"
#include "tenancy/quota.h"
#include "tenancy/virtual_cluster_ref.h"

namespace septa::tenancy::host {

namespace {

using nlohmann::json;

constexpr const char* kKaiApiVersion = "scheduling.run.ai/v2";
constexpr const char* kKueueApiVersion = "kueue.x-k8s.io/v1beta2";
// KAI: quota/limit -1 is "unlimited"/"no limit".
constexpr int kKaiUnlimited = -1;

// KAI counts GPUs in units, fractions as decimals: 2500 milli -> 2.5.
json GpuUnits(std::int64_t milli) {
  if (milli % 1000 == 0) return milli / 1000;
  return static_cast<double>(milli) / 1000.0;
}

json KaiResource(json quota, json limit, int over_quota_weight) {
  return {{"quota", std::move(quota)}, {"limit", std::move(limit)}, {"overQuotaWeight", over_quota_weight}};
}

}  // namespace

std::vector<json> KaiQueues(const TrustTier& tier, const VirtualCluster& vcluster, const std::string& host_namespace,
                            const GpuHoldings& holdings) {
  const std::string parent_name = KaiTierQueueName(tier.name);
  auto parent_labels = SharedLabels();
  parent_labels[kTrustTierLabel] = tier.name;
  json parent = Manifest(kKaiApiVersion, "Queue", parent_name, "", parent_labels);
  // The tier's queue bounds nothing: its leaves carry the quotas.
  const json unlimited = KaiResource(kKaiUnlimited, kKaiUnlimited, 1);
  parent["spec"] = {{"displayName", "septa trust tier " + tier.name},
                    {"resources", {{"gpu", unlimited}, {"cpu", unlimited}, {"memory", unlimited}}}};

  // The reservation is the leaf's GPU quota and limit: reserved hardware is
  // guaranteed and is all the tenant may use. Septa reserves no CPU or
  // memory, so those are guaranteed nothing (quota 0) and capped by the
  // virtual cluster's workload quota; above quota, KAI shares by weight.
  const int weight = vcluster.queue.over_quota_weight;
  const json gpu = GpuUnits(holdings.kai_milli_units);
  const json cpu_limit = vcluster.quota.cpu_milli > 0 ? json(vcluster.quota.cpu_milli) : json(kKaiUnlimited);
  const json memory_limit =
      vcluster.quota.memory_mib > 0 ? json(MibToMegabytes(vcluster.quota.memory_mib)) : json(kKaiUnlimited);
  json leaf = Manifest(kKaiApiVersion, "Queue", host_namespace, "", VClusterLabels(vcluster.tenant, vcluster.name));
  leaf["spec"] = {{"displayName", tenancy::VirtualClusterText(vcluster.tenant, vcluster.name)},
                  {"parentQueue", parent_name},
                  {"priority", vcluster.queue.priority},
                  {"resources",
                   {{"gpu", KaiResource(gpu, gpu, weight)},
                    {"cpu", KaiResource(0, cpu_limit, weight)},
                    {"memory", KaiResource(0, memory_limit, weight)}}}};
  return {std::move(parent), std::move(leaf)};
}

std::vector<json> KueueQueues(const VirtualCluster& vcluster, const std::string& host_namespace,
                              const GpuHoldings& holdings) {
  std::vector<json> out;
  json default_flavor = Manifest(kKueueApiVersion, "ResourceFlavor", kDefaultFlavorName, "", SharedLabels());
  default_flavor["spec"] = json::object();
  out.push_back(std::move(default_flavor));
  for (const auto& [product, resources] : holdings.by_product) {
    json flavor = Manifest(kKueueApiVersion, "ResourceFlavor", GpuFlavorName(product), "", SharedLabels());
    flavor["spec"] = {{"nodeLabels", {{kGpuProductLabel, product}}}};
    out.push_back(std::move(flavor));
  }

  // Kueue admits only what a ClusterQueue covers, and every pod asks for
  // CPU and memory (the LimitRange sees to it): they are always covered,
  // by the workload quota or, without one, by the bounds of any quota.
  const std::int64_t cpu = vcluster.quota.cpu_milli > 0 ? vcluster.quota.cpu_milli : kMaxCpuMilli;
  const std::int64_t memory = vcluster.quota.memory_mib > 0 ? vcluster.quota.memory_mib : kMaxMemoryMib;
  json groups = json::array();
  groups.push_back({{"coveredResources", {"cpu", "memory"}},
                    {"flavors",
                     {{{"name", kDefaultFlavorName},
                       {"resources",
                        {{{"name", "cpu"}, {"nominalQuota", CpuQuantity(cpu)}},
                         {{"name", "memory"}, {"nominalQuota", MemoryQuantity(memory)}}}}}}}});
  // GPUs: one flavor per product, each listing every covered resource in
  // the same order (Kueue requires it), 0 where that product has none.
  std::set<std::string> gpu_resources;
  for (const auto& [product, resources] : holdings.by_product) {
    for (const auto& [resource, count] : resources) gpu_resources.insert(resource);
  }
  if (!gpu_resources.empty()) {
    json flavors = json::array();
    for (const auto& [product, resources] : holdings.by_product) {
      json quotas = json::array();
      for (const std::string& resource : gpu_resources) {
        auto it = resources.find(resource);
        quotas.push_back(
            {{"name", resource}, {"nominalQuota", std::to_string(it == resources.end() ? 0 : it->second)}});
      }
      flavors.push_back({{"name", GpuFlavorName(product)}, {"resources", std::move(quotas)}});
    }
    groups.push_back({{"coveredResources", gpu_resources}, {"flavors", std::move(flavors)}});
  }

  const auto labels = VClusterLabels(vcluster.tenant, vcluster.name);
  // Kueue has no queue priority: the syncer labels the virtual cluster's
  // workloads with this class (kueue.x-k8s.io/priority-class).
  json priority = Manifest(kKueueApiVersion, "WorkloadPriorityClass", host_namespace, "", labels);
  priority["value"] = vcluster.queue.priority;
  priority["description"] =
      "priority of virtual cluster " + tenancy::VirtualClusterText(vcluster.tenant, vcluster.name);
  out.push_back(std::move(priority));

  json cluster_queue = Manifest(kKueueApiVersion, "ClusterQueue", host_namespace, "", labels);
  cluster_queue["spec"] = {{"cohortName", vcluster.tenant},
                           {"namespaceSelector", {{"matchLabels", {{"kubernetes.io/metadata.name", host_namespace}}}}},
                           {"fairSharing", {{"weight", std::to_string(vcluster.queue.over_quota_weight)}}},
                           {"resourceGroups", std::move(groups)}};
  out.push_back(std::move(cluster_queue));

  json local_queue = Manifest(kKueueApiVersion, "LocalQueue", kLocalQueueName, host_namespace, labels);
  local_queue["spec"] = {{"clusterQueue", host_namespace}};
  out.push_back(std::move(local_queue));
  return out;
}

json SchedulerSyncerRules(Scheduler scheduler) {
  const json all = {"get", "list", "watch", "create", "update", "patch", "delete"};
  switch (scheduler) {
    case Scheduler::kKai:  // the syncer creates each pod's PodGroup itself (SYNCER-FACTS.md)
      return json::array({{{"apiGroups", {"scheduling.run.ai"}}, {"resources", {"podgroups"}}, {"verbs", all}}});
    case Scheduler::kKueue:  // it reads admission to report it on the virtual pod
      return json::array(
          {{{"apiGroups", {"kueue.x-k8s.io"}}, {"resources", {"workloads"}}, {"verbs", {"get", "list", "watch"}}}});
    case Scheduler::kDefault: break;
  }
  return json::array();
}

}  // namespace septa::tenancy::host
