// One virtual cluster of each trust tier, with reservations on a small
// inventory of two H100 and two A100 nodes: the inputs of the rendering
// tests and of the golden files.
#pragma once

#include <string>
#include <vector>

#include "gpu/inventory.h"
#include "tenancy/host/names.h"
#include "tenancy/reservation.h"
#include "tenancy/trust_tier.h"
#include "tenancy/virtual_cluster.h"

namespace septa::tenancy::host {

struct SampleCase {
  std::string name;  // "shared", ...: the golden files' prefix
  TrustTier tier;
  VirtualCluster vcluster;
  Reservation reservation;
};

inline gpu::InventoryNode SampleNode(const std::string& name, const std::string& model, const std::string& product,
                                     int gpus) {
  gpu::InventoryNode node;
  node.name = name;
  node.cpu_milli = 96000;
  node.memory_mib = 1024 * 1024;
  node.labels = {{"kubernetes.io/hostname", name}, {"nvidia.com/gpu.product", product}};
  for (int i = 0; i < gpus; ++i) node.gpus.push_back({model, i, "GPU-" + name + "-" + std::to_string(i), false, {}});
  return node;
}

inline std::vector<gpu::InventoryNode> SampleNodes() {
  return {SampleNode("h100-0", "H100-80GB", "NVIDIA-H100-80GB-HBM3", 8),
          SampleNode("h100-1", "H100-80GB", "NVIDIA-H100-80GB-HBM3", 8),
          SampleNode("a100-0", "A100-SXM4-80GB", "NVIDIA-A100-SXM4-80GB", 8),
          SampleNode("a100-1", "A100-SXM4-80GB", "NVIDIA-A100-SXM4-80GB", 4)};
}

inline SampleCase MakeCase(std::string name, gpu::Tier gpu_tier, std::string tenant, std::string vcluster) {
  SampleCase c;
  c.name = std::move(name);
  c.tier.name = c.name;
  c.tier.gpu_sharing = gpu_tier;
  c.vcluster.tenant = tenant;
  c.vcluster.name = vcluster;
  c.vcluster.host_namespace = HostNamespaceName(c.vcluster.tenant, c.vcluster.name);
  c.vcluster.capacity.tier = gpu_tier;
  c.reservation.tenant = std::move(tenant);
  c.reservation.vcluster = std::move(vcluster);
  c.reservation.tier = gpu_tier;
  return c;
}

inline std::vector<SampleCase> SampleCases() {
  SampleCase shared = MakeCase("shared", gpu::Tier::kShared, "acme", "notebooks");
  shared.vcluster.quota = {8000, 32768, 50};
  shared.reservation.shares = {{"h100-0", 0, 500, 40960}, {"h100-0", 1, 250, 20480}};

  SampleCase isolated = MakeCase("isolated", gpu::Tier::kIsolated, "acme", "train");
  isolated.vcluster.quota = {1500, 1536, 0};
  isolated.reservation.mig = {{"h100-0", 2, "3g.40gb", 0, 4},
                              {"h100-0", 2, "1g.10gb", 4, 1},
                              {"a100-0", 0, "3g.40gb", 4, 4},
                              {"a100-0", 1, "1g.10gb+me", 0, 1}};

  SampleCase dedicated = MakeCase("dedicated", gpu::Tier::kDedicated, "bigco", "serving");
  dedicated.reservation.gpus = {{"h100-0", 4}, {"h100-0", 5}, {"a100-0", 3}};

  SampleCase exclusive = MakeCase("exclusive", gpu::Tier::kExclusive, "regulated", "secure");
  exclusive.vcluster.quota = {64000, 262144, 200};
  exclusive.vcluster.queue = {200, 3};
  exclusive.reservation.nodes = {"h100-1", "a100-1"};
  return {shared, isolated, dedicated, exclusive};
}

}  // namespace septa::tenancy::host
