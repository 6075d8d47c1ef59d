// Capacity requests by trust tier: what each tier may hold, the validation of
// a request (every error names its JSON path, "capacity.mig[0].profile"), and
// GPU-equivalents, the one unit in which tenant quotas count GPUs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "gpu/catalog.h"
#include "gpu/inventory.h"
#include "tenancy/reservation.h"
#include "tenancy/virtual_cluster.h"

namespace septa::tenancy {

// Upper bounds of one virtual cluster's capacity. They are far above any
// real host cluster (the placement engine refuses what does not fit with
// RESOURCE_EXHAUSTED); they catch typos and keep every sum far from overflow.
inline constexpr int kMaxGpus = 4096;                       // capacity.gpus.count
inline constexpr int kMaxNodes = 1024;                      // capacity.nodes.count
inline constexpr int kMaxMigInstances = 7 * kMaxGpus;       // capacity.mig[i].count
inline constexpr int kMaxMigEntries = 64;                   // entries in capacity.mig
inline constexpr int kMaxSharedMilliGpu = 1000 * kMaxGpus;  // capacity.shared.milli_gpu
inline constexpr std::int64_t kMaxSharedGpuMemoryMib =
    std::int64_t{kMaxGpus} * 256 * 1024;  // capacity.shared.gpu_memory_mib: 256 GiB per GPU

// The capacity kind a tier holds, as the API's field under "capacity":
// shared → "shared", isolated → "mig", dedicated → "gpus", exclusive → "nodes".
std::string_view CapacityKindField(gpu::Tier tier);

// Checks a capacity request of a tenant whose trust tier shares GPUs as
// `tier`. INVALID_ARGUMENT naming the field for a malformed request: nothing
// or more than one kind set, a count out of 1..its bound, an unknown GPU
// model or MIG profile, a profile the named model lacks, a model that is not
// MIG-capable, the same profile and model twice, GPU memory without
// milli_gpu. FAILED_PRECONDITION naming "capacity.<kind>" for a well-formed
// request of a kind the tier does not allow (the message says which it does).
Status ValidateCapacity(const Capacity& capacity, gpu::Tier tier, const gpu::Catalog& catalog);

// GPU-equivalents, in thousandths ("milli"): a whole GPU counts 1000; a MIG
// instance its compute slices over its GPU's (a 3g instance on a 7-slice
// H100 counts 3/7 of 1000); a shared fraction its milli_gpu; an exclusive
// node the GPUs on it. Fractions are summed exactly and rounded up once at
// the end, so a fully laid-out GPU counts exactly 1000 and a tenant is never
// charged less than it holds.

// Of a request (`capacity` validated). A MIG profile requested without a
// model counts as on the model of the catalog where it is the largest share
// (every 7-slice GPU gives the same); exclusive nodes count the most GPUs
// any node of the requested model (of any model when none is named) in
// `nodes` has.
Result<std::int64_t> CapacityGpuMilli(const Capacity& capacity, const gpu::Catalog& catalog,
                                      const std::vector<gpu::InventoryNode>& nodes);

// Of concrete capacity: MIG instances count on the model of the GPU that
// holds them, exclusive nodes their GPUs. `nodes` must hold every node the
// reservation names (NOT_FOUND naming the node or GPU otherwise).
Result<std::int64_t> ReservationGpuMilli(const Reservation& reservation, const gpu::Catalog& catalog,
                                         const std::vector<gpu::InventoryNode>& nodes);

// "2.500" for 2500 milli: how messages print GPU-equivalents and CPUs.
std::string FormatMilli(std::int64_t milli);

}  // namespace septa::tenancy
