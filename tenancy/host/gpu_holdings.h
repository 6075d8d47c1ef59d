// What a reservation holds, counted the ways the host's admission and
// schedulers count GPUs:
//  - extended resources for the namespace's ResourceQuota (device plugin,
//    mixed MIG strategy: nvidia.com/gpu, nvidia.com/mig-<profile>);
//  - KAI GPU units (a whole GPU 1, a MIG instance of Ng N — KAI parses the
//    "Ng" of the resource name — a shared fraction its milli-GPU);
//  - the same extended resources per GPU product, for Kueue's flavors.
// A shared reservation is fractions of time-sliced GPUs, which pods ask for
// with KAI annotations, not extended resources: its quota holds
// nvidia.com/gpu at 0 (a whole GPU is never the tenant's), and Septa
// enforces the milli-GPU budget itself. Isolated also pins nvidia.com/gpu at
// 0: its tenants get MIG instances only.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "gpu/inventory.h"
#include "tenancy/reservation.h"

namespace septa::tenancy::host {

inline constexpr const char* kGpuResource = "nvidia.com/gpu";
inline constexpr const char* kGpuProductLabel = "nvidia.com/gpu.product";

// "nvidia.com/mig-3g.40gb"; a "+me" profile is written ".me", as the device
// plugin and mig-parted do ('+' is not allowed in a resource name).
std::string MigResourceName(std::string_view profile);

struct GpuHoldings {
  std::map<std::string, std::int64_t> resources;  // extended resource -> count, for the ResourceQuota
  std::int64_t kai_milli_units = 0;               // KAI GPU units, in thousandths
  // GPU product label -> extended resource -> count (dedicated, isolated,
  // exclusive); empty for shared.
  std::map<std::string, std::map<std::string, std::int64_t>> by_product;
};

// `nodes` must hold every node the reservation names (NOT_FOUND naming it
// otherwise), each with its nvidia.com/gpu.product label when
// `need_products` (FAILED_PRECONDITION naming the node otherwise).
Result<GpuHoldings> HoldingsOf(const Reservation& reservation, const std::vector<gpu::InventoryNode>& nodes,
                               bool need_products);

}  // namespace septa::tenancy::host
