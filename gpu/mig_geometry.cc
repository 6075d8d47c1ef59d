#include "gpu/mig_geometry.h"

#include <algorithm>
#include <bit>
#include <set>
#include <tuple>

namespace septa::gpu {
namespace {

struct Usage {
  std::uint32_t slices = 0;
  int compute = 0;
  bool media_extensions = false;
  std::vector<int> counts;
};

bool CanAdd(const GpuModel& model, const Usage& usage, int profile_index, int start) {
  const MigProfile& p = model.mig_profiles[profile_index];
  if (!p.AllowsStart(start) || start + p.memory_slices > model.memory_slices) return false;
  if (usage.slices & SliceMask(p, start)) return false;
  if (usage.compute + p.compute_slices > model.compute_slices) return false;
  if (p.media_extensions && usage.media_extensions) return false;
  return usage.counts[profile_index] < p.max_count;
}

void Add(const GpuModel& model, Usage& usage, int profile_index, int start) {
  const MigProfile& p = model.mig_profiles[profile_index];
  usage.slices |= SliceMask(p, start);
  usage.compute += p.compute_slices;
  usage.media_extensions |= p.media_extensions;
  ++usage.counts[profile_index];
}

bool CanAddAnything(const GpuModel& model, const Usage& usage) {
  for (std::size_t i = 0; i < model.mig_profiles.size(); ++i) {
    for (int start : model.mig_profiles[i].starts) {
      if (CanAdd(model, usage, static_cast<int>(i), start)) return true;
    }
  }
  return false;
}

// Enumerates instances in increasing (start, profile) order so each set is seen once.
void Extend(const GpuModel& model, Usage& usage, MigLayout& current, MigInstance from, std::set<MigLayout>& out) {
  if (!CanAddAnything(model, usage)) {
    out.insert(current);
    return;
  }
  for (int start = from.start; start < model.memory_slices; ++start) {
    for (std::size_t i = 0; i < model.mig_profiles.size(); ++i) {
      const MigInstance next{static_cast<int>(i), start};
      if (std::tie(next.start, next.profile) <= std::tie(from.start, from.profile) && !current.empty()) continue;
      if (!CanAdd(model, usage, next.profile, start)) continue;
      Usage saved = usage;
      Add(model, usage, next.profile, start);
      current.push_back(next);
      Extend(model, usage, current, next, out);
      current.pop_back();
      usage = saved;
    }
  }
}

bool Place(const GpuModel& model, Usage& usage, std::vector<int>& remaining, std::size_t profile_index,
           MigLayout& layout) {
  while (profile_index < remaining.size() && remaining[profile_index] == 0) ++profile_index;
  if (profile_index == remaining.size()) return true;
  const int lowest_start =
      layout.empty() || layout.back().profile != static_cast<int>(profile_index) ? 0 : layout.back().start + 1;
  for (int start : model.mig_profiles[profile_index].starts) {
    if (start < lowest_start || !CanAdd(model, usage, static_cast<int>(profile_index), start)) continue;
    Usage saved = usage;
    Add(model, usage, static_cast<int>(profile_index), start);
    --remaining[profile_index];
    layout.push_back({static_cast<int>(profile_index), start});
    if (Place(model, usage, remaining, profile_index, layout)) return true;
    layout.pop_back();
    ++remaining[profile_index];
    usage = saved;
  }
  return false;
}

}  // namespace

Status ValidateLayout(const GpuModel& model, const MigLayout& layout) {
  if (!model.mig_capable) return InvalidArgument(model.name + " is not MIG-capable");
  Usage usage;
  usage.counts.assign(model.mig_profiles.size(), 0);
  for (const MigInstance& inst : layout) {
    if (inst.profile < 0 || inst.profile >= static_cast<int>(model.mig_profiles.size())) {
      return InvalidArgument("unknown profile index " + std::to_string(inst.profile));
    }
    const MigProfile& p = model.mig_profiles[inst.profile];
    const std::string what = p.name + "@" + std::to_string(inst.start);
    if (!p.AllowsStart(inst.start)) return InvalidArgument(what + ": start not allowed for " + p.name);
    if (usage.slices & SliceMask(p, inst.start)) return InvalidArgument(what + ": overlaps another instance");
    if (p.media_extensions && usage.media_extensions) return InvalidArgument(what + ": a second +me instance");
    if (usage.counts[inst.profile] >= p.max_count) {
      return InvalidArgument(what + ": more than " + std::to_string(p.max_count) + " instances of " + p.name);
    }
    if (usage.compute + p.compute_slices > model.compute_slices) {
      return InvalidArgument(what + ": more than " + std::to_string(model.compute_slices) + " compute slices");
    }
    Add(model, usage, inst.profile, inst.start);
  }
  return Status::Ok();
}

std::vector<int> FreePlacements(const GpuModel& model, const MigLayout& layout, int profile) {
  Usage usage;
  usage.counts.assign(model.mig_profiles.size(), 0);
  for (const MigInstance& inst : layout) Add(model, usage, inst.profile, inst.start);
  std::vector<int> out;
  for (int start : model.mig_profiles[profile].starts) {
    if (CanAdd(model, usage, profile, start)) out.push_back(start);
  }
  return out;
}

std::vector<MigLayout> MaximalLayouts(const GpuModel& model) {
  std::set<MigLayout> found;
  if (!model.mig_capable) return {};
  Usage usage;
  usage.counts.assign(model.mig_profiles.size(), 0);
  MigLayout current;
  Extend(model, usage, current, MigInstance{-1, 0}, found);
  std::vector<MigLayout> out;
  for (MigLayout layout : found) {
    std::sort(layout.begin(), layout.end());
    out.push_back(std::move(layout));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

MigLayout CreationOrder(const GpuModel& model, MigLayout layout) {
  std::stable_sort(layout.begin(), layout.end(), [&](const MigInstance& a, const MigInstance& b) {
    const MigProfile& pa = model.mig_profiles[a.profile];
    const MigProfile& pb = model.mig_profiles[b.profile];
    if (pa.memory_slices != pb.memory_slices) return pa.memory_slices > pb.memory_slices;
    if (pa.compute_slices != pb.compute_slices) return pa.compute_slices > pb.compute_slices;
    return a.start < b.start;
  });
  return layout;
}

MigLayout FillWithSubGpuInstances(const GpuModel& model, MigLayout layout) {
  std::vector<int> fill;
  for (std::size_t p = 0; p < model.mig_profiles.size(); ++p) {
    const MigProfile& prof = model.mig_profiles[p];
    if (!prof.media_extensions && prof.compute_slices < model.compute_slices) fill.push_back(static_cast<int>(p));
  }
  std::stable_sort(fill.begin(), fill.end(), [&](int a, int b) {
    const MigProfile& pa = model.mig_profiles[a];
    const MigProfile& pb = model.mig_profiles[b];
    if (pa.compute_slices != pb.compute_slices) return pa.compute_slices > pb.compute_slices;
    return pa.memory_slices < pb.memory_slices;
  });
  for (int p : fill) {
    for (std::vector<int> starts = FreePlacements(model, layout, p); !starts.empty();
         starts = FreePlacements(model, layout, p)) {
      layout.push_back(MigInstance{p, starts.front()});
    }
  }
  return CreationOrder(model, std::move(layout));
}

Result<MigLayout> PlaceCounts(const GpuModel& model, const std::vector<int>& counts) {
  if (!model.mig_capable) return InvalidArgument(model.name + " is not MIG-capable");
  Usage usage;
  usage.counts.assign(model.mig_profiles.size(), 0);
  std::vector<int> remaining = counts;
  remaining.resize(model.mig_profiles.size(), 0);
  MigLayout layout;
  if (!Place(model, usage, remaining, 0, layout)) {
    return InvalidArgument("the requested instances do not fit one " + model.name);
  }
  return CreationOrder(model, std::move(layout));
}

std::string LayoutToString(const GpuModel& model, const MigLayout& layout) {
  std::string out;
  for (const MigInstance& inst : layout) {
    if (!out.empty()) out += ' ';
    out += model.mig_profiles[inst.profile].name + "@" + std::to_string(inst.start);
  }
  return out;
}

}  // namespace septa::gpu
