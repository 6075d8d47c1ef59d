// septa-kubesim-bench: kubesim and the client in one process, over HTTPS on
// loopback. Targets (docs/BENCHMARKS.md): >= 5,000 writes/s, >= 20,000
// reads/s, watch delivery p99 < 5 ms, listing 10,000 pods < 200 ms.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "common/percentile.h"
#include "services/kube/client.h"
#include "services/kube/resources.h"
#include "services/kube/watch.h"
#include "services/kubesim/kubesim.h"

namespace {

using nlohmann::json;
using septa::kube::Client;
using septa::kube::Resource;

using septa::kube::kConfigMaps;
using septa::kube::kLimitRanges;
using septa::kube::kNamespaces;
using septa::kube::kPods;
using septa::kube::kResourceQuotas;

septa::kubesim::KubeSim& Sim() {
  static septa::kubesim::KubeSim* sim = [] {
    septa::kubesim::KubeSimOptions options;
    options.io_threads = 2;
    options.history_limit = 100'000;
    auto* s = new septa::kubesim::KubeSim(options);
    if (!s->Start().ok()) std::abort();
    return s;
  }();
  return *sim;
}

std::unique_ptr<Client> NewClient() {
  auto config = septa::kube::ParseKubeconfig(*Sim().AdminKubeconfig());
  return std::move(*Client::Create(*config));
}

json ConfigMap(const std::string& name) {
  return {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", name}}}, {"data", {{"key", "value"}}}};
}

std::atomic<long> counter{0};

void BM_Writes(benchmark::State& state) {
  auto client = NewClient();
  for (auto _ : state) {
    auto r = client->Create(kConfigMaps, "default", ConfigMap("w-" + std::to_string(counter++)));
    if (!r.ok()) state.SkipWithError(r.status().ToString().c_str());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Writes)->Threads(4)->UseRealTime()->MinTime(2.0);

void BM_Reads(benchmark::State& state) {
  auto client = NewClient();
  if (state.thread_index() == 0) (void)client->Create(kConfigMaps, "default", ConfigMap("read-me"));
  for (auto _ : state) {
    auto r = client->Get(kConfigMaps, "default", "read-me");
    if (!r.ok()) state.SkipWithError(r.status().ToString().c_str());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Reads)->Threads(4)->UseRealTime()->MinTime(2.0);

// Pod creates (one client) in a namespace already holding range(0) pods,
// through LimitRange defaulting and ResourceQuota admission when range(1) is
// 1, or with neither in the namespace when it is 0.
void BM_PodCreates(benchmark::State& state) {
  auto client = NewClient();
  const bool quota = state.range(1) == 1;
  const std::string ns = "pods-" + std::to_string(state.range(0)) + (quota ? "-quota" : "");
  const auto pod = [](const std::string& name) {
    return json{{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", name}}},
                {"spec", {{"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}};
  };
  // The benchmark runs this function more than once; the namespace is set up once.
  if (client->Create(kNamespaces, "", {{"metadata", {{"name", ns}}}}).ok()) {
    if (quota) {
      (void)client->Create(kResourceQuotas, ns,
                           {{"metadata", {{"name", "q"}}},
                            {"spec", {{"hard", {{"pods", "1M"}, {"requests.cpu", "1M"}, {"limits.memory", "1Pi"}}}}}});
      (void)client->Create(
          kLimitRanges, ns,
          {{"metadata", {{"name", "defaults"}}},
           {"spec", {{"limits", {{{"type", "Container"}, {"default", {{"cpu", "1"}, {"memory", "1Gi"}}}}}}}}});
    }
    for (long i = 0; i < state.range(0); ++i) {
      auto r = client->Create(kPods, ns, pod("pre-" + std::to_string(i)));
      if (!r.ok()) return state.SkipWithError(r.status().ToString().c_str());
    }
  }
  for (auto _ : state) {
    auto r = client->Create(kPods, ns, pod("p-" + std::to_string(counter++)));
    if (!r.ok()) state.SkipWithError(r.status().ToString().c_str());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PodCreates)->Args({0, 0})->Args({0, 1})->Args({1000, 1})->UseRealTime()->MinTime(2.0);

// From just before a write is sent until a watcher holds its event; the
// p50 and p99 are reported as counters (milliseconds).
void BM_WatchDelivery(benchmark::State& state) {
  auto writer = NewClient();
  auto watcher_client = NewClient();
  std::mutex mu;
  std::condition_variable cv;
  std::map<std::string, std::chrono::steady_clock::time_point> received;
  septa::kube::StreamCancel cancel;
  septa::kube::ListOptions none;
  none.limit = 1;
  auto page = writer->List(kConfigMaps, "default", none);
  septa::kube::WatchOptions o;
  o.resource_version = page.ok() ? page->resource_version : "";
  o.allow_bookmarks = false;
  const auto on_event = [&](const septa::kube::WatchEvent& e) {
    auto now = std::chrono::steady_clock::now();
    std::lock_guard lock(mu);
    received[e.object["metadata"].value("name", "")] = now;
    cv.notify_all();
    return true;
  };
  septa::Status watch_end;
  std::thread watcher(
      [&] { watch_end = septa::kube::WatchOnce(*watcher_client, kConfigMaps, "default", o, on_event, &cancel); });
  std::vector<double> latencies_ms;
  for (auto _ : state) {
    std::string name = "lat-" + std::to_string(counter++);
    auto sent = std::chrono::steady_clock::now();
    if (!writer->Create(kConfigMaps, "default", ConfigMap(name)).ok()) state.SkipWithError("write failed");
    std::unique_lock lock(mu);
    if (!cv.wait_for(lock, std::chrono::seconds(5), [&] { return received.count(name) > 0; })) {
      state.SkipWithError("event never arrived");
      break;
    }
    latencies_ms.push_back(std::chrono::duration<double, std::milli>(received[name] - sent).count());
  }
  cancel.Cancel();
  watcher.join();
  if (!watch_end.ok() && watch_end.code() != septa::Code::kCancelled) {
    state.SkipWithError(("the watch failed: " + watch_end.ToString()).c_str());
  }
  if (!latencies_ms.empty()) {
    state.counters["p50_ms"] = septa::Percentile(latencies_ms, 0.50);
    state.counters["p99_ms"] = septa::Percentile(latencies_ms, 0.99);
  }
}
BENCHMARK(BM_WatchDelivery)->UseRealTime()->Iterations(2000);

void SeedTenThousandPods() {
  static bool seeded = [] {
    (void)Sim().api().CreateObject("", "namespaces",
                                   {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "bench"}}}});
    for (int i = 0; i < 10'000; ++i) {
      json pod = {{"apiVersion", "v1"},
                  {"kind", "Pod"},
                  {"metadata",
                   {{"name", "pod-" + std::to_string(i)},
                    {"namespace", "bench"},
                    {"labels", {{"app", "bench"}, {"shard", std::to_string(i % 16)}}}}},
                  {"spec",
                   {{"containers",
                     {{{"name", "main"},
                       {"image", "registry.example/train:1.0"},
                       {"resources", {{"limits", {{"nvidia.com/gpu", "1"}, {"cpu", "4"}, {"memory", "16Gi"}}}}}}}},
                    {"nodeName", "node-" + std::to_string(i % 100)}}}};
      (void)Sim().api().CreateObject("", "pods", pod);
    }
    return true;
  }();
  (void)seeded;
}

// The client lists 10,000 pods (in pages of 500, as informers do, and in one
// page) and reads two fields of every pod, so nothing is left undecoded.
void BM_List10kPods(benchmark::State& state) {
  SeedTenThousandPods();
  auto client = NewClient();
  septa::kube::ListOptions o;
  o.limit = state.range(0);
  for (auto _ : state) {
    auto all = client->ListAll(kPods, "bench", o);
    if (!all.ok() || all->items.size() != 10'000) state.SkipWithError("list failed");
    std::size_t on_nodes = 0;
    for (const auto& pod : all->items) on_nodes += !pod.Name().empty() && pod.StringAt("/spec/nodeName").has_value();
    if (on_nodes != 10'000) state.SkipWithError("a pod lost its name or node");
  }
  state.SetItemsProcessed(state.iterations() * 10'000);
}
BENCHMARK(BM_List10kPods)->Arg(500)->Arg(10'000)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same list, then a mutable nlohmann::json copy of every pod (what the
// informer keeps in its cache).
void BM_List10kPodsToJson(benchmark::State& state) {
  SeedTenThousandPods();
  auto client = NewClient();
  septa::kube::ListOptions o;
  o.limit = 500;
  for (auto _ : state) {
    auto all = client->ListAll(kPods, "bench", o);
    if (!all.ok() || all->items.size() != 10'000) state.SkipWithError("list failed");
    std::vector<json> copies;
    copies.reserve(all->items.size());
    for (const auto& pod : all->items) copies.push_back(pod.ToJson());
    benchmark::DoNotOptimize(copies.data());
  }
  state.SetItemsProcessed(state.iterations() * 10'000);
}
BENCHMARK(BM_List10kPodsToJson)->Unit(benchmark::kMillisecond)->UseRealTime();

// One pass of the workload controllers over a settled cluster (its own
// kubesim, no ticker, no nodes): range(0) Deployments of 10 replicas (their
// pods Pending) and range(1) pods that no controller owns. A settled pass
// writes nothing. The controllers pass after any write (else once a
// second): each iteration writes a ConfigMap first, which costs microseconds.
void BM_WorkloadPass(benchmark::State& state) {
  septa::kubesim::KubeSimOptions options;
  options.tick_interval = std::chrono::milliseconds(0);
  septa::kubesim::KubeSim sim(options);
  if (!sim.Start().ok()) std::abort();
  for (int i = 0; i < state.range(0); ++i) {
    const std::string name = "web-" + std::to_string(i);
    (void)sim.api().CreateObject("apps", "deployments",
                                 {{"apiVersion", "apps/v1"},
                                  {"kind", "Deployment"},
                                  {"metadata", {{"name", name}, {"namespace", "default"}}},
                                  {"spec",
                                   {{"replicas", 10},
                                    {"selector", {{"matchLabels", {{"app", name}}}}},
                                    {"template",
                                     {{"metadata", {{"labels", {{"app", name}}}}},
                                      {"spec", {{"containers", {{{"name", "c"}, {"image", "nginx"}}}}}}}}}}});
  }
  for (int i = 0; i < state.range(1); ++i) {
    (void)sim.api().CreateObject("", "pods",
                                 {{"apiVersion", "v1"},
                                  {"kind", "Pod"},
                                  {"metadata", {{"name", "pod-" + std::to_string(i)}, {"namespace", "default"}}},
                                  {"spec", {{"containers", {{{"name", "c"}, {"image", "nginx"}}}}}}});
  }
  for (int i = 0; i < 8; ++i) sim.Tick();  // ReplicaSets, pods, statuses
  long writes = 0;
  for (auto _ : state) {
    (void)sim.api().CreateObject(
        "", "configmaps",
        {{"apiVersion", "v1"},
         {"kind", "ConfigMap"},
         {"metadata", {{"name", "touch-" + std::to_string(writes++)}, {"namespace", "default"}}}});
    const auto before = sim.cluster().storage.current_resource_version();
    sim.Tick();
    if (sim.cluster().storage.current_resource_version() != before) state.SkipWithError("a settled pass wrote");
  }
}
BENCHMARK(BM_WorkloadPass)->Args({0, 0})->Args({100, 0})->Args({100, 10'000})->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
