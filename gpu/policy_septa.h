// Septa's own placement policy; see docs/placement.md for why it allocates more
// than FGD.
#pragma once

#include "gpu/policy.h"

namespace septa::gpu {

class SeptaPolicy : public ScoringPolicy {
 public:
  SeptaPolicy(const ClusterState& cluster, const WorkloadModel& workload);
  std::string_view name() const override { return "septa"; }

 protected:
  NodeScore ScoreNode(const ClusterState& cluster, int node, const PodShape& pod) override;

 private:
  WorkloadModel workload_;
};

}  // namespace septa::gpu
