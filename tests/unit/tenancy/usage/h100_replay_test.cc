// Golden replays of the real H100 run (../shared/data/h100 and the per-second
// GPM trace of ../shared/docs/USAGE-FACTS.md §5) through the whole pure
// pipeline: exporter text → ParsePrometheusText → NormaliseDcgm →
// ComputeUsage. Issue 34: "replaying the recorded H100 trace gives
// 0.486 ± 0.005 used GPU-hours per allocated hour".
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <iostream>
#include <optional>

#include "common/prometheus_text.h"
#include "tenancy/usage/dcgm_series.h"
#include "tenancy/usage/usage_math.h"
#include "tests/unit/tenancy/usage/h100_trace.h"

namespace septa::tenancy::usage {
namespace {

using std::chrono::milliseconds;

constexpr std::string_view kNode = "gpu-node-1";
const TimePoint kEpoch = std::chrono::sys_days{std::chrono::year{2026} / 11 / 28};
TimePoint Second(double s) { return kEpoch + milliseconds(std::llround(s * 1000)); }

struct Recorded {
  test::GpmTrace trace;
  test::H100Recording gpu;
  double held_memory_mib = 0;  // what the recorded process held
};

std::optional<Recorded> Load() {
  auto facts = test::ReadWholeFile(test::SharedPath("docs/USAGE-FACTS.md"));
  if (!facts.ok()) {
    ADD_FAILURE() << facts.status().ToString();
    return std::nullopt;
  }
  auto trace = test::ParseGpmTrace(*facts);
  auto gpu = test::ReadH100Recording(test::SharedPath("data/h100/nvml-profiles-and-duty-cycle.json"),
                                     test::SharedPath("data/h100/nvidia-smi-query.csv"));
  if (!trace.ok() || !gpu.ok()) {
    ADD_FAILURE() << trace.status().ToString() << " " << gpu.status().ToString();
    return std::nullopt;
  }
  Recorded out{.trace = *std::move(trace), .gpu = *std::move(gpu)};
  for (const auto& sample : out.gpu.samples) out.held_memory_mib = std::max(out.held_memory_mib, sample.fb_used_mib);
  return out;
}

// One second of the recorded duty cycle, repeated: GR as a ratio.
double GrAt(const Recorded& recorded, int second) {
  const auto& cycles = recorded.trace.cycles_percent;
  return cycles[static_cast<std::size_t>(second - 1) % cycles.size()] / 100.0;
}

const PrometheusTextLimits kScrapeLimits{
    .max_bytes = 1 << 20, .max_series = 1000, .max_label_value_bytes = 1024, .max_labels_per_series = 32};

// Scrapes of kNode at the given instants (seconds), each the text `render`
// makes, read as septad will: parsed, then normalised.
std::vector<NodeScrape> Scrape(const std::vector<double>& instants, const std::function<std::string(double)>& render,
                               const DcgmScrapeOptions& options, DcgmSeriesCounts& counts) {
  std::vector<NodeScrape> scrapes;
  for (const double t : instants) {
    const auto exposition = ParsePrometheusText(render(t), kScrapeLimits);
    EXPECT_TRUE(exposition.ok()) << exposition.status().ToString();
    if (!exposition.ok()) continue;
    DcgmScrape scrape = NormaliseDcgm(*exposition, options);
    counts.series += scrape.counts.series;
    counts.samples += scrape.counts.samples;
    counts.unknown_metric += scrape.counts.unknown_metric;
    counts.label_conflicts += scrape.counts.label_conflicts;
    scrapes.push_back({.node = std::string(kNode), .at = Second(t), .samples = std::move(scrape.samples)});
  }
  return scrapes;
}

std::vector<double> Seconds(int from, int to) {  // from..to inclusive
  std::vector<double> out;
  for (int s = from; s <= to; ++s) out.push_back(s);
  return out;
}

// A dedicated H100 node's exporter (4.8.3) during the recorded duty cycle:
// GR, the memory the process held, and a field Septa does not read.
std::function<std::string(double)> DedicatedExporter(const Recorded& recorded) {
  return [&recorded](double t) {
    const test::H100Recording& gpu = recorded.gpu;
    return test::RenderFamily("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).") +
           test::RenderSeries(gpu, kNode, "DCGM_FI_DEV_SM_CLOCK", 1980) +
           test::RenderFamily("DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).") +
           test::RenderSeries(gpu, kNode, "DCGM_FI_DEV_FB_USED", recorded.held_memory_mib) +
           test::RenderFamily("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge",
                              "Ratio of time the graphics engine is active.") +
           test::RenderSeries(gpu, kNode, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", GrAt(recorded, static_cast<int>(t)));
  };
}

UsageSettings EverySecond() {
  UsageSettings settings;
  settings.scrape_interval = milliseconds(1000);
  return settings;
}

UsageInput DedicatedHour(const Recorded& recorded, std::vector<NodeScrape> scrapes, double hours = 1) {
  const TimeRange window{.start = Second(0), .end = Second(3600 * hours)};
  UsageInput input{.window = window,
                   .gpus = {{.node = std::string(kNode), .uuid = recorded.gpu.uuid, .present = window}},
                   .scrapes = std::move(scrapes)};
  input.held = {{.holder = {.tenant = "acme", .vcluster = "train", .tier = gpu::Tier::kDedicated},
                 .kind = HeldKind::kWholeGpu,
                 .node = std::string(kNode),
                 .gpu_uuid = recorded.gpu.uuid,
                 .weight = 1,
                 // The driver's total (81,559 MiB), as USAGE-FACTS §5 A divides it.
                 .reserved_memory_mib = recorded.gpu.memory_total_mib,
                 .host_namespace = "acme-train",
                 .held = window}};
  return input;
}

TEST(usageH100Replay, TheTracesCyclesAreTheRecordedDutyCycle) {
  const auto recorded = Load();
  ASSERT_TRUE(recorded);
  EXPECT_EQ(recorded->trace.cycles_percent.size(), 24u);  // "mean of 4 full cycles (24 s)"
  EXPECT_EQ(recorded->gpu.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(recorded->gpu.memory_total_mib, 81559);
  EXPECT_EQ(recorded->held_memory_mib, 21842);
}

// USAGE-FACTS §5 A: a dedicated H100, one hour of the recorded pattern.
TEST(usageH100Replay, AnHourOfTheRecordedDutyCycleUsesWhatTheIssueStates) {
  const auto recorded = Load();
  ASSERT_TRUE(recorded);
  DcgmSeriesCounts counts;
  UsageInput input = DedicatedHour(
      *recorded, Scrape(Seconds(1, 3600), DedicatedExporter(*recorded), {.node = std::string(kNode)}, counts));
  EXPECT_EQ(counts.series, 3 * 3600);
  EXPECT_EQ(counts.samples, 2 * 3600);
  EXPECT_EQ(counts.unknown_metric, 3600);  // SM_CLOCK has no row

  const UsageReport report = *ComputeUsage(input, EverySecond());
  const EntityUsage& usage = report.entities[0];
  const double used_per_allocated_hour = usage.used_gpu_hours / usage.allocated_gpu_hours;
  std::cout << "H100 replay: " << usage.used_gpu_hours << " used GPU-hours of " << usage.allocated_gpu_hours
            << " allocated (" << used_per_allocated_hour << " per allocated hour)\n";
  EXPECT_NEAR(usage.allocated_gpu_hours, 1.0, 1e-9);
  EXPECT_NEAR(usage.coverage, 1.0, 1e-9);
  EXPECT_NEAR(used_per_allocated_hour, 0.486, 0.005);
  EXPECT_NEAR(usage.waste_gpu_hours, 0.514, 0.005);
  EXPECT_NEAR(*usage.efficiency, 0.486, 0.005);
  EXPECT_NEAR(*usage.memory_over_request, 3.73, 0.005);  // 81,559 / 21,842
  EXPECT_EQ(usage.idle_windows, 0);                      // every 30 s window has busy seconds
  EXPECT_EQ(usage.active_windows, 120);
  EXPECT_TRUE(report.hoarders.empty());
  ASSERT_EQ(report.minutes.size(), 60u);
  EXPECT_EQ(report.minutes[0].fb_max_mib, 21842);
  EXPECT_NEAR(report.minutes[0].allocated_gpu_seconds, 60, 1e-9);

  // The four recorded cycles alone (24 s), and with the rest of the run.
  const auto window = [&](int seconds) {
    UsageInput short_run = input;
    short_run.window = {.start = Second(0), .end = Second(seconds)};
    short_run.held[0].held = short_run.window;
    return ComputeUsage(short_run, EverySecond())->entities[0];
  };
  const EntityUsage cycles = window(24);
  EXPECT_NEAR(cycles.used_gpu_hours / cycles.allocated_gpu_hours, 0.486, 0.005);
}

TEST(usageH100Replay, AMissedScrapeLowersCoverageNotEfficiency) {
  const auto recorded = Load();
  ASSERT_TRUE(recorded);
  std::vector<double> instants = Seconds(1, 3600);
  std::erase_if(instants, [](double t) { return t > 600 && t <= 660; });  // the exporter down a minute
  DcgmSeriesCounts counts;
  const UsageInput input =
      DedicatedHour(*recorded, Scrape(instants, DedicatedExporter(*recorded), {.node = std::string(kNode)}, counts));
  const EntityUsage usage = ComputeUsage(input, EverySecond())->entities[0];
  EXPECT_NEAR(usage.allocated_gpu_hours, 1.0, 1e-9);
  EXPECT_NEAR(usage.coverage, 59.0 / 60.0, 1e-9);
  EXPECT_NEAR(*usage.efficiency, 0.486, 0.005);
  EXPECT_NEAR(usage.used_gpu_hours + usage.waste_gpu_hours, 59.0 / 60.0, 1e-9);  // the minute is neither
  EXPECT_EQ(usage.idle_windows, 0);
}

// USAGE-FACTS §5 D: two tenants × 500 milli on one time-sliced H100, the
// exporter in its virtual-GPUs mode: the device's GR copied to both pods,
// per-process SM per pod (X runs the recorded cycle, Y idles).
TEST(usageH100Replay, ASharedH100UsedByOneOfTwoTenantsIsAttributedOnce) {
  const auto recorded = Load();
  ASSERT_TRUE(recorded);
  const test::RenderedPod x{.namespace_name = "x-dev", .pod = "train-x-default-x-dev", .vgpu = "0"};
  const test::RenderedPod y{.namespace_name = "y-dev", .pod = "idle-x-default-x-dev", .vgpu = "1"};
  const auto exporter = [&](double t) {
    const test::H100Recording& gpu = recorded->gpu;
    const double gr = GrAt(*recorded, static_cast<int>(t));
    return test::RenderSeries(gpu, kNode, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", gr, &x) +
           test::RenderSeries(gpu, kNode, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", gr, &y) +
           test::RenderSeries(gpu, kNode, "DCGM_FI_DEV_GPU_UTIL", std::round(gr * 100), &x) +
           test::RenderSeries(gpu, kNode, "DCGM_FI_DEV_GPU_UTIL", 0, &y);
  };
  const TimeRange window{.start = Second(0), .end = Second(3600)};
  UsageInput input{.window = window,
                   .gpus = {{.node = std::string(kNode), .uuid = recorded->gpu.uuid, .present = window},
                            {.node = std::string(kNode), .uuid = "GPU-unreserved", .present = window}}};
  for (const auto* pod : {&x, &y}) {
    input.held.push_back({.holder = {.tenant = pod->namespace_name.substr(0, 1), .vcluster = "dev"},
                          .kind = HeldKind::kShare,
                          .node = std::string(kNode),
                          .gpu_uuid = recorded->gpu.uuid,
                          .milli_gpu = 500,
                          .weight = 0.5,
                          .reserved_memory_mib = recorded->gpu.memory_total_mib / 2,
                          .host_namespace = pod->namespace_name,
                          .held = window});
  }
  DcgmSeriesCounts counts;
  input.scrapes =
      Scrape(Seconds(1, 3600), exporter, {.node = std::string(kNode), .per_process_pod_values = true}, counts);
  EXPECT_EQ(counts.samples, 3 * 3600);  // the GR copies are one sample
  EXPECT_EQ(counts.label_conflicts, 0);
  UsageReport report = *ComputeUsage(input, EverySecond());
  const double device = report.devices[0].used_gpu_hours;
  EXPECT_NEAR(device, 0.486, 0.005);
  EXPECT_NEAR(report.entities[0].used_gpu_hours, device, 1e-9);  // X: all of it
  EXPECT_NEAR(report.entities[1].used_gpu_hours, 0.0, 1e-9);     // Y: none
  EXPECT_NEAR(report.entities[1].waste_gpu_hours, 0.5, 1e-9);
  EXPECT_NEAR(report.used_gpu_hours, device, 1e-9);  // once, not the 0.972 of adding copies
  // Σ tenants + the unreserved pool = the cluster's capacity hours.
  EXPECT_NEAR(report.capacity_gpu_hours, 2.0, 1e-9);
  EXPECT_NEAR(report.unreserved_gpu_hours, 1.0, 1e-9);
  EXPECT_NEAR(report.allocated_gpu_hours + report.unreserved_gpu_hours, report.capacity_gpu_hours, 1e-9);

  // An exporter older than PR #594 copies the device's util to both pods:
  // no per-pod data, so the shares split by reserved share — still once.
  counts = {};
  input.scrapes =
      Scrape(Seconds(1, 3600), exporter, {.node = std::string(kNode), .per_process_pod_values = false}, counts);
  EXPECT_GT(counts.label_conflicts, 0);  // the two "copies" of util disagree while X works
  report = *ComputeUsage(input, EverySecond());
  EXPECT_NEAR(report.entities[0].used_gpu_hours, device / 2, 1e-9);
  EXPECT_NEAR(report.entities[1].used_gpu_hours, device / 2, 1e-9);
  EXPECT_NEAR(report.used_gpu_hours, device, 1e-9);
}

// The NVML run of ../shared/data/h100 (4 Hz, no profiling fields): what an
// exporter without the PROF rows serves (USAGE-FACTS §1.1). Its GPU_UTIL
// reads 99 % while busy, but it is never billed: with no GR nothing is
// measured, and the memory over-request still comes out.
TEST(usageH100Replay, TheNvmlRecordingsUtilIsNeverBilled) {
  const auto recorded = Load();
  ASSERT_TRUE(recorded);
  const test::H100Recording& gpu = recorded->gpu;
  std::vector<double> instants;
  for (const auto& sample : gpu.samples) instants.push_back(sample.t_s + 1);  // after the first instant
  std::size_t next = 0;
  DcgmSeriesCounts counts;
  const auto exporter = [&](double) {
    const test::H100Sample& sample = gpu.samples[next++];
    return test::RenderSeries(gpu, kNode, "DCGM_FI_DEV_GPU_UTIL", sample.gpu_util_percent) +
           test::RenderSeries(gpu, kNode, "DCGM_FI_DEV_FB_USED", sample.fb_used_mib) +
           test::RenderSeries(gpu, kNode, "DCGM_FI_DEV_POWER_USAGE", sample.power_w);
  };
  std::vector<NodeScrape> scrapes = Scrape(instants, exporter, {.node = std::string(kNode)}, counts);
  ASSERT_EQ(scrapes.size(), gpu.samples.size());
  double util_max = 0;
  for (const NodeScrape& scrape : scrapes) {
    for (const DcgmSample& sample : scrape.samples) {
      if (sample.signal == DcgmSignal::kGpuUtil) util_max = std::max(util_max, sample.value);
    }
  }
  EXPECT_DOUBLE_EQ(util_max, 0.99);  // percent read as a ratio

  UsageInput input = DedicatedHour(*recorded, std::move(scrapes));
  input.window = {.start = Second(0), .end = Second(instants.back())};
  input.held[0].held = input.window;
  input.gpus[0].present = input.window;
  const EntityUsage usage = ComputeUsage(input, EverySecond())->entities[0];
  EXPECT_GT(usage.allocated_gpu_hours, 0);
  EXPECT_EQ(usage.used_gpu_hours, 0);
  EXPECT_EQ(usage.measured_gpu_hours, 0);
  EXPECT_EQ(usage.coverage, 0);
  EXPECT_EQ(usage.efficiency, std::nullopt);
  EXPECT_EQ(usage.idle_windows, 0);  // unmeasured is not idle
  EXPECT_NEAR(*usage.memory_over_request, 3.73, 0.005);
}

}  // namespace
}  // namespace septa::tenancy::usage
