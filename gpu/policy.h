// Placement policies: given the cluster and a pod, pick a node and its GPUs.
// Scores are cached per (node, pod shape) and dropped when the node changes,
// since a placement changes one node: a decision costs one feasibility check
// per node plus the scoring of the nodes changed since the shape was last seen.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/cluster_state.h"
#include "gpu/fragmentation.h"

namespace septa::gpu {

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string_view name() const = 0;
  // node < 0 when no node fits. Does not change the cluster.
  virtual GpuPick Choose(const ClusterState& cluster, const PodShape& pod) = 0;
  // Must be called after node `node` changed (placement or release).
  virtual void NodeChanged(int /*node*/) {}
  // Bytes of per-node state the policy keeps (caches), for the state budget.
  virtual std::size_t StateBytes() const { return 0; }
};

// A node's score for a pod and the GPUs it would use there; higher is better.
struct NodeScore {
  std::int32_t score = 0;
  std::uint8_t gpu_mask = 0;
};

// Scores every feasible node (percentageOfNodesToScore 100), optionally min-max
// normalises to 0..100 in integers, and takes the best, ties to the lowest
// index (smallest name).
class ScoringPolicy : public Policy {
 public:
  explicit ScoringPolicy(int node_count);
  GpuPick Choose(const ClusterState& cluster, const PodShape& pod) override;
  void NodeChanged(int node) override;
  std::size_t StateBytes() const override { return cache_.size() * sizeof(CacheEntry); }

 protected:
  virtual NodeScore ScoreNode(const ClusterState& cluster, int node, const PodShape& pod) = 0;
  virtual bool normalized() const { return false; }

 private:
  // Direct-mapped by shape id: shapes are numbered by popularity, so the
  // common ones never collide.
  static constexpr int kSlotsPerNode = 64;
  struct CacheEntry {
    std::int32_t score = 0;
    std::uint16_t shape_plus_one = 0;  // 0 = empty
    std::uint8_t gpu_mask = 0;
  };
  NodeScore CachedScore(const ClusterState& cluster, int node, const PodShape& pod);

  std::vector<CacheEntry> cache_;
  std::vector<std::pair<int, std::int32_t>> feasible_;  // reused: no allocation per decision
};

// Policy names: random, bestfit, gpupacking, dotproduct, gpuclustering, fgd, septa.
const std::vector<std::string>& PolicyNames();

// nullptr for an unknown name. `workload` is the learned target workload
// (FGD and septa); `seed` drives random.
std::unique_ptr<Policy> MakePolicy(std::string_view name, const ClusterState& cluster, const WorkloadModel& workload,
                                   std::uint64_t seed);

}  // namespace septa::gpu
