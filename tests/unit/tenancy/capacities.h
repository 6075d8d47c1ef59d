#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tenancy/virtual_cluster.h"

namespace septa::test {

// A virtual cluster's capacity of each kind, as the tenancy tests write them.
inline tenancy::Capacity Shared(int milli, std::int64_t memory_mib = 0) {
  tenancy::Capacity c;
  c.tier = gpu::Tier::kShared;
  c.milli_gpu = milli;
  c.gpu_memory_mib = memory_mib;
  return c;
}

inline tenancy::Capacity Mig(std::vector<tenancy::MigCapacity> entries) {
  tenancy::Capacity c;
  c.tier = gpu::Tier::kIsolated;
  c.mig = std::move(entries);
  return c;
}

inline tenancy::Capacity Whole(gpu::Tier tier, std::string model, int count) {
  tenancy::Capacity c;
  c.tier = tier;
  c.model = std::move(model);
  c.count = count;
  return c;
}

}  // namespace septa::test
