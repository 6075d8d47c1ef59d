// Fragmentation Gradient Descent exactly as the paper's simulator scores it:
// int(100 sigmoid((F_before - F_after) / 1000)), no normalisation; a fraction
// tries every GPU and keeps the first with the best integer score.
#pragma once

#include "gpu/policy.h"

namespace septa::gpu {

class FgdPolicy : public ScoringPolicy {
 public:
  FgdPolicy(int node_count, const WorkloadModel& workload);
  std::string_view name() const override { return "fgd"; }

 protected:
  NodeScore ScoreNode(const ClusterState& cluster, int node, const PodShape& pod) override;

 private:
  WorkloadModel workload_;
};

// FGD's integer score for a fragmentation change.
std::int32_t FgdScore(double frag_before, double frag_after);

}  // namespace septa::gpu
