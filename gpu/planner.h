// MIG layout planner. Given one GPU model, the demand (instances wanted per
// profile, running ones included) and each MIG GPU's current layout and
// running instances, it chooses target layouts that
//   1. leave the least demand unmet (in memory slices),
//   2. strand the fewest memory slices on the GPUs that serve demand (slices of
//      such a GPU that no demanded instance uses; GPUs serving no demand stay
//      free for whole-GPU tenants and strand nothing),
//   3. reconfigure the fewest GPUs,
// and never touches a GPU with running instances unless it may be drained.
// The search is exact: dynamic programming over GPUs with the remaining demand
// as state. The result renders as a mig-parted config plus, per node, the
// `nvidia.com/mig.config` value, and each GPU's creation order (largest first).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "gpu/mig_geometry.h"
#include "gpu/mig_parted.h"

namespace septa::gpu {

struct PlannerGpu {
  std::string node;
  int index = 0;
  MigLayout current;
  std::vector<bool> running;  // per instance of `current`: a pod uses it
  bool may_drain = false;     // the caller allows draining its running instances
};

struct PlanCost {
  int unmet_slices = 0;
  int stranded_slices = 0;
  int reconfigured_gpus = 0;
  auto operator<=>(const PlanCost&) const = default;
};

struct GpuTarget {
  std::string node;
  int index = 0;
  MigLayout layout;  // in creation order
  bool reconfigure = false;
};

struct MigPlan {
  PlanCost cost;
  std::vector<GpuTarget> gpus;                         // same order as the input
  std::vector<int> unmet;                              // per profile index
  MigPartedConfig config;                              // one named config per node
  std::map<std::string, std::string> node_mig_config;  // node -> nvidia.com/mig.config value
};

// How PlanMigLayouts shapes its targets.
struct MigPlanOptions {
  // Give each reconfigured GPU, beside its demanded instances, the largest
  // sub-GPU instances that still fit (FillWithSubGpuInstances): slices a
  // re-layout leaves without an instance serve nobody until the next
  // re-layout, which needs the GPU idle and pauses its node. The plan's cost
  // is unchanged (it counts the demanded instances).
  bool fill_free_slices = false;
};

// `demand` is indexed like model.mig_profiles (shorter = zeros).
Result<MigPlan> PlanMigLayouts(const GpuModel& model, const std::vector<int>& demand,
                               const std::vector<PlannerGpu>& gpus, const MigPlanOptions& options = {});

// The cost of giving each GPU the layout with the given profile counts
// (an empty optional keeps the current layout), for the exhaustive check.
PlanCost CostOfCounts(const GpuModel& model, const std::vector<int>& demand, const std::vector<PlannerGpu>& gpus,
                      const std::vector<std::vector<int>>& counts_per_gpu, const std::vector<bool>& keep_current);

// Every profile-count vector (over all profiles, each at most its demand) that fits one GPU.
std::vector<std::vector<int>> PlaceableCounts(const GpuModel& model, const std::vector<int>& demand);

}  // namespace septa::gpu
