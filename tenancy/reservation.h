// The concrete capacity a virtual cluster holds, as the rows that make double
// booking impossible (migrations: exclusion constraints per GPU slice range,
// unique whole GPUs and nodes, tier-mixing triggers). The placement engine's
// state is rebuilt from these rows; the database is the only record.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "gpu/inventory.h"

namespace septa::tenancy {

// A MIG instance at a fixed placement: memory slices [start, start + slices).
struct ReservedMig {
  std::string node;
  int gpu = 0;  // index on the node
  std::string profile;
  int start = 0;
  int slices = 0;
  bool operator==(const ReservedMig&) const = default;
};

struct ReservedGpu {
  std::string node;
  int gpu = 0;
  bool operator==(const ReservedGpu&) const = default;
};

// Part of a shared budget on one time-shared GPU (at most 1000 milli).
struct ReservedShare {
  std::string node;
  int gpu = 0;
  int milli_gpu = 0;
  std::int64_t gpu_memory_mib = 0;
  bool operator==(const ReservedShare&) const = default;
};

struct Reservation {
  std::string tenant;
  std::string vcluster;
  gpu::Tier tier = gpu::Tier::kShared;
  std::vector<ReservedShare> shares;  // shared
  std::vector<ReservedMig> mig;       // isolated
  std::vector<ReservedGpu> gpus;      // dedicated
  std::vector<std::string> nodes;     // exclusive: whole nodes
  // Held until the provisioner reports that nothing of the tenant still runs
  // on it; a releasing reservation still counts as taken.
  bool releasing = false;
  bool operator==(const Reservation&) const = default;
};

// The nodes a reservation holds capacity on: all of the inventory that
// rendering its host objects (the provisioner) or placing its pods (the
// syncer) reads.
inline std::set<std::string> ReservedNodeNames(const Reservation& reservation) {
  std::set<std::string> names(reservation.nodes.begin(), reservation.nodes.end());
  for (const auto& share : reservation.shares) names.insert(share.node);
  for (const auto& mig : reservation.mig) names.insert(mig.node);
  for (const auto& gpu : reservation.gpus) names.insert(gpu.node);
  return names;
}

}  // namespace septa::tenancy
