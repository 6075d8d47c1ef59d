#include "services/kubesim/dcgm_text.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>

namespace septa::kubesim {

std::string_view DcgmExporterVersionName(DcgmExporterVersion version) {
  switch (version) {
    case DcgmExporterVersion::k4_8_2: return "4.8.2";
    case DcgmExporterVersion::k4_8_3: return "4.8.3";
    case DcgmExporterVersion::k4_9: return "4.9";
  }
  return "4.8.3";
}

Result<DcgmExporterVersion> ParseDcgmExporterVersion(std::string_view text) {
  const std::string_view given = text;
  // An image tag names DCGM's version first: "4.6.0-4.8.3" is exporter 4.8.3.
  if (const auto dash = text.rfind('-'); dash != std::string_view::npos) text = text.substr(dash + 1);
  std::array<int, 3> parts{0, 0, 0};
  std::size_t count = 0;
  const char* at = text.data();
  const char* end = text.data() + text.size();
  while (count < parts.size()) {
    const auto [next, ec] = std::from_chars(at, end, parts[count]);
    if (ec != std::errc() || next == at) break;
    ++count;
    at = next;
    if (at == end || *at != '.') break;
    ++at;
  }
  if (count < 2 || at != end) {
    return InvalidArgument("dcgm-exporter version \"" + std::string(given) + "\": expected 4.8.2, 4.8.3 or 4.9");
  }
  const auto [major, minor, patch] = parts;
  if (major > 4 || (major == 4 && minor > 9)) {
    return InvalidArgument("dcgm-exporter version \"" + std::string(given) +
                           "\": kubesim knows the output of releases up to 4.9");
  }
  if (major == 4 && minor == 9) return DcgmExporterVersion::k4_9;
  if (major == 4 && minor == 8 && patch >= 3) return DcgmExporterVersion::k4_8_3;
  return DcgmExporterVersion::k4_8_2;
}

std::string_view DcgmPodMappingName(DcgmPodMapping mapping) {
  switch (mapping) {
    case DcgmPodMapping::kOff: return "off";
    case DcgmPodMapping::kLastPodWins: return "last-pod-wins";
    case DcgmPodMapping::kVirtualGpus: return "virtual-gpus";
  }
  return "last-pod-wins";
}

Result<DcgmPodMapping> ParseDcgmPodMapping(std::string_view text) {
  for (DcgmPodMapping mapping : {DcgmPodMapping::kOff, DcgmPodMapping::kLastPodWins, DcgmPodMapping::kVirtualGpus}) {
    if (DcgmPodMappingName(mapping) == text) return mapping;
  }
  return InvalidArgument("dcgm-exporter pod mapping \"" + std::string(text) +
                         "\": expected off, last-pod-wins or virtual-gpus");
}

namespace {

// What a metric measures, whatever the version calls it.
enum class DcgmField { kPower, kEnergy, kGpuUtil, kFbFree, kFbUsed, kFbReserved, kFbCapacity, kGrEngine };
// The unit of its values under that name.
enum class DcgmTextUnit { kWatts, kMillijoules, kPercent, kRatio, kMib, kBytes };

struct DcgmMetricRow {
  DcgmField field = DcgmField::kGrEngine;
  std::string_view name{};
  std::string_view type{};
  std::string_view help{};
  DcgmTextUnit unit = DcgmTextUnit::kRatio;
};

// In the order of the exporter's counters CSV (dcp-metrics-included.csv):
// power, then utilization, then memory, then profiling.
const std::vector<DcgmMetricRow>& RowsOf(DcgmExporterVersion version) {
  using F = DcgmField;
  using U = DcgmTextUnit;
  static const std::vector<DcgmMetricRow> kBefore49 = {
      {F::kPower, "DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).", U::kWatts},
      {F::kEnergy, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", "Total energy consumption since boot (in mJ).",
       U::kMillijoules},
      {F::kGpuUtil, "DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).", U::kPercent},
      {F::kFbFree, "DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).", U::kMib},
      {F::kFbUsed, "DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).", U::kMib},
      {F::kFbReserved, "DCGM_FI_DEV_FB_RESERVED", "gauge", "Framebuffer memory reserved (in MiB).", U::kMib},
      {F::kGrEngine, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge", "Ratio of time the graphics engine is active.",
       U::kRatio},
  };
  // DCGM 4.7's names (USAGE-FACTS §1.2). GPU_UTIL_RATIO is the one name
  // only a third party spelled (unconfirmed there, and so here). The names
  // FB_USED, FB_FREE, FB_RESERVED and the energy counter take in 4.9 are not
  // known: left out rather than invented.
  static const std::vector<DcgmMetricRow> k49 = {
      {F::kPower, "DCGM_FI_DEV_BOARD_POWER_WATTS", "gauge", "Board power draw (in W).", U::kWatts},
      {F::kGpuUtil, "DCGM_FI_DEV_GPU_UTIL_RATIO", "gauge", "GPU utilization (ratio).", U::kRatio},
      {F::kFbCapacity, "DCGM_FI_DEV_FB_CAPACITY_BYTES", "gauge", "Framebuffer memory capacity (in bytes).", U::kBytes},
      {F::kGrEngine, "DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO", "gauge", "Ratio of time the graphics engine is active.",
       U::kRatio},
  };
  return version == DcgmExporterVersion::k4_9 ? k49 : kBefore49;
}

// GPU_UTIL is not reported per MIG instance (§1.5).
bool WholeGpuOnly(DcgmField field) { return field == DcgmField::kGpuUtil; }

// The fields the virtual-GPUs mode reports per pod since PR #594.
bool PerProcess(DcgmField field) { return field == DcgmField::kGpuUtil || field == DcgmField::kFbUsed; }

std::string Integer(double value) { return std::to_string(std::llround(std::max(value, 0.0))); }

// Six decimals, as Go's %f prints a float64.
std::string Fixed(double value) {
  std::array<char, 64> buffer{};
  const auto [end, ec] =
      std::to_chars(buffer.data(), buffer.data() + buffer.size(), value, std::chars_format::fixed, 6);
  if (ec != std::errc()) return "0.000000";
  return std::string(buffer.data(), end);
}

std::string InUnit(double value, DcgmTextUnit unit) {
  constexpr double kMib = 1024.0 * 1024.0;
  switch (unit) {
    case DcgmTextUnit::kWatts: return Fixed(value);
    case DcgmTextUnit::kMillijoules: return Integer(value);
    case DcgmTextUnit::kPercent: return Integer(std::clamp(value, 0.0, 100.0));
    case DcgmTextUnit::kRatio: return Fixed(std::clamp(value, 0.0, 100.0) / 100.0);
    case DcgmTextUnit::kMib: return Integer(value);
    case DcgmTextUnit::kBytes: return Integer(value * kMib);
  }
  return "0";
}

// The device's value of a field, in the field's base quantity (W, mJ, %, MiB).
double DeviceValue(DcgmField field, const DcgmDevice& device) {
  switch (field) {
    case DcgmField::kPower: return device.power_watts;
    case DcgmField::kEnergy: return device.energy_millijoules;
    case DcgmField::kGpuUtil:
    case DcgmField::kGrEngine: return device.busy_percent;
    case DcgmField::kFbFree: return std::max(0.0, device.total_mib - device.used_mib - device.reserved_mib);
    case DcgmField::kFbUsed: return device.used_mib;
    case DcgmField::kFbReserved: return device.reserved_mib;
    case DcgmField::kFbCapacity: return device.total_mib;
  }
  return 0;
}

// A pod's own value of a per-process field.
double PodValue(DcgmField field, const DcgmPodOnDevice& pod) {
  return field == DcgmField::kFbUsed ? pod.memory_mib : pod.busy_percent;
}

void AppendEscaped(std::string& out, std::string_view value) {
  for (const char c : value) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
}

void AppendLabel(std::string& out, std::string_view name, std::string_view value) {
  if (out.back() != '{') out += ',';
  out += name;
  out += "=\"";
  AppendEscaped(out, value);
  out += '"';
}

// "{gpu=...,...,<driver label>" without the closing brace: the device's part
// of the template, the same for every metric.
std::string DeviceLabels(std::string_view node, const DcgmDevice& device, const DcgmExporterProfile& profile) {
  std::string out = "{";
  AppendLabel(out, "gpu", std::to_string(device.gpu));
  AppendLabel(out, profile.old_namespace ? "uuid" : "UUID", device.uuid);
  AppendLabel(out, "pci_bus_id", device.pci_bus_id);
  AppendLabel(out, "device", "nvidia" + std::to_string(device.gpu));
  AppendLabel(out, "modelName", device.model_name);
  if (device.gi_id) {
    AppendLabel(out, "GPU_I_PROFILE", device.mig_profile);
    AppendLabel(out, "GPU_I_ID", std::to_string(*device.gi_id));
  }
  AppendLabel(out, profile.version == DcgmExporterVersion::k4_8_2 ? "Hostname" : "hostname", node);
  AppendLabel(out,
              profile.version == DcgmExporterVersion::k4_9 ? "DCGM_FI_SYSTEM_DRIVER_VERSION" : "DCGM_FI_DRIVER_VERSION",
              profile.driver_version);
  return out;
}

// The pod's attributes, in sorted key order.
std::string PodLabels(const DcgmPodOnDevice& pod, const DcgmExporterProfile& profile, bool with_vgpu) {
  std::string out = "{";  // a placeholder, so that AppendLabel puts commas before every label
  if (profile.old_namespace) {
    AppendLabel(out, "container_name", pod.container);
    AppendLabel(out, "pod_name", pod.pod);
    AppendLabel(out, "pod_namespace", pod.namespace_name);
  } else {
    AppendLabel(out, "container", pod.container);
    AppendLabel(out, "namespace", pod.namespace_name);
    AppendLabel(out, "pod", pod.pod);
  }
  if (with_vgpu) AppendLabel(out, "vgpu", pod.vgpu);
  return "," + out.substr(1);
}

void AppendSeries(std::string& out, std::string_view name, const std::string& device_labels,
                  const std::string& pod_labels, const std::string& value) {
  out += name;
  out += device_labels;
  out += pod_labels;
  out += "} ";
  out += value;
  out += '\n';
}

}  // namespace

std::string RenderDcgmText(std::string_view node, const std::vector<DcgmDevice>& devices,
                           const DcgmExporterProfile& profile) {
  std::vector<std::string> labels;
  labels.reserve(devices.size());
  for (const DcgmDevice& device : devices) labels.push_back(DeviceLabels(node, device, profile));
  std::string out;
  for (const DcgmMetricRow& row : RowsOf(profile.version)) {
    out += "# HELP ";
    out += row.name;
    out += ' ';
    out += row.help;
    out += "\n# TYPE ";
    out += row.name;
    out += ' ';
    out += row.type;
    out += '\n';
    for (std::size_t i = 0; i < devices.size(); ++i) {
      const DcgmDevice& device = devices[i];
      if (device.gi_id && WholeGpuOnly(row.field)) continue;
      const std::string device_value = InUnit(DeviceValue(row.field, device), row.unit);
      if (profile.mapping == DcgmPodMapping::kOff || device.pods.empty()) {
        AppendSeries(out, row.name, labels[i], "", device_value);
      } else if (profile.mapping == DcgmPodMapping::kLastPodWins) {
        AppendSeries(out, row.name, labels[i], PodLabels(device.pods.back(), profile, false), device_value);
      } else {
        const bool per_process = profile.per_process_values && PerProcess(row.field);
        if (per_process) AppendSeries(out, row.name, labels[i], "", device_value);  // the device's, kept
        for (const DcgmPodOnDevice& pod : device.pods) {
          AppendSeries(out, row.name, labels[i], PodLabels(pod, profile, true),
                       per_process ? InUnit(PodValue(row.field, pod), row.unit) : device_value);
        }
      }
    }
  }
  return out;
}

}  // namespace septa::kubesim
