#include "tenancy/usage/usage_math.h"

#include "tests/unit/tenancy/usage/usage_samples.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

namespace septa::tenancy::usage {
namespace {

using namespace septa::tenancy::usage::testing;  // NOLINT: the tests' vocabulary
using std::chrono::milliseconds;
using std::chrono::seconds;

UsageReport MustCompute(const UsageInput& input, const UsageSettings& settings = {}) {
  auto report = ComputeUsage(input, settings);
  EXPECT_TRUE(report.ok()) << report.status().ToString();
  return report.ok() ? *std::move(report) : UsageReport{};
}

constexpr double kEps = 1e-9;

// One dedicated H100 busy a quarter of the time, scraped every 30 s.
UsageInput QuarterBusyHour() {
  UsageInput input{.window = Between(0, 3600), .gpus = {{.node = "n", .uuid = "GPU-0", .present = Between(0, 3600)}}};
  input.held = {Whole("acme", gpu::Tier::kDedicated, "n", "GPU-0", Between(0, 3600))};
  input.scrapes = Every("n", 30, 0, 3600, [](double) {
    return std::vector<DcgmSample>{Gr("n", "GPU-0", 0.25), Fb("n", "GPU-0", 20480)};
  });
  return input;
}

TEST(usageMath, ADedicatedGpuIsAllocatedHeldTimeAndUsedItsGrFraction) {
  const UsageReport report = MustCompute(QuarterBusyHour());
  ASSERT_EQ(report.entities.size(), 1u);
  const EntityUsage& usage = report.entities[0];
  EXPECT_NEAR(usage.allocated_gpu_hours, 1.0, kEps);
  EXPECT_NEAR(usage.measured_gpu_hours, 1.0, kEps);
  EXPECT_NEAR(usage.used_gpu_hours, 0.25, kEps);
  EXPECT_NEAR(usage.waste_gpu_hours, 0.75, kEps);
  EXPECT_NEAR(usage.coverage, 1.0, kEps);
  EXPECT_NEAR(*usage.efficiency, 0.25, kEps);
  EXPECT_EQ(usage.max_fb_used_mib, 20480);
  EXPECT_NEAR(*usage.memory_over_request, 4.0, kEps);  // 81,920 reserved / 20,480 used
  EXPECT_EQ(usage.active_windows, 120);
  EXPECT_EQ(usage.idle_windows, 0);

  ASSERT_EQ(report.minutes.size(), 60u);
  for (const MinuteRollup& minute : report.minutes) {
    EXPECT_NEAR(minute.allocated_gpu_seconds, 60, kEps);
    EXPECT_NEAR(minute.measured_gpu_seconds, 60, kEps);
    EXPECT_NEAR(minute.used_gpu_seconds, 15, kEps);
    EXPECT_EQ(minute.samples, 2);
    EXPECT_EQ(minute.activity_max, 0.25);
    EXPECT_EQ(minute.fb_max_mib, 20480);
  }
  EXPECT_EQ(report.minutes[0].minute, At(0));
  EXPECT_EQ(report.minutes[59].minute, At(3540));

  ASSERT_EQ(report.devices.size(), 1u);
  EXPECT_NEAR(report.devices[0].capacity_gpu_hours, 1.0, kEps);
  EXPECT_NEAR(report.devices[0].reserved_gpu_hours, 1.0, kEps);
  EXPECT_NEAR(report.devices[0].unreserved_gpu_hours, 0.0, kEps);
  EXPECT_NEAR(report.devices[0].used_gpu_hours, 0.25, kEps);
  EXPECT_NEAR(report.unreserved_gpu_hours, 0.0, kEps);
  EXPECT_TRUE(report.hoarders.empty());
}

TEST(usageMath, AMissedScrapeLowersCoverageAndIsNeverIdle) {
  UsageInput input = QuarterBusyHour();
  // Four scrapes lost: (600 s, 720 s] has no sample.
  std::erase_if(input.scrapes, [](const NodeScrape& scrape) { return scrape.at > At(600) && scrape.at <= At(720); });
  const EntityUsage usage = MustCompute(input).entities[0];
  EXPECT_NEAR(usage.allocated_gpu_hours, 1.0, kEps);  // billed all the same
  EXPECT_NEAR(usage.coverage, 58.0 / 60.0, kEps);
  EXPECT_NEAR(usage.measured_gpu_hours, 58.0 / 60.0, kEps);
  EXPECT_NEAR(usage.used_gpu_hours, 0.25 * 58.0 / 60.0, kEps);
  EXPECT_NEAR(usage.waste_gpu_hours, 0.75 * 58.0 / 60.0, kEps);  // the gap is not waste
  EXPECT_NEAR(*usage.efficiency, 0.25, kEps);                    // nor lower efficiency

  // Idle throughout: the gap neither adds idle time nor ends the run.
  for (NodeScrape& scrape : input.scrapes) scrape.samples[0].value = 0;
  const EntityUsage idle = MustCompute(input).entities[0];
  EXPECT_EQ(idle.idle_windows, 116);
  EXPECT_EQ(idle.idle, seconds(58 * 60));
  EXPECT_EQ(idle.longest_idle, seconds(58 * 60));
}

TEST(usageMath, SamplesFasterThanTheIntervalCountEachInstantOnce) {
  UsageInput input = QuarterBusyHour();
  input.scrapes = Every("n", 10, 0, 3600, [](double t) {
    return std::vector<DcgmSample>{Gr("n", "GPU-0", std::fmod(t, 30) == 0 ? 1.0 : 0.0)};
  });
  const EntityUsage usage = MustCompute(input).entities[0];  // scrape_interval stays 30 s
  EXPECT_NEAR(usage.measured_gpu_hours, 1.0, kEps);
  EXPECT_NEAR(usage.used_gpu_hours, 1.0 / 3, kEps);
}

TEST(usageMath, IdleSecondsRunOverIdleWindowsAndRestartOnAnActiveOne) {
  UsageInput input = QuarterBusyHour();
  input.scrapes = Every("n", 30, 0, 3600, [](double t) {
    // One busy sample at 1230 s; 0.009 is below the 0.01 of an idle window.
    const double gr = t == 1230 ? 0.5 : (t == 600 ? 0.009 : 0.0);
    return std::vector<DcgmSample>{Gr("n", "GPU-0", gr)};
  });
  const EntityUsage usage = MustCompute(input).entities[0];
  EXPECT_EQ(usage.active_windows, 1);
  EXPECT_EQ(usage.idle_windows, 119);
  EXPECT_EQ(usage.idle, seconds(3600 - 1230));
  EXPECT_EQ(usage.longest_idle, seconds(3600 - 1230));
  EXPECT_FALSE(usage.holding_memory);  // no memory series

  UsageSettings minute_windows;
  minute_windows.idle_window = seconds(60);
  const EntityUsage by_minute = MustCompute(input, minute_windows).entities[0];
  EXPECT_EQ(by_minute.idle_windows, 59);
  EXPECT_EQ(by_minute.idle, seconds(3600 - 1260));
}

// USAGE-FACTS §5 D: two tenants × 500 milli on one time-sliced H100; X runs
// at the recorded duty (GR 0.486), Y idles.
UsageInput SharedByTwo() {
  UsageInput input{.window = Between(0, 3600), .gpus = {{.node = "n", .uuid = "GPU-0", .present = Between(0, 3600)}}};
  input.held = {Share("x", "n", "GPU-0", 500, Between(0, 3600)), Share("y", "n", "GPU-0", 500, Between(0, 3600))};
  return input;
}

TEST(usageMath, ASharedGpuUsedByOneOfTwoTenantsIsAttributedOnce) {
  UsageInput input = SharedByTwo();
  // The virtual-GPUs mode: the device's GR copied to both pods (kept once by
  // the normaliser), and per-pod SM that says whose it is.
  input.scrapes = Every("n", 30, 0, 3600, [](double) {
    return std::vector<DcgmSample>{Gr("n", "GPU-0", 0.486), PerPod(DcgmSignal::kGpuUtil, "n", "GPU-0", "x-dev", 0.99),
                                   PerPod(DcgmSignal::kGpuUtil, "n", "GPU-0", "y-dev", 0.0)};
  });
  const UsageReport report = MustCompute(input);
  const EntityUsage& x = report.entities[0];
  const EntityUsage& y = report.entities[1];
  EXPECT_NEAR(x.allocated_gpu_hours, 0.5, kEps);
  EXPECT_NEAR(y.allocated_gpu_hours, 0.5, kEps);
  EXPECT_NEAR(x.used_gpu_hours, 0.486, kEps);
  EXPECT_NEAR(y.used_gpu_hours, 0.0, kEps);
  EXPECT_NEAR(y.waste_gpu_hours, 0.5, kEps);
  EXPECT_NEAR(x.waste_gpu_hours, 0.014, kEps);
  EXPECT_EQ(y.idle, seconds(3600));
  // Once: the tenants' sum is the device's 0.486, not the 0.972 of adding copies.
  EXPECT_NEAR(report.used_gpu_hours, 0.486, kEps);
  EXPECT_NEAR(report.devices[0].used_gpu_hours, 0.486, kEps);
  EXPECT_NEAR(report.devices[0].attributed_gpu_hours, 0.486, kEps);
  EXPECT_EQ(report.attribution_conflicts, 0);
}

TEST(usageMath, WithoutPerPodValuesSharesSplitByReservedShareAmongRunningPods) {
  UsageInput input = SharedByTwo();
  input.held[0].milli_gpu = 250;
  input.held[0].weight = 0.25;
  input.scrapes = Every("n", 30, 0, 3600, [](double) { return std::vector<DcgmSample>{Gr("n", "GPU-0", 0.6)}; });
  UsageReport report = MustCompute(input);
  EXPECT_NEAR(report.entities[0].used_gpu_hours, 0.6 * 250 / 750, kEps);
  EXPECT_NEAR(report.entities[1].used_gpu_hours, 0.6 * 500 / 750, kEps);
  EXPECT_NEAR(report.used_gpu_hours, 0.6, kEps);

  // Y's pods run only in the second half hour: X has the GPU's activity alone before.
  input.held[1].pods_running = std::vector<TimeRange>{Between(1800, 3600)};
  report = MustCompute(input);
  EXPECT_NEAR(report.entities[0].used_gpu_hours, 0.6 * 0.5 + 0.6 * 0.5 * 250 / 750, kEps);
  EXPECT_NEAR(report.entities[1].used_gpu_hours, 0.6 * 0.5 * 500 / 750, kEps);
  EXPECT_NEAR(report.used_gpu_hours, 0.6, kEps);

  // No pod runs: the GPU's activity is nobody's.
  input.held[0].pods_running = std::vector<TimeRange>{};
  input.held[1].pods_running = std::vector<TimeRange>{};
  report = MustCompute(input);
  EXPECT_NEAR(report.used_gpu_hours, 0.0, kEps);
  EXPECT_NEAR(report.devices[0].used_gpu_hours, 0.6, kEps);
  EXPECT_NEAR(report.devices[0].attributed_gpu_hours, 0.0, kEps);
}

// Three H100s over two hours: one dedicated, one in MIG with two instances
// held for different times, one time-sliced between two shares.
TEST(usageMath, TenantsPlusTheUnreservedPoolAreTheClustersCapacity) {
  UsageInput input{.window = Between(0, 7200),
                   .gpus = {{.node = "a", .uuid = "GPU-a0", .present = Between(0, 7200)},
                            {.node = "a", .uuid = "GPU-a1", .present = Between(0, 7200)},
                            {.node = "b", .uuid = "GPU-b0", .present = Between(0, 7200)}}};
  input.held = {Whole("t1", gpu::Tier::kDedicated, "a", "GPU-a0", Between(0, 7200)),
                Mig("t2", "a", "GPU-a1", 1, 3, Between(0, 3600)), Mig("t3", "a", "GPU-a1", 2, 1, Between(0, 7200)),
                Share("t4", "b", "GPU-b0", 250, Between(0, 5400)),
                Share("t5", "b", "GPU-b0", 500, Between(1800, 7200))};
  input.scrapes = Every("a", 30, 0, 7200, [](double) {
    return std::vector<DcgmSample>{Gr("a", "GPU-a0", 0.5), Gr("a", "GPU-a1", 1.0, 1), Gr("a", "GPU-a1", 0.2, 2)};
  });
  const auto b = Every("b", 30, 0, 7200, [](double) { return std::vector<DcgmSample>{Gr("b", "GPU-b0", 0.8)}; });
  input.scrapes.insert(input.scrapes.end(), b.begin(), b.end());
  const UsageReport report = MustCompute(input);

  const double allocated = 2.0 + 3.0 / 7 * 1 + 1.0 / 7 * 2 + 0.25 * 1.5 + 0.5 * 1.5;
  EXPECT_NEAR(report.capacity_gpu_hours, 6.0, kEps);
  EXPECT_NEAR(report.allocated_gpu_hours, allocated, kEps);
  EXPECT_NEAR(report.unreserved_gpu_hours, (2 - 5.0 / 7) + (2 - 0.25 * 1.5 - 0.5 * 1.5), kEps);
  EXPECT_NEAR(report.allocated_gpu_hours + report.unreserved_gpu_hours, report.capacity_gpu_hours, kEps);

  EXPECT_NEAR(report.entities[0].used_gpu_hours, 1.0, kEps);
  EXPECT_NEAR(report.entities[1].used_gpu_hours, 3.0 / 7, kEps);
  EXPECT_NEAR(report.entities[2].used_gpu_hours, 1.0 / 7 * 0.2 * 2, kEps);
  // t4 alone for half an hour, with t5 for an hour (250 of 750), t5 alone after.
  EXPECT_NEAR(report.entities[3].used_gpu_hours, 0.8 * 0.5 + 0.8 * 250 / 750, kEps);
  EXPECT_NEAR(report.entities[4].used_gpu_hours, 0.8 * 500 / 750 + 0.8 * 0.5, kEps);
  double tenants = 0;
  double devices = 0;
  for (const DeviceUsage& device : report.devices) {
    EXPECT_LE(device.attributed_gpu_hours, device.used_gpu_hours + kEps) << device.uuid;
    devices += device.used_gpu_hours;
  }
  for (const EntityUsage& entity : report.entities) tenants += entity.used_gpu_hours;
  EXPECT_LE(tenants, devices + kEps);
  EXPECT_NEAR(report.devices[2].used_gpu_hours, 1.6, kEps);
  // Instance 1 goes on working after t2's hold ended: nobody's, and counted.
  EXPECT_EQ(report.unheld_activity_samples, 120);
}

TEST(usageMath, AMigInstancesUsageLandsOnItsHolderAcrossARelayout) {
  UsageInput input{.window = Between(0, 3600), .gpus = {{.node = "a", .uuid = "GPU-a1", .present = Between(0, 3600)}}};
  // The layout changed at 1800 s: instance 5 went with tenant p's hold, and
  // tenant q's 3g instance came up as GPU instance 1.
  input.held = {Mig("p", "a", "GPU-a1", 5, 3, Between(0, 1800)), Mig("q", "a", "GPU-a1", 1, 3, Between(1800, 3600))};
  input.scrapes = Every("a", 30, 0, 3600, [](double t) {
    if (t <= 1800) return std::vector<DcgmSample>{Gr("a", "GPU-a1", 0.6, 5)};
    return std::vector<DcgmSample>{Gr("a", "GPU-a1", 0.9, 1), Gr("a", "GPU-a1", 0.3, 2)};
  });
  input.scrapes.push_back({.node = "a", .at = At(1845), .samples = {Gr("a", "GPU-a1", 0.6, 5)}});  // a stale id
  const UsageReport report = MustCompute(input);
  EXPECT_NEAR(report.entities[0].used_gpu_hours, 3.0 / 7 * 0.6 * 0.5, kEps);
  EXPECT_NEAR(report.entities[1].used_gpu_hours, 3.0 / 7 * 0.9 * 0.5, kEps);
  EXPECT_EQ(report.unheld_activity_samples, 61);  // instance 2 after the relayout, and the stale instance 5
}

TEST(usageMath, AHoarderIsFlaggedAtItsTiersThreshold) {
  // USAGE-FACTS §5 B: the pod stops computing and keeps 21,842 MiB.
  UsageInput input{.window = Between(0, 3600), .gpus = {{.node = "n", .uuid = "GPU-0", .present = Between(0, 3600)}}};
  input.held = {Whole("acme", gpu::Tier::kDedicated, "n", "GPU-0", Between(0, 3600))};
  input.scrapes = Every("n", 30, 0, 3600, [](double) {
    return std::vector<DcgmSample>{Gr("n", "GPU-0", 0.0), Fb("n", "GPU-0", 21842)};
  });
  UsageReport report = MustCompute(input);
  ASSERT_EQ(report.hoarders.size(), 1u);
  EXPECT_EQ(report.hoarders[0].holder.tenant, "acme");
  EXPECT_EQ(report.hoarders[0].idle, seconds(3600));  // the dedicated threshold: 60 min
  EXPECT_TRUE(report.hoarders[0].holding_memory);
  EXPECT_TRUE(report.entities[0].holding_memory);

  // Half a minute short of the threshold.
  input.window = Between(0, 3570);
  EXPECT_TRUE(MustCompute(input).hoarders.empty());
  input.window = Between(0, 3600);

  // The shared tier's threshold is 15 minutes; it is a setting.
  input.held[0].holder.tier = gpu::Tier::kShared;
  input.window = Between(0, 900);
  EXPECT_EQ(MustCompute(input).hoarders.size(), 1u);
  UsageSettings stricter;
  stricter.hoarding.shared = seconds(20 * 60);
  EXPECT_TRUE(MustCompute(input, stricter).hoarders.empty());
  input.held[0].holder.tier = gpu::Tier::kDedicated;
  input.window = Between(0, 3600);

  // Memory let go: still a hoarder, not holding memory.
  for (NodeScrape& scrape : input.scrapes) scrape.samples[1].value = 480;
  report = MustCompute(input);
  ASSERT_EQ(report.hoarders.size(), 1u);
  EXPECT_FALSE(report.hoarders[0].holding_memory);

  // Every entity must be idle: a second GPU of the same reservation that works clears it.
  input.gpus.push_back({.node = "n", .uuid = "GPU-1", .present = Between(0, 3600)});
  input.held.insert(input.held.begin(), Whole("acme", gpu::Tier::kDedicated, "n", "GPU-1", Between(0, 3600)));
  for (NodeScrape& scrape : input.scrapes) scrape.samples.push_back(Gr("n", "GPU-1", 0.7));
  EXPECT_TRUE(MustCompute(input).hoarders.empty());

  // A hold that ended before the window's end is no hoarder.
  input.held.erase(input.held.begin());
  input.window = Between(0, 7200);
  report = MustCompute(input);
  EXPECT_EQ(report.entities[0].idle, seconds(3600));
  EXPECT_TRUE(report.hoarders.empty());
}

TEST(usageMath, SharesTakeTheirPodsMemoryForOverRequest) {
  UsageInput input = SharedByTwo();
  input.scrapes = Every("n", 30, 0, 3600, [](double t) {
    return std::vector<DcgmSample>{Gr("n", "GPU-0", 0.4), Fb("n", "GPU-0", 30000),
                                   PerPod(DcgmSignal::kFbUsed, "n", "GPU-0", "x-dev", t < 1800 ? 10240 : 20480)};
  });
  const UsageReport report = MustCompute(input);
  EXPECT_EQ(report.entities[0].max_fb_used_mib, 20480);
  EXPECT_NEAR(*report.entities[0].memory_over_request, 2.0, kEps);  // 40,960 reserved
  EXPECT_EQ(report.entities[1].max_fb_used_mib, std::nullopt);      // no per-pod memory: not the device's
  EXPECT_EQ(report.entities[1].memory_over_request, std::nullopt);
}

TEST(usageMath, EnergyIsTheCountersIncreaseCountingResetsFromZero) {
  UsageInput input = QuarterBusyHour();
  const std::vector<double> joules = {1000, 2000, 3500, 100, 600};
  input.scrapes.clear();
  for (std::size_t i = 0; i < joules.size(); ++i) {
    DcgmSample energy = Gr("n", "GPU-0", joules[i]);
    energy.signal = DcgmSignal::kEnergy;
    input.scrapes.push_back({.node = "n", .at = At(30.0 * (i + 1)), .samples = {energy}});
  }
  EXPECT_EQ(MustCompute(input).devices[0].energy_joules, 1000 + 1500 + 100 + 500);
  input.scrapes.resize(1);
  EXPECT_EQ(MustCompute(input).devices[0].energy_joules, std::nullopt);
}

TEST(usageMath, LabelsThatContradictTheReservationAreCountedNotFollowed) {
  UsageInput input = QuarterBusyHour();
  for (NodeScrape& scrape : input.scrapes) {
    scrape.samples[0].pod = DcgmPodRef{.namespace_name = "someone-else", .pod = "p", .container = "c", .vgpu = ""};
  }
  input.scrapes[0].samples.push_back(Gr("n", "GPU-9", 0.5));  // not in the inventory
  // KAI's reservation pod labels a shared GPU: ignored, not a conflict.
  input.scrapes[1].samples[0].pod->namespace_name = "kai-resource-reservation";
  const UsageReport report = MustCompute(input);
  EXPECT_EQ(report.attribution_conflicts, 119);
  EXPECT_NEAR(report.entities[0].used_gpu_hours, 0.25, kEps);  // the reservation is the truth
  EXPECT_EQ(report.unknown_gpu_samples, 1);

  UsageInput shared = SharedByTwo();
  shared.scrapes = Every("n", 30, 0, 3600, [](double) {
    return std::vector<DcgmSample>{Gr("n", "GPU-0", 0.5), PerPod(DcgmSignal::kGpuUtil, "n", "GPU-0", "x-dev", 0.5),
                                   PerPod(DcgmSignal::kGpuUtil, "n", "GPU-0", "stranger", 0.5),
                                   PerPod(DcgmSignal::kGpuUtil, "n", "GPU-0", "kai-resource-reservation", 0.0)};
  });
  const UsageReport split = MustCompute(shared);
  EXPECT_EQ(split.attribution_conflicts, 120);
  EXPECT_NEAR(split.entities[0].used_gpu_hours, 0.25, kEps);  // the stranger's half is nobody's
  EXPECT_NEAR(split.used_gpu_hours, 0.25, kEps);
}

TEST(usageMath, RefusesInputThatCannotBeAccounted) {
  const auto code = [](const UsageInput& input, const UsageSettings& settings = {}) {
    return ComputeUsage(input, settings).status().code();
  };
  UsageInput empty_window = QuarterBusyHour();
  empty_window.window = Between(10, 10);
  EXPECT_EQ(code(empty_window), Code::kInvalidArgument);

  UsageSettings no_interval;
  no_interval.scrape_interval = milliseconds(0);
  EXPECT_EQ(code(QuarterBusyHour(), no_interval), Code::kInvalidArgument);

  UsageInput unknown_gpu = QuarterBusyHour();
  unknown_gpu.held[0].gpu_uuid = "GPU-9";
  EXPECT_EQ(code(unknown_gpu), Code::kInvalidArgument);

  UsageInput twice = SharedByTwo();
  twice.held[1].milli_gpu = 600;
  twice.held[1].weight = 0.6;
  const Status overlap = ComputeUsage(twice, {}).status();
  EXPECT_EQ(overlap.code(), Code::kInvalidArgument);
  EXPECT_NE(overlap.message().find("GPU GPU-0 of node n is held 1.1"), std::string::npos) << overlap.message();
  // Handed over at one instant: no overlap.
  twice.held[0].held = Between(0, 1800);
  twice.held[1].held = Between(1800, 3600);
  EXPECT_TRUE(ComputeUsage(twice, {}).ok());
}

}  // namespace
}  // namespace septa::tenancy::usage
