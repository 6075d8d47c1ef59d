// Capacity requests placed on concrete GPUs by the placement engine, all or
// nothing, and reservations taken again when the engine is rebuilt from the
// rows that record them. The engine is only a cache of those rows: callers
// write the Reservation returned here in the same transaction as the virtual
// cluster, and rebuild from the rows rather than trust a second copy.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "gpu/engine.h"
#include "tenancy/reservation.h"
#include "tenancy/virtual_cluster.h"

namespace septa::tenancy {

// A reservation and the engine allocations that hold it.
struct PlacedReservation {
  Reservation reservation;
  std::vector<std::uint64_t> allocations;
};

// Places `capacity` (already validated for its tier) for the virtual
// cluster. Whole GPUs are packed onto as few nodes as will take them, a
// shared budget is cut into fractions of at most one GPU each (its memory
// split in proportion). On any shortfall nothing stays placed and the
// answer is RESOURCE_EXHAUSTED with a violation per short field, e.g.
// `capacity.mig[0]`: "2 × 3g.40gb requested, 1 free on H100-80GB".
// `tolerations`: the host taints a reservation may ignore.
Result<PlacedReservation> PlaceCapacity(gpu::PlacementEngine& engine, const std::string& tenant,
                                        const std::string& vcluster, const Capacity& capacity,
                                        const std::vector<gpu::Taint>& tolerations = {});

// Takes a recorded reservation again in a rebuilt engine; all or nothing.
Result<std::vector<std::uint64_t>> HoldReservation(gpu::PlacementEngine& engine, const Reservation& reservation);

// Gives back what the allocations hold (ids the engine no longer knows are skipped).
void ReleaseAllocations(gpu::PlacementEngine& engine, const std::vector<std::uint64_t>& allocations);

}  // namespace septa::tenancy
