#pragma once

#include <vector>

#include "gpu/catalog.h"
#include "gpu/mig_churn.h"

namespace septa::test {

// `nodes` nodes of `per_node` A100-40GB GPUs (1g.5gb at starts 0-6, 2g.10gb at
// 0/2/4, 3g.20gb at 0/4, 4g.20gb and 7g.40gb at 0).
inline gpu::ChurnCluster A100Nodes(int nodes, int per_node = 8) {
  gpu::ChurnCluster cluster;
  cluster.models = {gpu::Catalog::Default().Find("A100-40GB")};
  cluster.node_model.assign(nodes, 0);
  cluster.gpus_per_node = per_node;
  return cluster;
}

// A workload of one pod: `shape` on `gpus` GPUs, living `lifetime_s`.
inline std::vector<gpu::ChurnPod> PodsOf(int shape, double lifetime_s, int gpus = 1) {
  gpu::ChurnPod pod;
  pod.shape = shape;
  pod.gpus = gpus;
  pod.lifetime_s = lifetime_s;
  return {pod};
}

// `n` arrivals from an empty cluster, all measured; at load 1000 pods lasting
// 1e9 s outlive the run.
inline gpu::ChurnConfig Arrivals(int n, bool queue = false, double load = 1000) {
  gpu::ChurnConfig c;
  c.load = load;
  c.queue = queue;
  c.warmup = 0;
  c.measured = n;
  c.prefill = false;
  return c;
}

}  // namespace septa::test
