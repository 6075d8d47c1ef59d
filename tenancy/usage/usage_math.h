// The usage maths of issue 34, on samples and instants passed in
// (../shared/docs/USAGE-FACTS.md §4, §5, §6). Per held entity (a whole GPU,
// a MIG instance, a share: held_capacity.h) over a window:
//  - allocated GPU-hours A = w · held time (chargeback: what is held is
//    billed, used or not);
//  - measured GPU-hours M = w · the held time that samples cover. A sample
//    at t stands for (t − scrape_interval, t], never for more than the time
//    since the series' previous sample: a missed scrape leaves its interval
//    uncovered, which lowers coverage = M / A and is never read as idle;
//  - used GPU-hours U = Σ w · GR · covered time for whole GPUs and MIG
//    instances (GR of an instance is relative to the instance, §1.5); a
//    share gets GR · f · covered time of its GPU's one measurement, f being
//    its part of the device (below), so that the shares of a GPU never add
//    up to more than the GPU measured (conservation, §5 D);
//  - waste W = M − U (not below 0: a share may use more than its weight on
//    a time-sliced GPU, seen as efficiency U / M above 1); efficiency U / M.
//    Time without samples is neither used nor waste: A = M + unmeasured;
//  - memory over-request = reserved memory / the most FB_USED seen;
//  - idle windows (Run:ai's rule): a window of `idle_window` (30 s) whose
//    largest activity is below `idle_below` (0.01) is idle; idle seconds
//    add up over consecutive idle windows and restart at 0 on an active one;
//    a window without samples neither adds nor restarts;
//  - one-minute rollups of all of the above, for the store.
// A share's part f of its GPU at a scrape: by the exporter's per-pod values
// when it has them (GPU_UTIL per pod, summed per host namespace, over all
// pods' sum: a GPU whose pods show no activity gives none to anyone), else
// by reserved share among the shares whose pods run then (milli_gpu over
// their sum). Never by adding the exporter's per-pod copies.
// Per GPU: capacity hours (1 per GPU-hour present), reserved hours, and the
// unreserved pool = capacity − reserved, so that Σ tenants + pool = capacity.
// Hoarders: a reservation (tenant, virtual cluster) still held at the window's
// end all of whose entities have idle seconds of at least its tier's
// threshold; "holding memory" when one of them keeps FB_USED above
// `holding_memory_above_mib` in its idle run.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/time_point.h"
#include "gpu/inventory.h"
#include "tenancy/usage/dcgm_series.h"
#include "tenancy/usage/held_capacity.h"

namespace septa::tenancy::usage {

// One scrape of one node's exporter, normalised (dcgm_series.h), at the
// instant the scraper read it.
struct NodeScrape {
  std::string node{};
  TimePoint at{};
  std::vector<DcgmSample> samples{};
};

// USAGE-FACTS §4: shared 15 min, isolated 30, dedicated 60, exclusive 120.
struct HoardingThresholds {
  std::chrono::seconds shared{15 * 60};
  std::chrono::seconds isolated{30 * 60};
  std::chrono::seconds dedicated{60 * 60};
  std::chrono::seconds exclusive{120 * 60};
  std::chrono::seconds For(gpu::Tier tier) const;
};

struct UsageSettings {
  std::chrono::milliseconds scrape_interval{30'000};  // the exporter's and the scraper's
  std::chrono::milliseconds idle_window{30'000};
  double idle_below = 0.01;
  double holding_memory_above_mib = 1024;
  HoardingThresholds hoarding{};
};

// A GPU of the cluster and when it was there: capacity.
struct CapacityGpu {
  std::string node{};
  std::string uuid{};
  TimeRange present{};
};

struct UsageInput {
  TimeRange window{};
  std::vector<CapacityGpu> gpus{};
  std::vector<HeldEntity> held{};
  std::vector<NodeScrape> scrapes{};
};

// One idle window (§4) an entity's samples fell in: its start on the epoch
// grid, the largest activity sampled in it, and the last FB_USED.
struct IdleWindowSample {
  TimePoint start{};
  double activity_max = 0;
  std::optional<double> used_memory_mib{};
  bool operator==(const IdleWindowSample&) const = default;
};

struct EntityUsage {
  std::size_t held = 0;  // index into UsageInput::held
  double allocated_gpu_hours = 0;
  double measured_gpu_hours = 0;
  double used_gpu_hours = 0;
  double waste_gpu_hours = 0;
  double coverage = 0;                 // measured / allocated; 0 when nothing was allocated
  std::optional<double> efficiency{};  // used / measured; none when nothing was measured
  std::optional<double> max_fb_used_mib{};
  std::optional<double> memory_over_request{};  // reserved / max FB_USED, when that is above 0
  int idle_windows = 0;
  int active_windows = 0;
  std::chrono::milliseconds idle{0};          // the idle run at the end
  std::chrono::milliseconds longest_idle{0};  // the longest idle run
  bool holding_memory = false;                // FB_USED above the threshold in the idle run at the end
  // The windows sampled, in order: what carries an idle run from one
  // report to the next (idle_run.h) when usage is computed scrape by scrape.
  std::vector<IdleWindowSample> windows{};
};

struct MinuteRollup {
  std::size_t held = 0;  // index into UsageInput::held
  TimePoint minute{};    // its start
  double allocated_gpu_seconds = 0;
  double measured_gpu_seconds = 0;
  double used_gpu_seconds = 0;
  double activity_max = 0;  // the largest GR (a share's: GR · f) of the minute's samples
  std::optional<double> fb_max_mib{};
  int samples = 0;
};

// One GPU's minute: capacity present, held (Σ w), and measured.
struct DeviceMinute {
  TimePoint minute{};
  double capacity_gpu_seconds = 0;
  double reserved_gpu_seconds = 0;
  double used_gpu_seconds = 0;
  bool operator==(const DeviceMinute&) const = default;
};

struct DeviceUsage {
  std::string node{};
  std::string uuid{};
  double capacity_gpu_hours = 0;
  double reserved_gpu_hours = 0;
  double unreserved_gpu_hours = 0;  // capacity − reserved
  // What the GPU measured: GR · covered time on a whole or time-sliced GPU,
  // Σ w · GR · covered time over the held instances of a MIG GPU.
  double used_gpu_hours = 0;
  double attributed_gpu_hours = 0;        // Σ of its entities' used: never above used_gpu_hours
  std::optional<double> energy_joules{};  // the counter's increase over the window (resets counted from 0)
  std::vector<DeviceMinute> minutes{};    // the minutes it was present in, in order
};

struct Hoarder {
  Holder holder{};
  std::chrono::milliseconds idle{0};  // the least idle run among its entities
  bool holding_memory = false;
  bool operator==(const Hoarder&) const = default;
};

// One held entity's idle run now, for FindHoarders.
struct EntityIdle {
  Holder holder{};
  std::chrono::milliseconds idle{0};
  bool holding_memory = false;
};

// The holders (tenant, virtual cluster) all of whose entities have been idle
// at least their tier's threshold, in order of first appearance.
std::vector<Hoarder> FindHoarders(const std::vector<EntityIdle>& entities, const HoardingThresholds& thresholds);

struct UsageReport {
  std::vector<EntityUsage> entities{};  // one per UsageInput::held, in order
  std::vector<MinuteRollup> minutes{};  // by entity, then minute
  std::vector<DeviceUsage> devices{};   // one per UsageInput::gpus, in order
  double capacity_gpu_hours = 0;
  double allocated_gpu_hours = 0;   // Σ entities
  double unreserved_gpu_hours = 0;  // the platform's idle pool: capacity − allocated
  double used_gpu_hours = 0;        // Σ entities
  std::vector<Hoarder> hoarders{};
  // Counted, never guessed: samples of a GPU that is not in `gpus` (a UUID
  // that changed, a node not in the inventory); GR samples showing activity
  // on capacity that nobody holds; pod labels of a held entity's series
  // naming another namespace than its holder's, and per-pod values of a
  // namespace holding no share of that GPU.
  int unknown_gpu_samples = 0;
  int unheld_activity_samples = 0;
  int attribution_conflicts = 0;
};

// INVALID_ARGUMENT for an empty window, a setting that is not positive, an
// entity on a GPU that `gpus` lacks, or entities holding more than one GPU
// of one GPU at some instant.
Result<UsageReport> ComputeUsage(const UsageInput& input, const UsageSettings& settings);

}  // namespace septa::tenancy::usage
