// The GPU node the capacity benchmarks (septa-capacity-bench,
// septa-apply-bench) fill their inventories with: 8 H100-80GB in MIG mode,
// each laid out 3g.40gb@0 + 2g.20gb@4 + 1g.10gb@6, or 8 whole A100-80GB.
#pragma once

#include <string>

#include "gpu/catalog.h"
#include "gpu/inventory.h"

namespace septa::bench {

inline constexpr int kGpusPerNode = 8;

// "h100-<i>" (MIG) or "a100-<i>" (whole GPUs).
inline gpu::InventoryNode GpuNode(int i, bool mig) {
  gpu::InventoryNode n;
  n.name = (mig ? "h100-" : "a100-") + std::to_string(i);
  n.cpu_milli = 96000;
  n.memory_mib = 1 << 20;
  const gpu::GpuModel& model = *gpu::Catalog::Default().Find(mig ? "H100-80GB" : "A100-80GB");
  for (int g = 0; g < kGpusPerNode; ++g) {
    gpu::InventoryGpu gpu{model.name, g, n.name + "-gpu" + std::to_string(g), mig, {}};
    if (mig) {
      gpu.mig_layout = {
          {model.ProfileIndex("3g.40gb"), 0}, {model.ProfileIndex("2g.20gb"), 4}, {model.ProfileIndex("1g.10gb"), 6}};
    }
    n.gpus.push_back(gpu);
  }
  return n;
}

}  // namespace septa::bench
