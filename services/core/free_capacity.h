// What a new virtual cluster of a trust tier could get now: the free part of
// the GPU inventory in that tier's kind (MIG instances by profile, whole
// GPUs, whole nodes, or room on time-sliced GPUs), summed by model. For the
// portal's "what is free for me" and septactl; a summary of the current MIG
// layouts on Ready nodes, not a promise: validate_only on a create answers
// for one request exactly (placement, quota, re-layouts).
#pragma once

#include <string>
#include <vector>

#include "gpu/catalog.h"
#include "gpu/cluster_state.h"
#include "gpu/inventory.h"
#include "services/core/inventory_service.h"

namespace septa::core {

struct FreeCount {
  std::string model;    // "H100-80GB"
  std::string profile;  // MIG only: "3g.40gb"
  int count = 0;
  bool operator==(const FreeCount&) const = default;
};

struct FreeShares {
  std::string model;
  int gpus = 0;                             // time-sliced GPUs with room
  int milli_gpu = 0;                        // their room, summed
  int largest_milli_gpu = 0;                // the most one GPU has
  std::int64_t gpu_memory_mib = 0;          // their free memory, summed
  std::int64_t largest_gpu_memory_mib = 0;  // the most one GPU has (not necessarily the same GPU)
  bool operator==(const FreeShares&) const = default;
};

struct FreeCapacity {
  gpu::Tier tier = gpu::Tier::kShared;
  // The tier's kind only; each ordered by model (and profile).
  std::vector<FreeCount> mig;    // isolated
  std::vector<FreeCount> gpus;   // dedicated
  std::vector<FreeCount> nodes;  // exclusive
  std::vector<FreeShares> shared;
};

// Pure: what `nodes` (as InventoryService reads them, holders joined) leave
// free for `tier`, by the engine's tier rules: whole GPUs never share a node
// with fractions or MIG instances. Nodes that are not Ready, and MIG GPUs
// whose node is re-laying them out, count as nothing.
FreeCapacity FreeCapacityOf(const std::vector<HeldNode>& nodes, gpu::Tier tier, const gpu::Catalog& catalog);

}  // namespace septa::core
