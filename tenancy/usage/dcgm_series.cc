#include "tenancy/usage/dcgm_series.h"

#include <charconv>
#include <cmath>
#include <map>
#include <tuple>
#include <utility>

namespace septa::tenancy::usage {

std::string_view DcgmSignalName(DcgmSignal signal) {
  switch (signal) {
    case DcgmSignal::kGrEngineActive: return "gr_engine_active";
    case DcgmSignal::kSmActive: return "sm_active";
    case DcgmSignal::kTensorActive: return "tensor_active";
    case DcgmSignal::kDramActive: return "dram_active";
    case DcgmSignal::kGpuUtil: return "gpu_util";
    case DcgmSignal::kFbUsed: return "fb_used_mib";
    case DcgmSignal::kFbFree: return "fb_free_mib";
    case DcgmSignal::kFbReserved: return "fb_reserved_mib";
    case DcgmSignal::kFbCapacity: return "fb_capacity_mib";
    case DcgmSignal::kEnergy: return "energy_joules";
    case DcgmSignal::kPower: return "power_watts";
  }
  return "unknown";
}

const std::vector<DcgmFieldAlias>& DcgmAliases() {
  using S = DcgmSignal;
  using U = DcgmUnit;
  // Field ids 1001-1005, 150 and 155 as USAGE-FACTS §1.2 gives them; the
  // others are dcgm_fields.h's. The new names are DCGM 4.7's (exporter 4.9.0).
  static const std::vector<DcgmFieldAlias> kAliases = {
      {1001, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", S::kGrEngineActive, U::kRatio, true},
      {1001, "DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO", S::kGrEngineActive, U::kRatio, true},
      {1002, "DCGM_FI_PROF_SM_ACTIVE", S::kSmActive, U::kRatio, true},
      {1002, "DCGM_FI_PROF_SM_UTIL_RATIO", S::kSmActive, U::kRatio, true},
      {1004, "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", S::kTensorActive, U::kRatio, true},
      {1004, "DCGM_FI_PROF_TENSOR_UTIL_RATIO", S::kTensorActive, U::kRatio, true},
      {1005, "DCGM_FI_PROF_DRAM_ACTIVE", S::kDramActive, U::kRatio, true},
      {1005, "DCGM_FI_PROF_DRAM_UTIL_RATIO", S::kDramActive, U::kRatio, true},
      {203, "DCGM_FI_DEV_GPU_UTIL", S::kGpuUtil, U::kPercent, true},
      {203, "DCGM_FI_DEV_GPU_UTIL_RATIO", S::kGpuUtil, U::kRatio, false},
      {252, "DCGM_FI_DEV_FB_USED", S::kFbUsed, U::kMib, true},
      {251, "DCGM_FI_DEV_FB_FREE", S::kFbFree, U::kMib, true},
      {253, "DCGM_FI_DEV_FB_RESERVED", S::kFbReserved, U::kMib, true},
      {-1, "DCGM_FI_DEV_FB_CAPACITY_BYTES", S::kFbCapacity, U::kBytes, true},
      {156, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", S::kEnergy, U::kMillijoules, true},
      {155, "DCGM_FI_DEV_POWER_USAGE", S::kPower, U::kWatts, true},
      {155, "DCGM_FI_DEV_BOARD_POWER_WATTS", S::kPower, U::kWatts, true},
  };
  return kAliases;
}

const DcgmFieldAlias* FindDcgmAlias(std::string_view metric) {
  for (const auto& alias : DcgmAliases()) {
    if (alias.metric == metric) return &alias;
  }
  return nullptr;
}

namespace dcgm_series_internal {
namespace {

// DCGM marks a value it does not have with sentinels that the exporter
// prints as numbers: 2^47 and the three after it for doubles
// (DCGM_FP64_BLANK, _NOT_FOUND, _NOT_SUPPORTED, _NOT_PERMISSIONED), and
// 0x7ffffffffffffff0 and up for integers (NVIDIA's docs show
// DCGM_FI_DEV_MEMORY_TEMP = 9223372036854775794).
bool IsDcgmBlank(double value) {
  constexpr double kFp64Blank = 140737488355328.0;
  constexpr double kInt64Blank = 9223372036854775792.0;
  return (value >= kFp64Blank && value < kFp64Blank + 16) || value >= kInt64Blank - 1024;
}

// The value in the signal's unit; nullopt when its unit cannot hold it.
// A ratio may pass 1 by rounding (DCGM computes it from counters): up to
// 1e-6 over is read as 1.
std::optional<double> Normalise(double value, DcgmUnit unit) {
  if (!std::isfinite(value) || value < 0 || IsDcgmBlank(value)) return std::nullopt;
  constexpr double kMib = 1024.0 * 1024.0;
  switch (unit) {
    case DcgmUnit::kRatio:
      if (value > 1 + 1e-6) return std::nullopt;
      return std::min(value, 1.0);
    case DcgmUnit::kPercent:
      if (value > 100 + 1e-4) return std::nullopt;
      return std::min(value, 100.0) / 100.0;
    case DcgmUnit::kMib: return value;
    case DcgmUnit::kBytes: return value / kMib;
    case DcgmUnit::kMillijoules: return value / 1000.0;
    case DcgmUnit::kJoules: return value;
    case DcgmUnit::kWatts: return value;
  }
  return std::nullopt;
}

std::optional<int> ParseInt(std::string_view text) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

// The one value of a label spelled several ways: "" when none is set,
// nullopt when two set spellings disagree.
std::optional<std::string> OneOf(const PrometheusSample& sample, std::initializer_list<std::string_view> spellings) {
  std::string value;
  for (const std::string_view spelling : spellings) {
    const auto found = sample.Label(spelling);
    if (!found || found->empty()) continue;
    if (!value.empty() && value != *found) return std::nullopt;
    value = std::string(*found);
  }
  return value;
}

enum class Outcome { kSample, kUnknownMetric, kUnidentified, kBadLabel, kBadValue, kConflict };

struct Typed {
  Outcome outcome = Outcome::kSample;
  DcgmSample sample;
};

Typed Type(const PrometheusSample& series, const DcgmScrapeOptions& options) {
  Typed out;
  const DcgmFieldAlias* alias = FindDcgmAlias(series.name);
  if (alias == nullptr) return {.outcome = Outcome::kUnknownMetric, .sample = {}};
  DcgmSample& sample = out.sample;
  sample.signal = alias->signal;
  sample.line = series.line;

  const auto node = OneOf(series, {"hostname", "Hostname"});
  const auto uuid = OneOf(series, {"UUID", "uuid"});
  const auto namespace_name = OneOf(series, {"namespace", "exported_namespace", "pod_namespace"});
  const auto pod = OneOf(series, {"pod", "exported_pod", "pod_name"});
  const auto container = OneOf(series, {"container", "exported_container", "container_name"});
  if (!node || !uuid || !namespace_name || !pod || !container) return {.outcome = Outcome::kConflict, .sample = {}};
  if (!node->empty() && !options.node.empty() && *node != options.node) {
    return {.outcome = Outcome::kConflict, .sample = {}};
  }
  sample.gpu.node = node->empty() ? options.node : *node;
  sample.gpu.uuid = *uuid;
  if (sample.gpu.node.empty() || sample.gpu.uuid.empty()) return {.outcome = Outcome::kUnidentified, .sample = {}};

  if (const auto index = series.Label("gpu"); index && !index->empty()) {
    const auto parsed = ParseInt(*index);
    if (!parsed) return {.outcome = Outcome::kBadLabel, .sample = {}};
    sample.gpu.index = *parsed;
  }
  const auto gi_id = series.Label("GPU_I_ID");
  const auto profile = series.Label("GPU_I_PROFILE");
  if (gi_id && !gi_id->empty()) {
    const auto parsed = ParseInt(*gi_id);
    if (!parsed || !profile || profile->empty()) return {.outcome = Outcome::kBadLabel, .sample = {}};
    sample.gpu.gi_id = *parsed;
    sample.gpu.mig_profile = std::string(*profile);
  } else if (profile && !profile->empty()) {
    return {.outcome = Outcome::kBadLabel, .sample = {}};
  }
  if (const auto model = series.Label("modelName")) sample.gpu.model = std::string(*model);

  if (!pod->empty()) {
    sample.pod = DcgmPodRef{.namespace_name = *namespace_name,
                            .pod = *pod,
                            .container = *container,
                            .vgpu = std::string(series.Label("vgpu").value_or(""))};
  }
  const bool per_pod_signal = sample.signal == DcgmSignal::kGpuUtil || sample.signal == DcgmSignal::kFbUsed;
  if (options.per_process_pod_values && per_pod_signal && sample.pod && !sample.pod->vgpu.empty()) {
    sample.scope = DcgmScope::kPerPod;
  }

  const auto value = Normalise(series.value, alias->unit);
  if (!value) return {.outcome = Outcome::kBadValue, .sample = {}};
  sample.value = *value;
  return out;
}

// A device's series once per scrape: (signal, node, uuid, GPU-instance id).
using DeviceKey = std::tuple<DcgmSignal, std::string, std::string, int>;

DeviceKey KeyOf(const DcgmSample& sample) {
  return {sample.signal, sample.gpu.node, sample.gpu.uuid, sample.gpu.gi_id.value_or(-1)};
}

}  // namespace
}  // namespace dcgm_series_internal

DcgmScrape NormaliseDcgm(const PrometheusExposition& exposition, const DcgmScrapeOptions& options) {
  using namespace dcgm_series_internal;
  DcgmScrape out;
  DcgmSeriesCounts& counts = out.counts;
  // A device's series may come several times: one copy per sharing pod in
  // the virtual-GPUs mode, or relabelled (exported_pod) beside the original.
  // The same value every time is the device's; different values are none.
  struct Copies {
    std::size_t first = 0;  // index into `kept`
    int count = 0;
    bool disagree = false;
  };
  std::map<DeviceKey, Copies> devices;
  std::vector<DcgmSample> kept;
  for (const PrometheusSample& series : exposition.samples) {
    ++counts.series;
    Typed typed = Type(series, options);
    switch (typed.outcome) {
      case Outcome::kSample: break;
      case Outcome::kUnknownMetric: ++counts.unknown_metric; continue;
      case Outcome::kUnidentified: ++counts.unidentified; continue;
      case Outcome::kBadLabel: ++counts.bad_label; continue;
      case Outcome::kBadValue: ++counts.bad_value; continue;
      case Outcome::kConflict: ++counts.label_conflicts; continue;
    }
    if (typed.sample.scope == DcgmScope::kDevice) {
      const auto [it, inserted] = devices.try_emplace(KeyOf(typed.sample), Copies{.first = kept.size()});
      ++it->second.count;
      if (!inserted) {
        if (kept[it->second.first].value != typed.sample.value) it->second.disagree = true;
        continue;
      }
    }
    kept.push_back(std::move(typed.sample));
  }
  for (const auto& [key, copies] : devices) {
    if (copies.disagree) counts.label_conflicts += copies.count;  // every copy: none is known right
  }
  for (DcgmSample& sample : kept) {
    if (sample.scope == DcgmScope::kDevice && devices.at(KeyOf(sample)).disagree) continue;
    out.samples.push_back(std::move(sample));
  }
  counts.samples = static_cast<int>(out.samples.size());
  return out;
}

}  // namespace septa::tenancy::usage
