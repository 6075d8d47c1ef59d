// kubesim's dcgm-exporter test double through its real interface: pods with
// the simulation annotations run on simulated GPU nodes, the exporters are
// found through the cluster's API (the DaemonSet's pods) and scraped over
// HTTP, and what they serve is judged by the readers septad uses: the strict
// Prometheus text parser (common/prometheus_text.h) and the DCGM series
// normaliser (tenancy/usage/dcgm_series.h).
#include "services/kubesim/dcgm_exporter.h"

#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "common/prometheus_text.h"
#include "gpu/catalog.h"
#include "gpu/gpu_uuid.h"
#include "services/kube/client.h"
#include "services/kube/gpu_labels.h"
#include "services/kube/resources.h"
#include "services/kubesim/kubesim.h"
#include "services/kubesim/nodesim.h"
#include "tenancy/usage/dcgm_series.h"
#include "tests/support/dcgm_test_inventory.h"
#include "tests/support/fake_clock.h"
#include "tests/support/seeded_random.h"
#include "tests/unit/services/http/test_client.h"

namespace septa::kubesim {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
using kube::kNodes;
using kube::kPods;
using tenancy::usage::DcgmSample;
using tenancy::usage::DcgmScope;
using tenancy::usage::DcgmScrape;
using tenancy::usage::DcgmSignal;

// What one GET of an exporter gave, read as septad reads it.
struct DcgmRead {
  std::string text;
  PrometheusExposition exposition;
  DcgmScrape typed;

  // The typed samples of `signal` on GPU `uuid` (and GPU instance `gi`).
  std::vector<DcgmSample> Of(DcgmSignal signal, const std::string& uuid, std::optional<int> gi = std::nullopt,
                             DcgmScope scope = DcgmScope::kDevice) const {
    std::vector<DcgmSample> out;
    for (const DcgmSample& s : typed.samples) {
      if (s.signal == signal && s.gpu.uuid == uuid && s.gpu.gi_id == gi && s.scope == scope) out.push_back(s);
    }
    return out;
  }
  // The one device sample of `signal` on that device; fails the test otherwise.
  DcgmSample One(DcgmSignal signal, const std::string& uuid, std::optional<int> gi = std::nullopt) const {
    auto found = Of(signal, uuid, gi);
    EXPECT_EQ(found.size(), 1u) << tenancy::usage::DcgmSignalName(signal) << " of " << uuid << "\n" << text;
    return found.empty() ? DcgmSample{} : found.front();
  }
  // The exposition's lines of metric `name`.
  std::vector<const PrometheusSample*> Series(std::string_view name) const {
    std::vector<const PrometheusSample*> out;
    for (const PrometheusSample& s : exposition.samples) {
      if (s.name == name) out.push_back(&s);
    }
    return out;
  }
};

// A simulated cluster with exporters, driven by hand: a fake clock and ticks
// the test calls, so that every draw and every joule is reproducible.
class DcgmCluster {
 public:
  explicit DcgmCluster(DcgmSimOptions dcgm, std::uint64_t seed = 42) : random_(seed) {
    KubeSimOptions options;
    options.clock = &clock_;
    options.random = &random_;
    options.tick_interval = 0ms;
    options.nodes.pod_start_delay = 1s;
    options.inventory = *ParseInventory(test::kDcgmTestInventory, "test");
    if (!dcgm.seed) dcgm.seed = seed;
    options.dcgm = std::move(dcgm);
    sim_ = std::make_unique<KubeSim>(options);
    Status started = sim_->Start();
    EXPECT_TRUE(started.ok()) << started.ToString();
    auto config = kube::ParseKubeconfig(*sim_->AdminKubeconfig());
    client_ = std::move(*kube::Client::Create(*config));
  }

  // A pod on `node` whose one container asks for `limits`, with `annotations`.
  void CreatePod(const std::string& name, const std::string& node, const json& limits,
                 const json& annotations = json::object()) {
    json container = {{"name", "main"}, {"image", "cuda"}};
    if (!limits.empty()) container["resources"] = {{"limits", limits}};
    json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", name}, {"annotations", annotations}}},
                {"spec",
                 {{"nodeSelector", {{"kubernetes.io/hostname", node}}},
                  {"tolerations", {{{"operator", "Exists"}}}},
                  {"containers", {container}}}}};
    auto created = client_->Create(kPods, "default", pod);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
  }

  // Binds and starts what was created (the start delay is 1 s).
  void RunPods() {
    sim_->Tick();
    clock_.Advance(1s);
    sim_->Tick();
  }

  std::string Phase(const std::string& pod) {
    auto got = client_->Get(kPods, "default", pod);
    return got.ok() ? (*got)["status"].value("phase", "") : "";
  }

  // Where a scraper finds `node`'s exporter through the API: the pod of
  // the GPU Operator's DaemonSet on that node, its IP and `metrics` port.
  std::pair<std::string, std::uint16_t> Endpoint(const std::string& node) {
    kube::ListOptions options;
    options.label_selector = "app=nvidia-dcgm-exporter";
    auto page = client_->List(kPods, "gpu-operator", options);
    EXPECT_TRUE(page.ok()) << page.status().ToString();
    if (!page.ok()) return {"", 0};
    for (const kube::Object& item : page->items) {
      if (item.StringAt("/spec/nodeName") != node) continue;
      const json pod = item.ToJson();
      if (pod["status"].value("phase", "") != "Running") continue;
      for (const json& port : pod["spec"]["containers"][0]["ports"]) {
        if (port.value("name", "") == "metrics") {
          return {pod["status"].value("podIP", ""), static_cast<std::uint16_t>(port.value("containerPort", 0))};
        }
      }
    }
    return {"", 0};
  }

  // GET `path` from `node`'s exporter over a real socket.
  http::testing::Resp Get(const std::string& node, const std::string& path) {
    const auto [ip, port] = Endpoint(node);
    EXPECT_EQ(ip, "127.0.0.1");
    http::testing::TestClient client(port);
    client.Send(boost::beast::http::verb::get, path, "", false);
    return client.Read();
  }

  // One scrape of `node`, parsed strictly and normalised.
  DcgmRead Scrape(const std::string& node, bool per_process_pod_values = false) {
    DcgmRead read;
    auto res = Get(node, "/metrics");
    EXPECT_EQ(res.result_int(), 200) << res.body();
    read.text = res.body();
    auto parsed = ParsePrometheusText(read.text, PrometheusTextLimits{});
    EXPECT_TRUE(parsed.ok()) << parsed.status().ToString() << "\n" << read.text;
    if (!parsed.ok()) return read;
    read.exposition = *std::move(parsed);
    read.typed = tenancy::usage::NormaliseDcgm(read.exposition,
                                               {.node = node, .per_process_pod_values = per_process_pod_values});
    const auto& counts = read.typed.counts;
    EXPECT_EQ(counts.unknown_metric + counts.unidentified + counts.bad_label + counts.bad_value, 0) << read.text;
    return read;
  }

  // The node's GPUs as its identity annotation publishes them.
  json GpuIdentity(const std::string& node) {
    json object = *client_->Get(kNodes, "", node);
    return json::parse(object["metadata"]["annotations"][kube::kGpuIdentityAnnotation].get<std::string>());
  }

  FakeClock& clock() { return clock_; }
  KubeSim& sim() { return *sim_; }
  kube::Client& client() { return *client_; }

 private:
  FakeClock clock_;
  SeededRandom random_;
  std::unique_ptr<KubeSim> sim_;
  std::unique_ptr<kube::Client> client_;
};

const std::string kA100Gpu0 = gpu::SyntheticGpuUuid("a100-0", 0);
const std::string kA100Gpu1 = gpu::SyntheticGpuUuid("a100-0", 1);

double A100MemoryMib() { return gpu::Catalog::Default().Find("A100-80GB")->memory_mib; }

std::string PodOf(const DcgmSample& sample) { return sample.pod ? sample.pod->pod : ""; }

TEST(kubesimDcgmExporter, EachGpuNodesExporterIsFoundThroughTheApiAndServesItsNode) {
  DcgmCluster cluster({});
  kube::ListOptions options;
  options.label_selector = "app=nvidia-dcgm-exporter";
  auto pods = cluster.client().List(kPods, "gpu-operator", options);
  ASSERT_TRUE(pods.ok());
  std::set<std::string> nodes;
  for (const kube::Object& pod : pods->items) nodes.insert(std::string(*pod.StringAt("/spec/nodeName")));
  EXPECT_EQ(nodes, (std::set<std::string>{"a100-0", "h100-0"})) << "one per GPU node, none on cpu-0";

  for (const std::string node : {"a100-0", "h100-0"}) {
    const auto [ip, port] = cluster.Endpoint(node);
    EXPECT_EQ(ip, "127.0.0.1");
    EXPECT_NE(port, 0);
    EXPECT_EQ(port, cluster.sim().dcgm_exporters()->port(node));
    auto res = cluster.Get(node, "/metrics");
    EXPECT_EQ(http::View(res[boost::beast::http::field::content_type]), "text/plain; version=0.0.4; charset=utf-8");
    const DcgmRead read = cluster.Scrape(node);
    ASSERT_FALSE(read.typed.samples.empty());
    EXPECT_EQ(read.typed.counts.label_conflicts, 0);
    for (const DcgmSample& s : read.typed.samples) {
      EXPECT_EQ(s.gpu.node, node);
      EXPECT_TRUE(s.gpu.uuid == gpu::SyntheticGpuUuid(node, 0) || s.gpu.uuid == gpu::SyntheticGpuUuid(node, 1))
          << s.gpu.uuid << ": the inventory's UUIDs";
    }
    EXPECT_EQ(cluster.Get(node, "/health").body(), "OK\n");
    EXPECT_EQ(cluster.Get(node, "/other").result_int(), 404);
  }

  // A deleted exporter pod comes back, as its DaemonSet would bring it.
  const std::string name = DcgmExporters::PodName("a100-0");
  ASSERT_TRUE(cluster.client().Delete(kPods, "gpu-operator", name).ok());
  EXPECT_EQ(cluster.Endpoint("a100-0").second, 0);
  cluster.clock().Advance(2s);
  cluster.sim().Tick();
  EXPECT_EQ(cluster.Endpoint("a100-0").second, cluster.sim().dcgm_exporters()->port("a100-0"));
}

TEST(kubesimDcgmExporter, APercentIsTheBusyShareOfThePodsGpusExactly) {
  DcgmCluster cluster({});
  cluster.CreatePod("train", "a100-0", {{"nvidia.com/gpu", "1"}}, {{kSimulatedGpuUtilizationAnnotation, "50"}});
  cluster.RunPods();
  ASSERT_EQ(cluster.Phase("train"), "Running");
  const DcgmRead read = cluster.Scrape("a100-0");
  const DcgmSample gr = read.One(DcgmSignal::kGrEngineActive, kA100Gpu0);
  EXPECT_EQ(gr.value, 0.5) << "DCGM_FI_PROF_GR_ENGINE_ACTIVE, a ratio";
  ASSERT_TRUE(gr.pod);
  EXPECT_EQ(*gr.pod, (tenancy::usage::DcgmPodRef{.namespace_name = "default", .pod = "train", .container = "main"}));
  EXPECT_EQ(read.One(DcgmSignal::kGpuUtil, kA100Gpu0).value, 0.5) << "DCGM_FI_DEV_GPU_UTIL, 50 %";
  EXPECT_EQ(read.Series("DCGM_FI_DEV_GPU_UTIL").front()->value, 50);
  const DcgmSample idle = read.One(DcgmSignal::kGrEngineActive, kA100Gpu1);
  EXPECT_EQ(idle.value, 0);
  EXPECT_FALSE(idle.pod) << "nobody runs on GPU 1";

  // Without the annotation a running GPU pod is busy all the time
  // (fake-gpu-operator's default); a value that does not parse is ignored.
  cluster.CreatePod("loud", "a100-0", {{"nvidia.com/gpu", "1"}}, {{kSimulatedGpuUtilizationAnnotation, "lots"}});
  cluster.RunPods();
  EXPECT_EQ(cluster.Scrape("a100-0").One(DcgmSignal::kGrEngineActive, kA100Gpu1).value, 1.0);
}

TEST(kubesimDcgmExporter, ARangeIsDrawnAnewAtEachScrapeWithinItAndTheSeedRepeatsTheDraws) {
  auto draws = [](std::uint64_t seed) {
    DcgmCluster cluster({}, seed);
    cluster.CreatePod("web", "a100-0", {{"nvidia.com/gpu", "1"}}, {{kSimulatedGpuUtilizationAnnotation, "10-30"}});
    cluster.RunPods();
    std::vector<double> out;
    for (int i = 0; i < 25; ++i) {
      const DcgmRead read = cluster.Scrape("a100-0");
      const double gr = read.One(DcgmSignal::kGrEngineActive, kA100Gpu0).value;
      EXPECT_GE(gr, 0.10);
      EXPECT_LE(gr, 0.30);
      const double util = read.One(DcgmSignal::kGpuUtil, kA100Gpu0).value;
      EXPECT_GE(util, 0.10);
      EXPECT_LE(util, 0.30);
      out.push_back(gr);
      cluster.clock().Advance(1s);
    }
    return out;
  };
  const std::vector<double> first = draws(7);
  EXPECT_GE(std::set<double>(first.begin(), first.end()).size(), 10u) << "drawn anew at each scrape";
  EXPECT_EQ(draws(7), first) << "the same seed, the same draws";
  EXPECT_NE(draws(8), first);
}

TEST(kubesimDcgmExporter, MemoryIsWhatThePodHoldsOnEachOfItsDevices) {
  DcgmCluster cluster({});
  cluster.CreatePod("pair", "a100-0", {{"nvidia.com/gpu", "2"}},
                    {{kSimulatedGpuUtilizationAnnotation, "0"}, {kSimulatedGpuMemoryAnnotation, "20480"}});
  cluster.CreatePod("slice", "h100-0", {{"nvidia.com/mig-3g.40gb", "1"}}, {{kSimulatedGpuMemoryAnnotation, "10240"}});
  cluster.RunPods();
  const DcgmRead a100 = cluster.Scrape("a100-0");
  for (const std::string& uuid : {kA100Gpu0, kA100Gpu1}) {
    EXPECT_EQ(a100.One(DcgmSignal::kFbUsed, uuid).value, 20480);
    EXPECT_EQ(a100.One(DcgmSignal::kFbFree, uuid).value, A100MemoryMib() - 20480);
    EXPECT_EQ(a100.One(DcgmSignal::kFbReserved, uuid).value, 0);
    EXPECT_EQ(a100.One(DcgmSignal::kGrEngineActive, uuid).value, 0) << "holding memory, computing nothing";
  }
  const DcgmRead h100 = cluster.Scrape("h100-0");
  const gpu::MigProfile* profile = gpu::Catalog::Default().Find("H100-80GB")->FindProfile("3g.40gb");
  int held = 0;
  for (const DcgmSample& s : h100.typed.samples) {
    if (s.signal != DcgmSignal::kFbUsed || PodOf(s) != "slice") continue;
    ++held;
    EXPECT_EQ(s.value, 10240);
    EXPECT_EQ(s.gpu.mig_profile, "3g.40gb");
    EXPECT_EQ(h100.One(DcgmSignal::kFbFree, s.gpu.uuid, s.gpu.gi_id).value, profile->memory_mib - 10240);
  }
  EXPECT_EQ(held, 1) << "one MIG instance";
}

TEST(kubesimDcgmExporter, MigInstancesCarryTheGpuInstanceIdsOfTheNodesLayout) {
  DcgmCluster cluster({});
  // What the node publishes (and Septa's inventory reads): each instance's giId.
  std::set<std::tuple<std::string, int, std::string>> published;
  std::optional<int> first_3g;
  for (const json& g : cluster.GpuIdentity("h100-0")) {
    for (const json& d : g["migDevices"]) {
      published.insert({g["uuid"].get<std::string>(), d["giId"].get<int>(), d["profile"].get<std::string>()});
      if (!first_3g && d["profile"] == "3g.40gb" && g["index"] == 0) first_3g = d["giId"].get<int>();
    }
  }
  ASSERT_EQ(published.size(), 8u) << "all-balanced: 2 x (1g.10gb x 2, 2g.20gb, 3g.40gb)";
  ASSERT_TRUE(first_3g);

  cluster.CreatePod("infer", "h100-0", {{"nvidia.com/mig-3g.40gb", "1"}}, {{kSimulatedGpuUtilizationAnnotation, "75"}});
  cluster.RunPods();
  const DcgmRead read = cluster.Scrape("h100-0");
  std::set<std::tuple<std::string, int, std::string>> reported;
  for (const DcgmSample& s : read.typed.samples) {
    if (s.signal != DcgmSignal::kGrEngineActive) continue;
    ASSERT_TRUE(s.gpu.gi_id) << "a MIG GPU reports per instance";
    reported.insert({s.gpu.uuid, *s.gpu.gi_id, s.gpu.mig_profile});
    if (PodOf(s) == "infer") {
      EXPECT_EQ(s.value, 0.75);
      EXPECT_EQ(s.gpu.uuid, gpu::SyntheticGpuUuid("h100-0", 0)) << "the parent GPU's UUID";
      EXPECT_EQ(*s.gpu.gi_id, *first_3g) << "the first free 3g.40gb instance";
    } else {
      EXPECT_EQ(s.value, 0);
    }
  }
  EXPECT_EQ(reported, published);
  EXPECT_TRUE(read.Series("DCGM_FI_DEV_GPU_UTIL").empty()) << "GPU_UTIL is not reported per MIG instance";
}

TEST(kubesimDcgmExporter, GpuInstanceIdsFollowSizeAndPlacement) {
  const gpu::GpuModel& h100 = *gpu::Catalog::Default().Find("H100-80GB");
  auto id = [&](std::string_view profile, int start) {
    const gpu::MigLayout layout = {{h100.ProfileIndex(profile), start}};
    return SimulatedGpuInstanceId(h100, layout, 0);
  };
  EXPECT_EQ(id("7g.80gb", 0), 0);
  EXPECT_EQ(id("4g.40gb", 0), 1);
  EXPECT_EQ(id("3g.40gb", 0), 1);
  EXPECT_EQ(id("3g.40gb", 4), 2);
  EXPECT_EQ(id("2g.20gb", 2), 4);
  EXPECT_EQ(id("1g.20gb", 6), 6);
  EXPECT_EQ(id("1g.10gb", 0), 7);
  EXPECT_EQ(id("1g.10gb", 4), 11) << "USAGE-FACTS §1.6's H100 1g.10gb instance";
  EXPECT_EQ(id("1g.10gb", 6), 13);
  gpu::MigLayout seven;
  for (int start = 0; start < 7; ++start) seven.push_back({h100.ProfileIndex("1g.10gb"), start});
  std::set<int> ids;
  for (std::size_t i = 0; i < seven.size(); ++i) ids.insert(SimulatedGpuInstanceId(h100, seven, i));
  EXPECT_EQ(ids, (std::set<int>{7, 8, 9, 10, 11, 12, 13}));
}

TEST(kubesimDcgmExporter, TheEnergyCounterOnlyGrows) {
  DcgmCluster cluster({});
  cluster.CreatePod("half", "a100-0", {{"nvidia.com/gpu", "1"}}, {{kSimulatedGpuUtilizationAnnotation, "50"}});
  cluster.RunPods();
  auto energy = [&](const DcgmRead& read, const std::string& uuid) {
    return read.One(DcgmSignal::kEnergy, uuid).value;
  };
  const DcgmRead first = cluster.Scrape("a100-0");
  EXPECT_EQ(first.One(DcgmSignal::kPower, kA100Gpu0).value, 385) << "70 W idle + 630 W x 50 %";
  EXPECT_EQ(first.One(DcgmSignal::kPower, kA100Gpu1).value, 70);
  cluster.clock().Advance(30s);
  const DcgmRead later = cluster.Scrape("a100-0");
  EXPECT_NEAR(energy(later, kA100Gpu0) - energy(first, kA100Gpu0), 385.0 * 30, 1e-6) << "joules";
  EXPECT_NEAR(energy(later, kA100Gpu1) - energy(first, kA100Gpu1), 70.0 * 30, 1e-6);
  EXPECT_EQ(later.Series("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION").front()->value,
            first.Series("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION").front()->value + 385.0 * 30 * 1000)
      << "in millijoules";
  // No time passed, or the clock went back: the counter stays.
  EXPECT_EQ(energy(cluster.Scrape("a100-0"), kA100Gpu0), energy(later, kA100Gpu0));
  cluster.clock().Set(cluster.clock().Now() - 10s);
  EXPECT_EQ(energy(cluster.Scrape("a100-0"), kA100Gpu0), energy(later, kA100Gpu0));
  cluster.clock().Advance(20s);
  EXPECT_GT(energy(cluster.Scrape("a100-0"), kA100Gpu0), energy(later, kA100Gpu0));
}

// The label names of a series, in the order written.
std::vector<std::string> LabelNames(const PrometheusSample& sample) {
  std::vector<std::string> out;
  for (const PrometheusLabel& label : sample.labels) out.push_back(label.name);
  return out;
}

TEST(kubesimDcgmExporter, EachExporterVersionRendersItsNamesLabelsAndUnits) {
  for (const DcgmExporterVersion version :
       {DcgmExporterVersion::k4_8_2, DcgmExporterVersion::k4_8_3, DcgmExporterVersion::k4_9}) {
    SCOPED_TRACE(std::string(DcgmExporterVersionName(version)));
    DcgmSimOptions options;
    options.profile.version = version;
    DcgmCluster cluster(options);
    cluster.CreatePod("train", "a100-0", {{"nvidia.com/gpu", "1"}},
                      {{kSimulatedGpuUtilizationAnnotation, "50"}, {kSimulatedGpuMemoryAnnotation, "1024"}});
    cluster.CreatePod("infer", "h100-0", {{"nvidia.com/mig-1g.10gb", "1"}},
                      {{kSimulatedGpuUtilizationAnnotation, "25"}});
    cluster.RunPods();
    const DcgmRead a100 = cluster.Scrape("a100-0");
    const DcgmRead h100 = cluster.Scrape("h100-0");
    EXPECT_EQ(a100.typed.counts.label_conflicts, 0);
    // Whatever the names, the same typed values.
    EXPECT_EQ(a100.One(DcgmSignal::kGrEngineActive, kA100Gpu0).value, 0.5);
    EXPECT_EQ(a100.One(DcgmSignal::kGpuUtil, kA100Gpu0).value, 0.5);
    EXPECT_EQ(PodOf(a100.One(DcgmSignal::kGrEngineActive, kA100Gpu0)), "train");
    EXPECT_EQ(a100.One(DcgmSignal::kPower, kA100Gpu0).value, 385);

    const std::string node_label = version == DcgmExporterVersion::k4_8_2 ? "Hostname" : "hostname";
    const std::string other_label = version == DcgmExporterVersion::k4_8_2 ? "hostname" : "Hostname";
    EXPECT_NE(a100.text.find(node_label + "=\"a100-0\""), std::string::npos);
    EXPECT_EQ(a100.text.find(other_label + "="), std::string::npos);
    const std::string driver_label =
        version == DcgmExporterVersion::k4_9 ? "DCGM_FI_SYSTEM_DRIVER_VERSION" : "DCGM_FI_DRIVER_VERSION";
    const std::string gr_name =
        version == DcgmExporterVersion::k4_9 ? "DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO" : "DCGM_FI_PROF_GR_ENGINE_ACTIVE";
    if (version == DcgmExporterVersion::k4_9) {
      EXPECT_EQ(a100.Series("DCGM_FI_PROF_GR_ENGINE_ACTIVE").size(), 0u);
      EXPECT_EQ(a100.Series("DCGM_FI_DEV_GPU_UTIL").size(), 0u);
      EXPECT_EQ(a100.Series("DCGM_FI_DEV_GPU_UTIL_RATIO").front()->value, 0.5) << "a ratio now";
      EXPECT_EQ(a100.Series("DCGM_FI_DEV_POWER_USAGE").size(), 0u);
      EXPECT_EQ(a100.Series("DCGM_FI_DEV_BOARD_POWER_WATTS").size(), 2u);
      EXPECT_EQ(a100.One(DcgmSignal::kFbCapacity, kA100Gpu0).value, A100MemoryMib());
      EXPECT_EQ(a100.Series("DCGM_FI_DEV_FB_CAPACITY_BYTES").front()->value, A100MemoryMib() * 1024 * 1024) << "bytes";
      EXPECT_EQ(a100.Series("DCGM_FI_DEV_FB_USED").size(), 0u) << "its 4.9 name is not known: left out";
      EXPECT_EQ(a100.Series("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION").size(), 0u);
    } else {
      EXPECT_EQ(a100.Series("DCGM_FI_DEV_GPU_UTIL").front()->value, 50) << "a percent";
      EXPECT_EQ(a100.One(DcgmSignal::kFbUsed, kA100Gpu0).value, 1024);
      EXPECT_EQ(a100.Series("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION").size(), 2u);
      EXPECT_EQ(a100.Series("DCGM_FI_DEV_FB_CAPACITY_BYTES").size(), 0u);
    }
    const PrometheusFamily* family = a100.exposition.FamilyOf(gr_name);
    ASSERT_NE(family, nullptr);
    EXPECT_EQ(family->type, PrometheusType::kGauge);

    // USAGE-FACTS §1.3's template, in its order, then the pod's attributes sorted.
    const PrometheusSample* mig = nullptr;
    for (const PrometheusSample* s : h100.Series(gr_name)) {
      if (s->Label("pod") == "infer") mig = s;
    }
    ASSERT_NE(mig, nullptr) << h100.text;
    EXPECT_EQ(LabelNames(*mig),
              (std::vector<std::string>{"gpu", "UUID", "pci_bus_id", "device", "modelName", "GPU_I_PROFILE", "GPU_I_ID",
                                        node_label, driver_label, "container", "namespace", "pod"}));
    EXPECT_EQ(mig->Label("modelName"), "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(mig->Label(driver_label), "580.159.04");
    EXPECT_EQ(mig->value, 0.25);
  }
}

TEST(kubesimDcgmExporter, TheOldNamespaceSpellsUuidAndThePodLabelsTheOldWay) {
  DcgmSimOptions options;
  options.profile.old_namespace = true;
  DcgmCluster cluster(options);
  cluster.CreatePod("train", "a100-0", {{"nvidia.com/gpu", "1"}}, {{kSimulatedGpuUtilizationAnnotation, "40"}});
  cluster.RunPods();
  const DcgmRead read = cluster.Scrape("a100-0");
  const PrometheusSample* gr = read.Series("DCGM_FI_PROF_GR_ENGINE_ACTIVE").front();
  EXPECT_EQ(LabelNames(*gr),
            (std::vector<std::string>{"gpu", "uuid", "pci_bus_id", "device", "modelName", "hostname",
                                      "DCGM_FI_DRIVER_VERSION", "container_name", "pod_name", "pod_namespace"}));
  const DcgmSample sample = read.One(DcgmSignal::kGrEngineActive, kA100Gpu0);
  EXPECT_EQ(sample.value, 0.4);
  EXPECT_EQ(PodOf(sample), "train");
}

// Two pods sharing GPU 0 of a100-0 as KAI's fractions do (no device
// requested), started one after the other: "first" at 20 %, "second" at 30 %.
void ShareGpu0(DcgmCluster& cluster) {
  cluster.CreatePod(
      "first", "a100-0", json::object(),
      {{"gpu-fraction", "0.5"}, {kSimulatedGpuUtilizationAnnotation, "20"}, {kSimulatedGpuMemoryAnnotation, "1000"}});
  cluster.RunPods();
  cluster.CreatePod(
      "second", "a100-0", json::object(),
      {{"gpu-fraction", "0.5"}, {kSimulatedGpuUtilizationAnnotation, "30"}, {kSimulatedGpuMemoryAnnotation, "2000"}});
  cluster.RunPods();
  ASSERT_EQ(cluster.Phase("first"), "Running");
  ASSERT_EQ(cluster.Phase("second"), "Running");
}

TEST(kubesimDcgmExporter, OnASharedGpuTheLastPodListedWinsByDefault) {
  DcgmCluster cluster({});
  ShareGpu0(cluster);
  const DcgmRead read = cluster.Scrape("a100-0");
  int on_gpu0 = 0;
  for (const PrometheusSample* s : read.Series("DCGM_FI_PROF_GR_ENGINE_ACTIVE")) {
    EXPECT_NE(s->Label("pod"), "first") << "the other pods get no series";
    if (s->Label("UUID") != kA100Gpu0) continue;
    ++on_gpu0;
    EXPECT_EQ(s->Label("pod"), "second");
  }
  EXPECT_EQ(on_gpu0, 1);
  const DcgmSample gr = read.One(DcgmSignal::kGrEngineActive, kA100Gpu0);
  EXPECT_EQ(gr.value, 0.5) << "the device: 20 % + 30 %";
  EXPECT_EQ(PodOf(gr), "second");
  EXPECT_EQ(read.One(DcgmSignal::kFbUsed, kA100Gpu0).value, 3000);
  EXPECT_EQ(read.One(DcgmSignal::kGrEngineActive, kA100Gpu1).value, 0) << "both fit on GPU 0";

  ASSERT_TRUE(cluster.client().Delete(kPods, "default", "second").ok());
  const DcgmSample alone = cluster.Scrape("a100-0").One(DcgmSignal::kGrEngineActive, kA100Gpu0);
  EXPECT_EQ(alone.value, 0.2);
  EXPECT_EQ(PodOf(alone), "first");
}

TEST(kubesimDcgmExporter, TheVirtualGpusModeCopiesEachSeriesPerPod) {
  DcgmSimOptions options;
  options.profile.mapping = DcgmPodMapping::kVirtualGpus;
  DcgmCluster cluster(options);
  ShareGpu0(cluster);
  const DcgmRead read = cluster.Scrape("a100-0", true);
  std::map<std::string, std::string> vgpus;  // pod -> vgpu
  for (const PrometheusSample* s : read.Series("DCGM_FI_PROF_GR_ENGINE_ACTIVE")) {
    if (s->Label("UUID") != kA100Gpu0) continue;
    vgpus[std::string(s->Label("pod").value_or(""))] = std::string(s->Label("vgpu").value_or(""));
    EXPECT_EQ(s->value, 0.5) << "every copy the device's value";
  }
  EXPECT_EQ(vgpus, (std::map<std::string, std::string>{{"first", "0"}, {"second", "1"}}));
  EXPECT_EQ(read.typed.counts.label_conflicts, 0);
  EXPECT_EQ(read.One(DcgmSignal::kGrEngineActive, kA100Gpu0).value, 0.5) << "copies that agree are one sample";

  // PR #594: GPU_UTIL and FB_USED per pod, beside the device's.
  std::map<std::string, double> util, memory;
  for (const DcgmSample& s : read.Of(DcgmSignal::kGpuUtil, kA100Gpu0, std::nullopt, DcgmScope::kPerPod))
    util[PodOf(s)] = s.value;
  for (const DcgmSample& s : read.Of(DcgmSignal::kFbUsed, kA100Gpu0, std::nullopt, DcgmScope::kPerPod))
    memory[PodOf(s)] = s.value;
  EXPECT_EQ(util, (std::map<std::string, double>{{"first", 0.2}, {"second", 0.3}}));
  EXPECT_EQ(memory, (std::map<std::string, double>{{"first", 1000}, {"second", 2000}}));
  EXPECT_EQ(read.One(DcgmSignal::kGpuUtil, kA100Gpu0).value, 0.5);
  EXPECT_EQ(read.One(DcgmSignal::kFbUsed, kA100Gpu0).value, 3000);

  // Before PR #594 every copy carried the device's value (#582).
  DcgmSimOptions copies = options;
  copies.profile.per_process_values = false;
  DcgmCluster before(copies);
  ShareGpu0(before);
  const DcgmRead old = before.Scrape("a100-0");
  for (const PrometheusSample* s : old.Series("DCGM_FI_DEV_GPU_UTIL")) {
    if (s->Label("UUID") != kA100Gpu0) continue;
    EXPECT_TRUE(s->Label("pod").has_value());
    EXPECT_EQ(s->value, 50);
  }
  EXPECT_EQ(old.Series("DCGM_FI_DEV_GPU_UTIL").size(), 3u) << "GPU 0 once per pod, GPU 1 once";
  EXPECT_EQ(old.One(DcgmSignal::kGpuUtil, kA100Gpu0).value, 0.5);
  EXPECT_EQ(old.typed.counts.label_conflicts, 0);
}

TEST(kubesimDcgmExporter, PinnedGpusAreTheOnesThePodGets) {
  DcgmCluster cluster({});
  // Septa's placement recorded GPU 1; HAMi's pin names GPU 0 by UUID.
  cluster.CreatePod("dedicated", "a100-0", {{"nvidia.com/gpu", "1"}},
                    {{kSimulatedGpuUtilizationAnnotation, "40"},
                     {"septa.dev/assignment", R"({"node":"a100-0","gpus":[1],"migProfile":"","migCount":0})"}});
  cluster.CreatePod("hami", "a100-0", {{"nvidia.com/gpu", "1"}},
                    {{kSimulatedGpuUtilizationAnnotation, "10"}, {"nvidia.com/use-gpuuuid", kA100Gpu0}});
  cluster.RunPods();
  const DcgmRead read = cluster.Scrape("a100-0");
  EXPECT_EQ(PodOf(read.One(DcgmSignal::kGrEngineActive, kA100Gpu1)), "dedicated");
  EXPECT_EQ(read.One(DcgmSignal::kGrEngineActive, kA100Gpu1).value, 0.4);
  EXPECT_EQ(PodOf(read.One(DcgmSignal::kGrEngineActive, kA100Gpu0)), "hami");
  EXPECT_EQ(read.One(DcgmSignal::kGrEngineActive, kA100Gpu0).value, 0.1);
}

TEST(kubesimDcgmExporter, TheKnobsParseStrictly) {
  auto range = [](std::string_view text) {
    auto parsed = ParseSimulatedUtilization(text);
    return parsed ? std::optional<std::pair<double, double>>({parsed->low, parsed->high}) : std::nullopt;
  };
  EXPECT_EQ(range("50"), std::make_pair(50.0, 50.0));
  EXPECT_EQ(range("10-30"), std::make_pair(10.0, 30.0));
  EXPECT_EQ(range("48.6"), std::make_pair(48.6, 48.6));
  EXPECT_EQ(range("0"), std::make_pair(0.0, 0.0));
  EXPECT_EQ(range("100"), std::make_pair(100.0, 100.0));
  for (std::string_view bad : {"", "abc", "101", "-5", "30-10", "10-", "-", "1e2", " 50", "50%", "10-20-30"}) {
    EXPECT_EQ(range(bad), std::nullopt) << bad;
  }
  EXPECT_EQ(ParseSimulatedMemoryMib("20480"), 20480);
  for (std::string_view bad : {"", "1.5", "-1", "20Gi", "9999999999999"}) {
    EXPECT_EQ(ParseSimulatedMemoryMib(bad), std::nullopt) << bad;
  }
  EXPECT_EQ(*ParseDcgmExporterVersion("4.8.2"), DcgmExporterVersion::k4_8_2);
  EXPECT_EQ(*ParseDcgmExporterVersion("4.5.3-4.8.2"), DcgmExporterVersion::k4_8_2);
  EXPECT_EQ(*ParseDcgmExporterVersion("3.3.9"), DcgmExporterVersion::k4_8_2) << "Hostname before 4.8.3";
  EXPECT_EQ(*ParseDcgmExporterVersion("4.6.0-4.8.3"), DcgmExporterVersion::k4_8_3);
  EXPECT_EQ(*ParseDcgmExporterVersion("4.9"), DcgmExporterVersion::k4_9);
  EXPECT_EQ(*ParseDcgmExporterVersion("4.9.0"), DcgmExporterVersion::k4_9);
  for (std::string_view bad : {"", "4", "4.10.0", "5.0", "latest", "4.8.x"}) {
    EXPECT_FALSE(ParseDcgmExporterVersion(bad).ok()) << bad;
  }
  EXPECT_EQ(*ParseDcgmPodMapping("virtual-gpus"), DcgmPodMapping::kVirtualGpus);
  EXPECT_EQ(*ParseDcgmPodMapping("last-pod-wins"), DcgmPodMapping::kLastPodWins);
  EXPECT_FALSE(ParseDcgmPodMapping("copies").ok());
}

}  // namespace
}  // namespace septa::kubesim
