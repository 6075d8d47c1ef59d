// dcgm-exporter's series as typed samples: which GPU or MIG instance, which
// signal, in one unit per signal, whatever the exporter's version calls them
// (../shared/docs/USAGE-FACTS.md §1.2, §1.3, §6 "Ingest"). Names go through
// an alias table kept as data (field id, metric name, unit); labels through
// their known spellings (`Hostname`|`hostname`, `UUID`|`uuid`,
// `pod`|`exported_pod`|`pod_name`, ...). Nothing is guessed: a series that
// matches no row, lacks a GPU's identity, carries a value its unit cannot
// have, or whose spellings disagree is counted and left out.
//
// The usage signal is GR_ENGINE_ACTIVE (per GPU, and per MIG instance with
// GPU_I_ID). DCGM_FI_DEV_GPU_UTIL is read, because in the exporter's
// virtual-GPUs mode its per-pod values are the weights that split one
// device's GR among the pods sharing it, but it is never a usage signal:
// it is MIG-blind and a sampled "a kernel ran" flag (§1.1, §1.5, §5).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/prometheus_text.h"

namespace septa::tenancy::usage {

// What a series measures, in the unit every sample of it is converted to.
enum class DcgmSignal {
  kGrEngineActive,  // ratio 0..1 of time the graphics/compute engine was busy
  kSmActive,        // ratio 0..1
  kTensorActive,    // ratio 0..1
  kDramActive,      // ratio 0..1
  kGpuUtil,         // ratio 0..1 (the exporter's percent / 100); never billed
  kFbUsed,          // MiB
  kFbFree,          // MiB
  kFbReserved,      // MiB
  kFbCapacity,      // MiB
  kEnergy,          // joules since the driver loaded (a counter)
  kPower,           // watts
};
std::string_view DcgmSignalName(DcgmSignal signal);  // "gr_engine_active", ...

enum class DcgmUnit { kRatio, kPercent, kMib, kBytes, kMillijoules, kJoules, kWatts };

// One row of the alias table: a metric name the exporter has used for a
// DCGM field, and the unit of its values under that name.
struct DcgmFieldAlias {
  int field_id = 0;  // DCGM's; -1 where USAGE-FACTS gives none
  std::string_view metric{};
  DcgmSignal signal = DcgmSignal::kGrEngineActive;
  DcgmUnit unit = DcgmUnit::kRatio;
  // False for a name only a third party spelled (USAGE-FACTS §1.2:
  // "unconfirmed"): read, but to be checked against a real exporter.
  bool confirmed = true;
};

// The table (USAGE-FACTS §1.1, §1.2). The 4.9.0 names of FB_* and of the
// energy counter are not known yet; their rows are added when they are.
const std::vector<DcgmFieldAlias>& DcgmAliases();
const DcgmFieldAlias* FindDcgmAlias(std::string_view metric);  // nullptr: no row

// The GPU a series is of. On a MIG instance's series `uuid` is the parent
// GPU's (§1.3) and `gi_id` the GPU-instance id.
struct DcgmGpuRef {
  std::string node{};
  std::string uuid{};
  int index = -1;  // `gpu`, the NVML index; -1 when absent
  std::optional<int> gi_id{};
  std::string mig_profile{};  // GPU_I_PROFILE, "" on whole GPUs
  std::string model{};        // modelName as the driver names it
  bool operator==(const DcgmGpuRef&) const = default;
};

// The pod labels of a series (any of their spellings), when not empty.
struct DcgmPodRef {
  std::string namespace_name{};
  std::string pod{};
  std::string container{};
  std::string vgpu{};  // set in the exporter's --kubernetes-virtual-gpus mode
  bool operator==(const DcgmPodRef&) const = default;
};

// kDevice: the GPU's or MIG instance's own value, even when the series
// names a pod (one pod of N in the default mode, a copy per pod in the
// virtual-GPUs mode: §1.4). kPerPod: the pod's own share of the device —
// GPU_UTIL (per-process SM) and FB_USED (per-process memory) of the
// virtual-GPUs mode since the exporter's PR #594, when the scrape says so.
enum class DcgmScope { kDevice, kPerPod };

struct DcgmSample {
  DcgmSignal signal = DcgmSignal::kGrEngineActive;
  DcgmScope scope = DcgmScope::kDevice;
  DcgmGpuRef gpu{};
  std::optional<DcgmPodRef> pod{};  // as labelled; only a cross-check on device samples
  double value = 0;                 // in the signal's unit (above)
  int line = 0;                     // in the exposition
};

// Why series were left out, counted per scrape (the shell exports them as
// septa_usage_unattributed_series and septa_usage_attribution_conflicts_total).
struct DcgmSeriesCounts {
  int series = 0;          // samples in the exposition
  int samples = 0;         // typed samples made
  int unknown_metric = 0;  // no row in the alias table (any other exporter's metric too)
  int unidentified = 0;    // a known field without a GPU UUID or a node
  int bad_label = 0;       // `gpu` or GPU_I_ID not a number, GPU_I_ID without GPU_I_PROFILE
  int bad_value = 0;       // NaN, ±Inf, negative, a ratio over 1, a percent over 100, DCGM's "blank"
  // Spellings that disagree (Hostname vs hostname, UUID vs uuid, pod vs
  // exported_pod), a node label that is not the scraped node, copies of one
  // device's series with different values.
  int label_conflicts = 0;
  bool operator==(const DcgmSeriesCounts&) const = default;
};

struct DcgmScrapeOptions {
  // The node whose exporter was scraped: series without a hostname label are
  // its, and a series naming another node is a conflict, never that node's.
  std::string node{};
  // The exporter runs with --kubernetes-virtual-gpus at PR #594 or later, so
  // that GPU_UTIL and FB_USED series with a `vgpu` label are per pod. Before
  // that they were the device's value copied per pod (§1.4, #582), which is
  // what is assumed when false.
  bool per_process_pod_values = false;
};

struct DcgmScrape {
  std::vector<DcgmSample> samples{};  // one per device and signal, plus per-pod ones
  DcgmSeriesCounts counts{};
};

DcgmScrape NormaliseDcgm(const PrometheusExposition& exposition, const DcgmScrapeOptions& options);

}  // namespace septa::tenancy::usage
