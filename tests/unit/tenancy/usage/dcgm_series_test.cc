#include "tenancy/usage/dcgm_series.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/support/usage_facts_lines.h"

namespace septa::tenancy::usage {
namespace {

DcgmScrape NormaliseText(std::string_view text, const DcgmScrapeOptions& options) {
  const PrometheusTextLimits limits{};
  auto parsed = ParsePrometheusText(text, limits);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  if (!parsed.ok()) return {};
  return NormaliseDcgm(*parsed, options);
}

using test::kUsageFactsLines;  // USAGE-FACTS §1.6, verbatim

constexpr std::string_view kUuid = "GPU-ebb9e57b-c6a5-246f-eb60-1a68dc068554";

// One series of the recorded H100 as the exporter labels it, with `extra`
// labels appended.
std::string Line(std::string_view metric, std::string_view value, std::string_view extra = "") {
  return std::string(metric) + "{gpu=\"0\",UUID=\"" + std::string(kUuid) +
         "\",device=\"nvidia0\",modelName=\"NVIDIA H100 80GB HBM3\"" + std::string(extra) + "} " + std::string(value) +
         "\n";
}

TEST(usageDcgmSeries, TheAliasTableGivesOneSignalPerFieldAcrossVersions) {
  const DcgmFieldAlias* old_name = FindDcgmAlias("DCGM_FI_PROF_GR_ENGINE_ACTIVE");
  const DcgmFieldAlias* new_name = FindDcgmAlias("DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO");
  ASSERT_NE(old_name, nullptr);
  ASSERT_NE(new_name, nullptr);
  EXPECT_EQ(old_name->signal, DcgmSignal::kGrEngineActive);
  EXPECT_EQ(new_name->signal, DcgmSignal::kGrEngineActive);
  EXPECT_EQ(old_name->field_id, 1001);
  EXPECT_EQ(new_name->field_id, 1001);
  EXPECT_EQ(FindDcgmAlias("DCGM_FI_DEV_BOARD_POWER_WATTS")->signal, DcgmSignal::kPower);
  EXPECT_EQ(FindDcgmAlias("DCGM_FI_DEV_GPU_UTIL")->unit, DcgmUnit::kPercent);
  EXPECT_FALSE(FindDcgmAlias("DCGM_FI_DEV_GPU_UTIL_RATIO")->confirmed);
  EXPECT_EQ(FindDcgmAlias("DCGM_FI_DEV_SM_CLOCK"), nullptr);
  for (const auto& alias : DcgmAliases()) {
    EXPECT_EQ(FindDcgmAlias(alias.metric), &alias) << alias.metric << " has two rows";
  }
  EXPECT_EQ(DcgmSignalName(DcgmSignal::kGrEngineActive), "gr_engine_active");
}

TEST(usageDcgmSeries, TheUsageFactsLinesBecomeTypedSamples) {
  const DcgmScrape scrape = NormaliseText(kUsageFactsLines, {});
  EXPECT_EQ(scrape.counts, (DcgmSeriesCounts{.series = 5,
                                             .samples = 3,
                                             .unknown_metric = 2,  // SM_CLOCK and TEST_METRIC have no row
                                             .unidentified = 0,
                                             .bad_label = 0,
                                             .bad_value = 0,
                                             .label_conflicts = 0}));
  ASSERT_EQ(scrape.samples.size(), 3u);

  const DcgmSample& mig = scrape.samples[0];
  EXPECT_EQ(mig.signal, DcgmSignal::kGrEngineActive);
  EXPECT_EQ(mig.scope, DcgmScope::kDevice);
  EXPECT_EQ(mig.gpu, (DcgmGpuRef{.node = "ub20-a100-k8s",
                                 .uuid = "GPU-34319582-d595-d1c7-d1d2-179bcfa61660",
                                 .index = 0,
                                 .gi_id = 13,
                                 .mig_profile = "1g.5gb",
                                 .model = ""}));
  EXPECT_DOUBLE_EQ(mig.value, 0.995687);
  EXPECT_EQ(mig.pod, std::nullopt);
  EXPECT_EQ(mig.line, 3);

  const DcgmSample& memory = scrape.samples[1];
  EXPECT_EQ(memory.signal, DcgmSignal::kFbUsed);
  EXPECT_EQ(memory.gpu.node, "localhost");
  EXPECT_EQ(memory.gpu.gi_id, 11);
  EXPECT_EQ(memory.gpu.model, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(memory.value, 4190);  // MiB
  EXPECT_EQ(
      memory.pod,
      (DcgmPodRef{.namespace_name = "testing", .pod = "ollama-76f687f4cd-xcvvp", .container = "ollama", .vgpu = ""}));

  const DcgmSample& whole = scrape.samples[2];
  EXPECT_EQ(whole.gpu.index, 1);
  EXPECT_EQ(whole.gpu.gi_id, std::nullopt);
  EXPECT_DOUBLE_EQ(whole.value, 0.486);
  ASSERT_TRUE(whole.pod.has_value());
  EXPECT_EQ(whole.pod->pod, "web-x-default-x-dev");
}

TEST(usageDcgmSeries, SeriesWithoutAHostnameAreTheScrapedNodes) {
  const DcgmScrape sm_clock = NormaliseText(Line("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "0.5"), {.node = "gpu-node-1"});
  ASSERT_EQ(sm_clock.samples.size(), 1u);
  EXPECT_EQ(sm_clock.samples[0].gpu.node, "gpu-node-1");
  const DcgmScrape nowhere = NormaliseText(Line("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "0.5"), {});
  EXPECT_TRUE(nowhere.samples.empty());
  EXPECT_EQ(nowhere.counts.unidentified, 1);
  const DcgmScrape no_uuid =
      NormaliseText("DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\",hostname=\"n\"} 0.5\n", {.node = "n"});
  EXPECT_EQ(no_uuid.counts.unidentified, 1);
}

TEST(usageDcgmSeries, HostnameAndUuidAreReadInEverySpelling) {
  const DcgmScrapeOptions options{.node = "gpu-node-1"};
  for (const std::string extra : {",Hostname=\"gpu-node-1\"", ",hostname=\"gpu-node-1\"",
                                  ",Hostname=\"gpu-node-1\",hostname=\"gpu-node-1\"", ""}) {
    const DcgmScrape scrape = NormaliseText(Line("DCGM_FI_DEV_FB_USED", "21842", extra), options);
    ASSERT_EQ(scrape.samples.size(), 1u) << extra;
    EXPECT_EQ(scrape.samples[0].gpu.node, "gpu-node-1");
    EXPECT_EQ(scrape.samples[0].gpu.uuid, kUuid);
  }
  const DcgmScrape old_namespace = NormaliseText(
      "DCGM_FI_DEV_FB_USED{gpu=\"0\",uuid=\"GPU-1\",pod_name=\"p\",pod_namespace=\"ns\",container_name=\"c\"} 1\n",
      options);
  ASSERT_EQ(old_namespace.samples.size(), 1u);
  EXPECT_EQ(old_namespace.samples[0].gpu.uuid, "GPU-1");
  EXPECT_EQ(old_namespace.samples[0].pod,
            (DcgmPodRef{.namespace_name = "ns", .pod = "p", .container = "c", .vgpu = ""}));
  const DcgmScrape relabelled = NormaliseText(
      Line("DCGM_FI_DEV_FB_USED", "1", ",exported_pod=\"p\",exported_namespace=\"ns\",exported_container=\"c\""),
      options);
  ASSERT_EQ(relabelled.samples.size(), 1u);
  ASSERT_TRUE(relabelled.samples[0].pod.has_value());
  EXPECT_EQ(relabelled.samples[0].pod->pod, "p");
}

TEST(usageDcgmSeries, SpellingsThatDisagreeAndOtherNodesAreConflicts) {
  const DcgmScrapeOptions options{.node = "gpu-node-1"};
  for (const std::string extra : {",Hostname=\"gpu-node-1\",hostname=\"gpu-node-2\"", ",hostname=\"gpu-node-2\"",
                                  ",uuid=\"GPU-other\"", ",pod=\"a\",exported_pod=\"b\""}) {
    const DcgmScrape scrape = NormaliseText(Line("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "0.5", extra), options);
    EXPECT_TRUE(scrape.samples.empty()) << extra;
    EXPECT_EQ(scrape.counts.label_conflicts, 1) << extra;
  }
}

TEST(usageDcgmSeries, UnitsAreNormalisedPerName) {
  const DcgmScrapeOptions options{.node = "n"};
  const DcgmScrape scrape = NormaliseText(
      Line("DCGM_FI_DEV_GPU_UTIL", "99") + Line("DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO", "0.993") +
          Line("DCGM_FI_DEV_FB_CAPACITY_BYTES", "85520809984") +
          Line("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "10154000") + Line("DCGM_FI_DEV_POWER_USAGE", "695.5") +
          Line("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "1.0000004",
               ",GPU_I_ID=\"1\","
               "GPU_I_PROFILE=\"1g."
               "10gb\""),
      options);
  ASSERT_EQ(scrape.samples.size(), 6u);
  EXPECT_EQ(scrape.samples[0].signal, DcgmSignal::kGpuUtil);
  EXPECT_DOUBLE_EQ(scrape.samples[0].value, 0.99);  // percent → ratio
  EXPECT_EQ(scrape.samples[1].signal, DcgmSignal::kGrEngineActive);
  EXPECT_DOUBLE_EQ(scrape.samples[1].value, 0.993);
  EXPECT_EQ(scrape.samples[2].signal, DcgmSignal::kFbCapacity);
  EXPECT_DOUBLE_EQ(scrape.samples[2].value, 81559);  // bytes → MiB
  EXPECT_DOUBLE_EQ(scrape.samples[3].value, 10154);  // mJ → J
  EXPECT_DOUBLE_EQ(scrape.samples[4].value, 695.5);
  EXPECT_DOUBLE_EQ(scrape.samples[5].value, 1.0);  // a rounding past 1
}

TEST(usageDcgmSeries, ValuesTheirUnitCannotHaveAreCounted) {
  const DcgmScrapeOptions options{.node = "n"};
  int uuid = 0;
  std::string text;
  for (const auto& [metric, value] : std::vector<std::pair<std::string, std::string>>{
           {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "NaN"},
           {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "+Inf"},
           {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "1.5"},
           {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "-0.1"},
           {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "140737488355328"},  // DCGM_FP64_BLANK
           {"DCGM_FI_DEV_GPU_UTIL", "101"},
           {"DCGM_FI_DEV_FB_USED", "9223372036854775794"},  // an int64 blank
           {"DCGM_FI_DEV_FB_USED", "-1"},
       }) {
    text += metric + "{UUID=\"GPU-" + std::to_string(uuid++) + "\"} " + value + "\n";
  }
  const DcgmScrape scrape = NormaliseText(text + "DCGM_FI_DEV_FB_USED{UUID=\"GPU-ok\"} 0\n", options);
  EXPECT_EQ(scrape.counts.bad_value, 8);
  ASSERT_EQ(scrape.samples.size(), 1u);
  EXPECT_EQ(scrape.samples[0].gpu.uuid, "GPU-ok");
}

TEST(usageDcgmSeries, LabelsThatAreNotNumbersAreCounted) {
  const DcgmScrapeOptions options{.node = "n"};
  const DcgmScrape scrape = NormaliseText(
      "DCGM_FI_DEV_FB_USED{UUID=\"GPU-1\",gpu=\"x\"} 1\n"
      "DCGM_FI_DEV_FB_USED{UUID=\"GPU-2\",GPU_I_ID=\"seven\",GPU_I_PROFILE=\"1g.10gb\"} 1\n"
      "DCGM_FI_DEV_FB_USED{UUID=\"GPU-3\",GPU_I_ID=\"7\"} 1\n"
      "DCGM_FI_DEV_FB_USED{UUID=\"GPU-4\",GPU_I_PROFILE=\"1g.10gb\"} 1\n"
      "DCGM_FI_DEV_FB_USED{UUID=\"GPU-5\",GPU_I_ID=\"-1\",GPU_I_PROFILE=\"1g.10gb\"} 1\n",
      options);
  EXPECT_EQ(scrape.counts.bad_label, 5);
  EXPECT_TRUE(scrape.samples.empty());
}

// #582: in the virtual-GPUs mode each device series is copied per sharing
// pod. The copies are one measurement, kept once; copies that disagree are
// counted and kept not at all.
TEST(usageDcgmSeries, CopiesOfADeviceSeriesAreOneSampleOrNone) {
  const DcgmScrapeOptions options{.node = "n", .per_process_pod_values = true};
  const std::string pod_a = ",namespace=\"a\",pod=\"pa\",container=\"c\",vgpu=\"0\"";
  const std::string pod_b = ",namespace=\"b\",pod=\"pb\",container=\"c\",vgpu=\"1\"";
  const DcgmScrape same = NormaliseText(
      Line("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "0.486", pod_a) + Line("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "0.486", pod_b),
      options);
  ASSERT_EQ(same.samples.size(), 1u);
  EXPECT_EQ(same.samples[0].scope, DcgmScope::kDevice);
  EXPECT_DOUBLE_EQ(same.samples[0].value, 0.486);
  EXPECT_EQ(same.counts.label_conflicts, 0);

  const DcgmScrape differ = NormaliseText(Line("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "0.486", pod_a) +
                                              Line("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "0.2", pod_b) +
                                              Line("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "0.486"),
                                          options);
  EXPECT_TRUE(differ.samples.empty());
  EXPECT_EQ(differ.counts.label_conflicts, 3);
}

// Since the exporter's PR #594, GPU_UTIL and FB_USED with a `vgpu` label
// are each pod's own; the device-level series stays.
TEST(usageDcgmSeries, PerPodValuesOnlyWhenTheScrapeSaysTheExporterHasThem) {
  const std::string pod_a = ",namespace=\"a\",pod=\"pa\",container=\"c\",vgpu=\"0\"";
  const std::string pod_b = ",namespace=\"b\",pod=\"pb\",container=\"c\",vgpu=\"1\"";
  const std::string text = Line("DCGM_FI_DEV_GPU_UTIL", "99", pod_a) + Line("DCGM_FI_DEV_GPU_UTIL", "0", pod_b) +
                           Line("DCGM_FI_DEV_GPU_UTIL", "99") + Line("DCGM_FI_DEV_FB_USED", "21842", pod_a) +
                           Line("DCGM_FI_DEV_FB_USED", "0", pod_b) + Line("DCGM_FI_DEV_FB_USED", "21842");

  const DcgmScrape per_pod = NormaliseText(text, {.node = "n", .per_process_pod_values = true});
  ASSERT_EQ(per_pod.samples.size(), 6u);
  EXPECT_EQ(per_pod.counts.label_conflicts, 0);
  int pods = 0;
  for (const auto& sample : per_pod.samples) {
    if (sample.scope == DcgmScope::kPerPod) {
      ++pods;
      EXPECT_EQ(sample.value,
                sample.pod->namespace_name == "a" ? (sample.signal == DcgmSignal::kFbUsed ? 21842 : 0.99) : 0.0);
    }
  }
  EXPECT_EQ(pods, 4);

  // Read as copies of the device (before PR #594), they disagree.
  const DcgmScrape copies = NormaliseText(text, {.node = "n", .per_process_pod_values = false});
  EXPECT_TRUE(copies.samples.empty());
  EXPECT_EQ(copies.counts.label_conflicts, 6);
}

}  // namespace
}  // namespace septa::tenancy::usage
