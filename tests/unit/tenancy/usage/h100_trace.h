// Test support: the real H100 run recorded beside the repository
// (../shared/data/h100, read in place, never copied in) and the per-second
// GPM trace that ../shared/docs/USAGE-FACTS.md §5 gives for golden tests,
// adapted to what the pipeline reads: dcgm-exporter's text as its 4.8.3
// template renders it (USAGE-FACTS §1.3). The adapter lives here, not in
// production code: the recording is NVML's view and the trace a doc's line.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace septa::tenancy::usage::test {

// `relative` under the shared folder beside the repository (SEPTA_SHARED_DIR).
std::string SharedPath(std::string_view relative);
Result<std::string> ReadWholeFile(const std::string& path);

// USAGE-FACTS §5, "GPM graphics per second (the trace for golden tests)":
// GPM graphics activity (≈ DCGM's GR_ENGINE_ACTIVE) in percent, one value a
// second; before '|' the four full 6 s cycles (3 s busy, 3 s idle), after
// it the rest of the run.
struct GpmTrace {
  std::vector<double> cycles_percent;
  std::vector<double> after_percent;
};
Result<GpmTrace> ParseGpmTrace(std::string_view usage_facts);

// nvml-profiles-and-duty-cycle.json: the GPU and its ~4 Hz NVML samples.
struct H100Sample {
  double t_s = 0;
  double gpu_util_percent = 0;  // NVML utilization.gpu: the sampled "a kernel ran" flag
  double fb_used_mib = 0;
  double power_w = 0;
};
struct H100Recording {
  std::string name;  // "NVIDIA H100 80GB HBM3"
  std::string uuid;
  std::string driver;
  double memory_total_mib = 0;  // as the driver reports it
  std::string pci_bus_id;       // from nvidia-smi-query.csv
  std::vector<H100Sample> samples;
};
Result<H100Recording> ReadH100Recording(const std::string& json_path, const std::string& query_csv_path);

// Pod labels an exporter with pod mapping adds (`vgpu` in its virtual-GPUs mode).
struct RenderedPod {
  std::string namespace_name;
  std::string pod;
  std::string vgpu;
};

// One series of the recorded GPU (index 0) on `node`, as the exporter's
// template writes it: gpu, UUID, pci_bus_id, device, modelName, hostname,
// the driver label, then the pod labels.
std::string RenderSeries(const H100Recording& gpu, std::string_view node, std::string_view metric, double value,
                         const RenderedPod* pod = nullptr);
// The HELP and TYPE lines the exporter writes before a field's series.
std::string RenderFamily(std::string_view metric, std::string_view type, std::string_view help);

}  // namespace septa::tenancy::usage::test
