// The baseline policies of the FGD paper's comparison (best-effort readings of
// its simulator): Random, BestFit, GpuPacking, DotProduct, GpuClustering.
#pragma once

#include <random>

#include "gpu/policy.h"

namespace septa::gpu {

// A uniformly random feasible node; default GPU choice on it.
class RandomPolicy : public Policy {
 public:
  RandomPolicy(int node_count, std::uint64_t seed);
  std::string_view name() const override { return "random"; }
  GpuPick Choose(const ClusterState& cluster, const PodShape& pod) override;

 private:
  std::mt19937_64 rng_;
  std::vector<int> feasible_;
};

// Least leftover CPU and GPU after placement (PLACEMENT-BENCH.md formula),
// min-max normalised.
class BestFitPolicy : public ScoringPolicy {
 public:
  using ScoringPolicy::ScoringPolicy;
  std::string_view name() const override { return "bestfit"; }

 protected:
  NodeScore ScoreNode(const ClusterState& cluster, int node, const PodShape& pod) override;
  bool normalized() const override { return true; }
};

// Packs GPU work: a partly used GPU first, then a node with used GPUs, then an
// idle node; within a tier the least idle GPU left.
class GpuPackingPolicy : public ScoringPolicy {
 public:
  using ScoringPolicy::ScoringPolicy;
  std::string_view name() const override { return "gpupacking"; }

 protected:
  NodeScore ScoreNode(const ClusterState& cluster, int node, const PodShape& pod) override;
};

// Tetris-style alignment: the largest dot product of the pod's demand and the
// node's free resources, each normalised by the node's capacity; normalised.
class DotProductPolicy : public ScoringPolicy {
 public:
  using ScoringPolicy::ScoringPolicy;
  std::string_view name() const override { return "dotproduct"; }

 protected:
  NodeScore ScoreNode(const ClusterState& cluster, int node, const PodShape& pod) override;
  bool normalized() const override { return true; }
};

// Keeps like with like: fractional pods go where fractions already run, whole-GPU
// pods where whole GPUs are taken and no fraction runs; idle nodes in between.
class GpuClusteringPolicy : public ScoringPolicy {
 public:
  using ScoringPolicy::ScoringPolicy;
  std::string_view name() const override { return "gpuclustering"; }

 protected:
  NodeScore ScoreNode(const ClusterState& cluster, int node, const PodShape& pod) override;
};

}  // namespace septa::gpu
