// MIG geometry of one GPU: which sets of GPU instances can coexist. An instance
// occupies a contiguous range of memory slices starting at one of its profile's
// allowed start indices; instances coexist iff their ranges do not overlap, the
// compute slices suffice, each profile stays within its max count and at most
// one `+me` instance exists (GPU-FACTS.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "gpu/catalog.h"

namespace septa::gpu {

// One GPU instance: a profile (index into GpuModel::mig_profiles) at a start slice.
struct MigInstance {
  int profile = 0;
  int start = 0;
  auto operator<=>(const MigInstance&) const = default;
};

using MigLayout = std::vector<MigInstance>;

// Bit i set = memory slice i taken.
// Inline: the churn policies call it per instance of every GPU per decision.
inline std::uint32_t SliceMask(const MigProfile& profile, int start) {
  return ((1u << profile.memory_slices) - 1u) << start;
}

// OK, or InvalidArgument naming the first broken rule.
Status ValidateLayout(const GpuModel& model, const MigLayout& layout);

// Start indices where `profile` could be added to the (valid) layout.
std::vector<int> FreePlacements(const GpuModel& model, const MigLayout& layout, int profile);

// Every valid layout to which no further instance can be added, each in
// canonical order, without duplicates; sorted.
std::vector<MigLayout> MaximalLayouts(const GpuModel& model);

// The order to create instances in: largest memory footprint first, then by
// start; creating small instances first can block a larger one's placement.
MigLayout CreationOrder(const GpuModel& model, MigLayout layout);

// Adds to a (valid) layout the largest sub-GPU instances that still fit —
// most compute first, then least memory; never a full-GPU or `+me` profile —
// each at its lowest free start, until none fits; in creation order.
MigLayout FillWithSubGpuInstances(const GpuModel& model, MigLayout layout);

// Places profile counts (profile index -> count) on an empty GPU, or
// InvalidArgument when they do not fit together. Exhaustive over placements.
Result<MigLayout> PlaceCounts(const GpuModel& model, const std::vector<int>& counts);

// "3g.40gb@4" style rendering, for messages and tests.
std::string LayoutToString(const GpuModel& model, const MigLayout& layout);

}  // namespace septa::gpu
