// What a reservation holds, as the things the exporter measures, each with
// the weight of held capacity (../shared/docs/USAGE-FACTS.md §4) and the
// key its series carry (§6 "Attribute by reservation"):
//  - a whole GPU (dedicated; every GPU of an exclusive node): weight 1,
//    measured by (node, UUID);
//  - a MIG instance (isolated): weight compute slices / the GPU's (3g on an
//    H100 3/7), measured by (node, parent UUID, GPU-instance id);
//  - a share of a time-sliced GPU (shared): weight milli_gpu / 1000,
//    measured by (node, UUID), whose one measurement the shares split.
// The reservation rows (tenancy/reservation.h) are the truth; the exporter's
// pod labels are only a cross-check.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/time_point.h"
#include "gpu/catalog.h"
#include "gpu/inventory.h"
#include "tenancy/reservation.h"

namespace septa::tenancy::usage {

// [start, end): instants are passed in, never read.
struct TimeRange {
  TimePoint start{};
  TimePoint end{};
  bool operator==(const TimeRange&) const = default;
};

struct Holder {
  std::string tenant{};
  std::string vcluster{};
  gpu::Tier tier = gpu::Tier::kShared;
  bool operator==(const Holder&) const = default;
};

enum class HeldKind { kWholeGpu, kMigInstance, kShare };

struct HeldEntity {
  Holder holder{};
  HeldKind kind = HeldKind::kWholeGpu;
  std::string node{};
  std::string gpu_uuid{};
  int gpu_index = 0;
  int gi_id = -1;             // MIG: the GPU-instance id while held
  std::string mig_profile{};  // MIG
  int milli_gpu = 0;          // share
  double weight = 0;          // w, USAGE-FACTS §4
  double reserved_memory_mib = 0;
  // The host namespace the holder's pods run in: whose per-pod values a
  // share takes, and what the pod labels of its series should say.
  std::string host_namespace{};
  TimeRange held{};
  // Shares: when a pod of the holder ran on the GPU, for the split by
  // reserved share when the exporter has no per-pod values. nullopt: not
  // known, taken as running while held.
  std::optional<std::vector<TimeRange>> pods_running{};
};

// The GPU-instance id of the MIG instance at (node, GPU index, first memory
// slice), as the inventory observed the layout (§6: DCGM shows no placement,
// Septa's reservations key MIG by placement).
struct MigInstanceId {
  std::string node{};
  int gpu = 0;
  int start = 0;
  int gi_id = -1;
};

// The entities of `reservation`, held over `held`. Whole GPUs' reserved
// memory is the catalog's for their model, a MIG instance's its profile's,
// a share's its gpu_memory_mib (or its milli share of the GPU's memory when
// it reserved none). NOT_FOUND naming the node, GPU, model or profile that
// `nodes` or `catalog` lack; FAILED_PRECONDITION for a GPU whose UUID is
// unknown or a MIG instance whose GPU-instance id is not in `gi_ids`.
Result<std::vector<HeldEntity>> HeldEntities(const Reservation& reservation,
                                             const std::vector<gpu::InventoryNode>& nodes, const gpu::Catalog& catalog,
                                             const std::vector<MigInstanceId>& gi_ids, const TimeRange& held,
                                             const std::string& host_namespace);

}  // namespace septa::tenancy::usage
