#include "tenancy/usage/usage_math.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <utility>

namespace septa::tenancy::usage {

std::chrono::seconds HoardingThresholds::For(gpu::Tier tier) const {
  switch (tier) {
    case gpu::Tier::kShared: return shared;
    case gpu::Tier::kIsolated: return isolated;
    case gpu::Tier::kDedicated: return dedicated;
    case gpu::Tier::kExclusive: return exclusive;
  }
  return dedicated;
}

std::vector<Hoarder> FindHoarders(const std::vector<EntityIdle>& entities, const HoardingThresholds& thresholds) {
  struct Group {
    Holder holder;
    std::chrono::milliseconds idle = std::chrono::milliseconds::max();
    bool all_idle = true;
    bool holding_memory = false;
  };
  std::vector<Group> groups;
  for (const EntityIdle& entity : entities) {
    auto group = std::find_if(groups.begin(), groups.end(), [&](const Group& g) {
      return g.holder.tenant == entity.holder.tenant && g.holder.vcluster == entity.holder.vcluster;
    });
    if (group == groups.end()) group = groups.insert(groups.end(), Group{.holder = entity.holder});
    group->idle = std::min(group->idle, entity.idle);
    group->all_idle = group->all_idle && entity.idle >= thresholds.For(entity.holder.tier);
    group->holding_memory = group->holding_memory || entity.holding_memory;
  }
  std::vector<Hoarder> out;
  for (const Group& group : groups) {
    if (group.all_idle)
      out.push_back({.holder = group.holder, .idle = group.idle, .holding_memory = group.holding_memory});
  }
  return out;
}

namespace usage_math_internal {
namespace {

// Instants as milliseconds since the epoch: sums of durations stay exact.
using Ms = std::int64_t;
constexpr Ms kMinuteMs = 60'000;
constexpr double kMsPerHour = 3'600'000.0;

// KAI-Scheduler holds a shared GPU with a reservation pod in this namespace,
// and the exporter labels the GPU with that pod, never a tenant's (§1.4,
// §6: its labels are ignored): neither a cross-check nor a conflict.
constexpr std::string_view kKaiReservationNamespace = "kai-resource-reservation";

Ms ToMs(TimePoint t) { return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count(); }
TimePoint FromMs(Ms ms) {
  return TimePoint(std::chrono::duration_cast<TimePoint::duration>(std::chrono::milliseconds(ms)));
}

struct Range {
  Ms start = 0;
  Ms end = 0;  // exclusive
  Ms length() const { return std::max<Ms>(0, end - start); }
  bool Contains(Ms t) const { return start <= t && t < end; }
};
Range RangeOf(const TimeRange& range) { return {.start = ToMs(range.start), .end = ToMs(range.end)}; }
Range Intersect(Range a, Range b) { return {.start = std::max(a.start, b.start), .end = std::min(a.end, b.end)}; }
Ms FloorDiv(Ms a, Ms b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// A sample of one series, and the time it stands for: (t − interval, t],
// never before the series' previous sample. Kept as [start, end) in ms.
struct Segment {
  Ms t = 0;
  double value = 0;
  Range covers;
  Ms last() const { return covers.end - 1; }  // the last instant it stands for
};

std::vector<Segment> Segments(std::vector<std::pair<Ms, double>> points, Ms interval) {
  std::sort(points.begin(), points.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Segment> out;
  for (const auto& [t, value] : points) {
    if (!out.empty() && out.back().t == t) continue;  // one sample per instant: the first scrape's
    const Ms start = out.empty() ? t - interval : std::max(t - interval, out.back().t);
    out.push_back({.t = t, .value = value, .covers = {.start = start, .end = t}});
  }
  return out;
}

// The series of one GPU (gi = -1) or MIG instance.
using SeriesKey = std::tuple<std::string, std::string, int>;  // node, uuid, GPU-instance id
using GpuKey = std::pair<std::string, std::string>;           // node, uuid

SeriesKey DeviceKeyOf(const HeldEntity& entity) {
  return {entity.node, entity.gpu_uuid, entity.kind == HeldKind::kMigInstance ? entity.gi_id : -1};
}

struct PodLabel {
  Ms t = 0;
  std::string namespace_name;
};

// Every sample of the input, by series.
struct Series {
  std::map<SeriesKey, std::vector<Segment>> activity;  // GR_ENGINE_ACTIVE
  std::map<SeriesKey, std::vector<Segment>> memory;    // FB_USED of the device or instance
  std::map<GpuKey, std::vector<std::pair<Ms, double>>> energy;
  std::map<GpuKey, std::map<Ms, std::map<std::string, double>>> pod_util;  // per scrape, per namespace
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<Segment>> pod_memory;  // node, uuid, ns
  std::map<SeriesKey, std::vector<PodLabel>> pod_labels;  // pod labels of device series, to cross-check
  int unknown_gpu_samples = 0;
};

Series Collect(const UsageInput& input, const std::set<GpuKey>& known, Ms interval) {
  Series out;
  std::map<SeriesKey, std::vector<std::pair<Ms, double>>> activity, memory;
  std::map<std::tuple<std::string, std::string, std::string>, std::map<Ms, double>> pod_memory;
  for (const NodeScrape& scrape : input.scrapes) {
    const Ms t = ToMs(scrape.at);
    for (const DcgmSample& sample : scrape.samples) {
      const GpuKey gpu{sample.gpu.node, sample.gpu.uuid};
      if (!known.contains(gpu)) {
        ++out.unknown_gpu_samples;
        continue;
      }
      const SeriesKey key{sample.gpu.node, sample.gpu.uuid, sample.gpu.gi_id.value_or(-1)};
      if (sample.scope == DcgmScope::kPerPod) {
        if (!sample.pod) continue;  // NormaliseDcgm never makes one; a hand-made one names no pod
        const std::string& ns = sample.pod->namespace_name;
        if (sample.signal == DcgmSignal::kGpuUtil) out.pod_util[gpu][t][ns] += sample.value;
        if (sample.signal == DcgmSignal::kFbUsed) pod_memory[{gpu.first, gpu.second, ns}][t] += sample.value;
        continue;
      }
      switch (sample.signal) {
        case DcgmSignal::kGrEngineActive:
          activity[key].emplace_back(t, sample.value);
          if (sample.pod && sample.pod->namespace_name != kKaiReservationNamespace)
            out.pod_labels[key].push_back({.t = t, .namespace_name = sample.pod->namespace_name});
          break;
        case DcgmSignal::kFbUsed: memory[key].emplace_back(t, sample.value); break;
        case DcgmSignal::kEnergy:
          if (key == SeriesKey{gpu.first, gpu.second, -1}) out.energy[gpu].emplace_back(t, sample.value);
          break;
        default: break;  // GPU_UTIL is never a usage signal; the others are not used here
      }
    }
  }
  for (auto& [key, points] : activity) out.activity[key] = Segments(std::move(points), interval);
  for (auto& [key, points] : memory) out.memory[key] = Segments(std::move(points), interval);
  for (auto& [key, by_time] : pod_memory) {
    out.pod_memory[key] = Segments(std::vector<std::pair<Ms, double>>(by_time.begin(), by_time.end()), interval);
  }
  return out;
}

Status Validate(const UsageInput& input, const UsageSettings& settings, const std::set<GpuKey>& known) {
  if (RangeOf(input.window).length() <= 0) return InvalidArgument("usage window: its end is not after its start");
  if (settings.scrape_interval.count() <= 0 || settings.idle_window.count() <= 0) {
    return InvalidArgument("usage settings: scrape_interval and idle_window must be positive");
  }
  std::map<GpuKey, std::vector<std::pair<Ms, double>>> events;  // +w at start, −w at end
  for (const HeldEntity& entity : input.held) {
    const GpuKey gpu{entity.node, entity.gpu_uuid};
    if (!known.contains(gpu)) {
      return InvalidArgument("held entity of " + entity.holder.tenant + "/" + entity.holder.vcluster + " on GPU " +
                             entity.gpu_uuid + " of node " + entity.node + ", which is not among the GPUs");
    }
    const Range held = RangeOf(entity.held);
    if (held.length() <= 0) continue;
    events[gpu].emplace_back(held.start, entity.weight);
    events[gpu].emplace_back(held.end, -entity.weight);
  }
  for (auto& [gpu, changes] : events) {
    // Ends before starts at one instant: a hand-over is not an overlap.
    std::sort(changes.begin(), changes.end());
    double held = 0;
    for (const auto& [t, delta] : changes) {
      held += delta;
      if (held > 1 + 1e-9) {
        return InvalidArgument("GPU " + gpu.second + " of node " + gpu.first + " is held " + std::to_string(held) +
                               " times at " + FormatRfc3339(FromMs(t)) + " (overlapping reservations)");
      }
    }
  }
  return Status::Ok();
}

struct Window {
  double activity_max = 0;
  std::optional<double> fb_last;
};

class Calculator {
 public:
  Calculator(const UsageInput& input, const UsageSettings& settings, Series series)
      : input_(input), settings_(settings), series_(std::move(series)), window_(RangeOf(input.window)) {
    for (std::size_t i = 0; i < input_.held.size(); ++i) {
      const HeldEntity& entity = input_.held[i];
      if (entity.kind == HeldKind::kShare) shares_on_[{entity.node, entity.gpu_uuid}].push_back(i);
      on_gpu_[{entity.node, entity.gpu_uuid}].push_back(i);
      by_series_[DeviceKeyOf(entity)].push_back(i);
    }
  }

  UsageReport Run() {
    UsageReport report;
    for (std::size_t i = 0; i < input_.held.size(); ++i) report.entities.push_back(Entity(i, report));
    for (const CapacityGpu& gpu : input_.gpus) report.devices.push_back(Device(gpu, report.entities, report.minutes));
    for (const EntityUsage& entity : report.entities) {
      report.allocated_gpu_hours += entity.allocated_gpu_hours;
      report.used_gpu_hours += entity.used_gpu_hours;
    }
    for (const DeviceUsage& device : report.devices) {
      report.capacity_gpu_hours += device.capacity_gpu_hours;
      report.unreserved_gpu_hours += device.unreserved_gpu_hours;
    }
    report.hoarders = Hoarders(report.entities);
    report.unknown_gpu_samples = series_.unknown_gpu_samples;
    report.unheld_activity_samples = UnheldActivity();
    report.attribution_conflicts = conflicts_ + PodConflicts();
    return report;
  }

 private:
  bool HeldAt(const HeldEntity& entity, Ms t) const { return RangeOf(entity.held).Contains(t); }

  static bool RunningAt(const HeldEntity& entity, Ms t) {
    if (!entity.pods_running) return true;
    return std::any_of(entity.pods_running->begin(), entity.pods_running->end(),
                       [&](const TimeRange& range) { return RangeOf(range).Contains(t); });
  }

  // The part of its GPU's measurement that share `index` gets for the
  // sample at `t`, which stands for time up to `last`.
  double ShareFraction(std::size_t index, Ms t, Ms last) const {
    const HeldEntity& entity = input_.held[index];
    const GpuKey gpu{entity.node, entity.gpu_uuid};
    const auto& shares = shares_on_.at(gpu);
    if (const auto device = series_.pod_util.find(gpu); device != series_.pod_util.end()) {
      if (const auto at = device->second.find(t); at != device->second.end()) {
        double total = 0;
        for (const auto& [ns, util] : at->second) total += util;
        const auto own = at->second.find(entity.host_namespace);
        if (total <= 0 || own == at->second.end()) return 0;
        double same_namespace_milli = 0;  // shares of one namespace split its pods' part by milli
        for (const std::size_t other : shares) {
          const HeldEntity& share = input_.held[other];
          if (share.host_namespace == entity.host_namespace && HeldAt(share, last)) {
            same_namespace_milli += share.milli_gpu;
          }
        }
        return same_namespace_milli <= 0 ? 0 : own->second / total * (entity.milli_gpu / same_namespace_milli);
      }
    }
    if (!RunningAt(entity, last)) return 0;
    double running_milli = 0;
    for (const std::size_t other : shares) {
      const HeldEntity& share = input_.held[other];
      if (HeldAt(share, last) && RunningAt(share, last)) running_milli += share.milli_gpu;
    }
    return running_milli <= 0 ? 0 : entity.milli_gpu / running_milli;
  }

  const std::vector<Segment>* Find(const std::map<SeriesKey, std::vector<Segment>>& map, const SeriesKey& key) const {
    const auto it = map.find(key);
    return it == map.end() ? nullptr : &it->second;
  }

  const std::vector<Segment>* MemoryOf(const HeldEntity& entity) const {
    if (entity.kind == HeldKind::kShare) {
      const auto it = series_.pod_memory.find({entity.node, entity.gpu_uuid, entity.host_namespace});
      return it == series_.pod_memory.end() ? nullptr : &it->second;
    }
    return Find(series_.memory, DeviceKeyOf(entity));
  }

  EntityUsage Entity(std::size_t index, UsageReport& report) {
    const HeldEntity& entity = input_.held[index];
    EntityUsage out;
    out.held = index;
    const Range held = Intersect(RangeOf(entity.held), window_);
    if (held.length() <= 0) return out;
    const double w = entity.weight;
    std::map<Ms, MinuteRollup> minutes;
    const auto minute = [&](Ms t) -> MinuteRollup& {
      const Ms m = FloorDiv(t, kMinuteMs);
      auto [it, inserted] = minutes.try_emplace(m);
      if (inserted) {
        it->second.held = index;
        it->second.minute = FromMs(m * kMinuteMs);
      }
      return it->second;
    };
    for (Ms m = FloorDiv(held.start, kMinuteMs); m * kMinuteMs < held.end; ++m) {
      const Range piece = Intersect(held, {.start = m * kMinuteMs, .end = (m + 1) * kMinuteMs});
      minute(piece.start).allocated_gpu_seconds += w * static_cast<double>(piece.length()) / 1000.0;
    }
    // Split over the minutes it spans: `add(minute, covered ms)`.
    const auto spread = [&](Range covered, const auto& add) {
      for (Ms start = covered.start; start < covered.end;) {
        const Ms end = std::min(covered.end, (FloorDiv(start, kMinuteMs) + 1) * kMinuteMs);
        add(minute(start), end - start);
        start = end;
      }
    };

    const Ms window_ms = settings_.idle_window.count();
    std::map<Ms, Window> windows;
    double measured_ms = 0;  // weighted
    double used_ms = 0;      // weighted
    const SeriesKey key = DeviceKeyOf(entity);
    if (const auto* segments = Find(series_.activity, key)) {
      for (const Segment& segment : *segments) {
        const Range covered = Intersect(segment.covers, held);
        if (covered.length() <= 0) continue;
        const double part = entity.kind == HeldKind::kShare ? ShareFraction(index, segment.t, covered.end - 1) : 1.0;
        const double activity = segment.value * part;
        // GPU-ms of the device: a share's part of the GPU, else w × the instance's or GPU's ratio.
        const double rate = entity.kind == HeldKind::kShare ? activity : w * activity;
        measured_ms += w * static_cast<double>(covered.length());
        used_ms += rate * static_cast<double>(covered.length());
        spread(covered, [&](MinuteRollup& rollup, Ms ms) {
          rollup.measured_gpu_seconds += w * static_cast<double>(ms) / 1000.0;
          rollup.used_gpu_seconds += rate * static_cast<double>(ms) / 1000.0;
        });
        MinuteRollup& last = minute(covered.end - 1);
        ++last.samples;
        last.activity_max = std::max(last.activity_max, activity);
        Window& idle_window = windows[FloorDiv(covered.end - 1, window_ms)];
        idle_window.activity_max = std::max(idle_window.activity_max, activity);
      }
      if (!entity.host_namespace.empty() && entity.kind != HeldKind::kShare) {
        if (const auto labels = series_.pod_labels.find(key); labels != series_.pod_labels.end()) {
          for (const PodLabel& label : labels->second) {
            if (held.Contains(label.t - 1) && label.namespace_name != entity.host_namespace) ++conflicts_;
          }
        }
      }
    }
    if (const auto* segments = MemoryOf(entity)) {
      for (const Segment& segment : *segments) {
        const Range covered = Intersect(segment.covers, held);
        if (covered.length() <= 0) continue;
        out.max_fb_used_mib = std::max(out.max_fb_used_mib.value_or(0), segment.value);
        MinuteRollup& last = minute(covered.end - 1);
        last.fb_max_mib = std::max(last.fb_max_mib.value_or(0), segment.value);
        const auto idle_window = windows.find(FloorDiv(covered.end - 1, window_ms));
        if (idle_window != windows.end()) idle_window->second.fb_last = segment.value;
      }
    }

    Ms run = 0;
    bool run_holds_memory = false;
    for (const auto& [k, state] : windows) {
      const Range piece = Intersect(held, {.start = k * window_ms, .end = (k + 1) * window_ms});
      if (state.activity_max < settings_.idle_below) {
        ++out.idle_windows;
        run += piece.length();
        if (state.fb_last) run_holds_memory = *state.fb_last > settings_.holding_memory_above_mib;
      } else {
        ++out.active_windows;
        run = 0;
        run_holds_memory = false;
      }
      out.longest_idle = std::max(out.longest_idle, std::chrono::milliseconds(run));
    }
    for (const auto& [k, state] : windows) {
      out.windows.push_back(
          {.start = FromMs(k * window_ms), .activity_max = state.activity_max, .used_memory_mib = state.fb_last});
    }
    out.idle = std::chrono::milliseconds(run);
    out.holding_memory = run > 0 && run_holds_memory;

    out.allocated_gpu_hours = w * static_cast<double>(held.length()) / kMsPerHour;
    out.measured_gpu_hours = measured_ms / kMsPerHour;
    out.used_gpu_hours = used_ms / kMsPerHour;
    out.waste_gpu_hours = std::max(0.0, out.measured_gpu_hours - out.used_gpu_hours);
    out.coverage = out.allocated_gpu_hours > 0 ? out.measured_gpu_hours / out.allocated_gpu_hours : 0;
    if (out.measured_gpu_hours > 0) out.efficiency = out.used_gpu_hours / out.measured_gpu_hours;
    if (out.max_fb_used_mib && *out.max_fb_used_mib > 0) {
      out.memory_over_request = entity.reserved_memory_mib / *out.max_fb_used_mib;
    }
    for (auto& [m, rollup] : minutes) report.minutes.push_back(std::move(rollup));
    return out;
  }

  DeviceUsage Device(const CapacityGpu& gpu, const std::vector<EntityUsage>& entities,
                     const std::vector<MinuteRollup>& rollups) const {
    DeviceUsage out{.node = gpu.node, .uuid = gpu.uuid};
    const Range present = Intersect(RangeOf(gpu.present), window_);
    if (present.length() <= 0) return out;
    out.capacity_gpu_hours = static_cast<double>(present.length()) / kMsPerHour;
    std::map<Ms, DeviceMinute> minutes;
    const auto minute = [&](Ms m) -> DeviceMinute& {
      auto [it, inserted] = minutes.try_emplace(m);
      if (inserted) it->second.minute = FromMs(m * kMinuteMs);
      return it->second;
    };
    // `add(minute, ms)` for each minute `range` spans.
    const auto spread = [&](Range range, const auto& add) {
      for (Ms start = range.start; start < range.end;) {
        const Ms m = FloorDiv(start, kMinuteMs);
        const Ms end = std::min(range.end, (m + 1) * kMinuteMs);
        add(minute(m), static_cast<double>(end - start) / 1000.0);
        start = end;
      }
    };
    spread(present, [](DeviceMinute& m, double s) { m.capacity_gpu_seconds += s; });
    double reserved_ms = 0;
    static const std::vector<std::size_t> kNothing;
    const auto held_here = on_gpu_.find({gpu.node, gpu.uuid});
    for (const std::size_t index : held_here == on_gpu_.end() ? kNothing : held_here->second) {
      const EntityUsage& usage = entities[index];
      const HeldEntity& entity = input_.held[index];
      const Range held = Intersect(RangeOf(entity.held), present);
      reserved_ms += entity.weight * static_cast<double>(held.length());
      spread(held, [&](DeviceMinute& m, double s) { m.reserved_gpu_seconds += entity.weight * s; });
      out.attributed_gpu_hours += usage.used_gpu_hours;
      if (entity.kind == HeldKind::kMigInstance) out.used_gpu_hours += usage.used_gpu_hours;
    }
    for (const MinuteRollup& rollup : rollups) {
      const HeldEntity& entity = input_.held[rollup.held];
      if (entity.kind != HeldKind::kMigInstance || entity.node != gpu.node || entity.gpu_uuid != gpu.uuid) continue;
      minute(FloorDiv(ToMs(rollup.minute), kMinuteMs)).used_gpu_seconds += rollup.used_gpu_seconds;
    }
    out.reserved_gpu_hours = reserved_ms / kMsPerHour;
    out.unreserved_gpu_hours = out.capacity_gpu_hours - out.reserved_gpu_hours;
    if (const auto* segments = Find(series_.activity, {gpu.node, gpu.uuid, -1})) {
      for (const Segment& segment : *segments) {
        const Range covered = Intersect(segment.covers, present);
        out.used_gpu_hours += segment.value * static_cast<double>(covered.length()) / kMsPerHour;
        spread(covered, [&](DeviceMinute& m, double s) { m.used_gpu_seconds += segment.value * s; });
      }
    }
    for (auto& [m, device_minute] : minutes) out.minutes.push_back(device_minute);
    if (const auto energy = series_.energy.find({gpu.node, gpu.uuid}); energy != series_.energy.end()) {
      std::vector<std::pair<Ms, double>> points;
      for (const auto& point : energy->second) {
        if (point.first > present.start && point.first <= present.end) points.push_back(point);
      }
      std::sort(points.begin(), points.end());
      if (points.size() >= 2) {
        double joules = 0;
        for (std::size_t i = 1; i < points.size(); ++i) {
          const double delta = points[i].second - points[i - 1].second;
          joules += delta >= 0 ? delta : points[i].second;  // a reset: counting restarted from 0
        }
        out.energy_joules = joules;
      }
    }
    return out;
  }

  std::vector<Hoarder> Hoarders(const std::vector<EntityUsage>& entities) const {
    std::vector<EntityIdle> idle;
    for (const EntityUsage& usage : entities) {
      const HeldEntity& entity = input_.held[usage.held];
      if (!RangeOf(entity.held).Contains(window_.end - 1)) continue;  // not held at the window's end
      idle.push_back({.holder = entity.holder, .idle = usage.idle, .holding_memory = usage.holding_memory});
    }
    return FindHoarders(idle, settings_.hoarding);
  }

  // GR samples showing activity where nobody holds the GPU or instance.
  int UnheldActivity() const {
    int count = 0;
    for (const auto& [key, segments] : series_.activity) {
      const auto holders = by_series_.find(key);
      for (const Segment& segment : segments) {
        if (segment.value < settings_.idle_below || !window_.Contains(segment.last())) continue;
        const bool held = holders != by_series_.end() &&
                          std::any_of(holders->second.begin(), holders->second.end(),
                                      [&](std::size_t i) { return HeldAt(input_.held[i], segment.last()); });
        if (!held) ++count;
      }
    }
    return count;
  }

  // Per-pod values of a namespace that holds no share of that GPU then.
  int PodConflicts() const {
    int count = 0;
    for (const auto& [gpu, by_time] : series_.pod_util) {
      const auto shares = shares_on_.find(gpu);
      for (const auto& [t, by_namespace] : by_time) {
        const Ms last = t - 1;  // a named copy: clang 14's lambdas cannot capture structured bindings
        if (!window_.Contains(last)) continue;
        for (const auto& entry : by_namespace) {
          const std::string& ns = entry.first;
          if (ns == kKaiReservationNamespace) continue;
          const bool held = shares != shares_on_.end() &&
                            std::any_of(shares->second.begin(), shares->second.end(), [&](std::size_t i) {
                              return input_.held[i].host_namespace == ns && HeldAt(input_.held[i], last);
                            });
          if (!held) ++count;
        }
      }
    }
    return count;
  }

  const UsageInput& input_;
  const UsageSettings& settings_;
  Series series_;
  Range window_;
  // Indices into input_.held: the shares of a GPU, everything held on a
  // GPU, and the holders of one series' key.
  std::map<GpuKey, std::vector<std::size_t>> shares_on_;
  std::map<GpuKey, std::vector<std::size_t>> on_gpu_;
  std::map<SeriesKey, std::vector<std::size_t>> by_series_;
  int conflicts_ = 0;
};

}  // namespace
}  // namespace usage_math_internal

Result<UsageReport> ComputeUsage(const UsageInput& input, const UsageSettings& settings) {
  using namespace usage_math_internal;
  std::set<GpuKey> known;
  for (const CapacityGpu& gpu : input.gpus) known.insert({gpu.node, gpu.uuid});
  SEPTA_RETURN_IF_ERROR(Validate(input, settings, known));
  Series series = Collect(input, known, settings.scrape_interval.count());
  return Calculator(input, settings, std::move(series)).Run();
}

}  // namespace septa::tenancy::usage
