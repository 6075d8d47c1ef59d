// What a real cluster's Node objects do not say and the exporter does
// (USAGE-FACTS §1: every series names its GPU by `gpu`, the NVML index, and
// `UUID`; a MIG instance's also by `GPU_I_ID` and `GPU_I_PROFILE`), so that
// usage can be attributed where nothing publishes GPU UUIDs or GPU-instance
// ids on the Node (only kubesim's identity annotation does). What the
// inventory knows is never overridden:
//  - a GPU without a UUID takes the one UUID the exporter shows at its index
//    (two UUIDs at one index: not learnt, counted as ambiguous);
//  - a MIG GPU without GPU-instance ids maps each instance of its layout
//    whose profile occurs once on it, in the layout and in the series, to
//    the one GPU_I_ID shown for that profile. A profile that occurs twice is
//    not guessed: which instance is which is not in the series (counted).
// Reservations key GPUs by index, as Septa placed them; on a real cluster
// the index is the device plugin's, which honours Septa's assignment only
// in kubesim (docs/usage.md "Known gaps").
#pragma once

#include <vector>

#include "gpu/catalog.h"
#include "gpu/inventory.h"
#include "tenancy/usage/dcgm_series.h"

namespace septa::tenancy::usage {

struct LearntIdentities {
  int uuids = 0;      // GPUs that took a UUID
  int gi_ids = 0;     // MIG instances that took a GPU-instance id
  int ambiguous = 0;  // GPUs or profiles left unknown because the series could not tell
};

// The distinct GPU references of `samples` (what CompleteGpuIdentities
// reads; kept between scrapes by the shell so that a failed scrape still
// knows them).
std::vector<DcgmGpuRef> GpuRefsOf(const std::vector<DcgmSample>& samples);

// Completes `node` (whose name the refs must carry) with what `refs` say.
LearntIdentities CompleteGpuIdentities(gpu::InventoryNode& node, const std::vector<DcgmGpuRef>& refs,
                                       const gpu::Catalog& catalog);

}  // namespace septa::tenancy::usage
