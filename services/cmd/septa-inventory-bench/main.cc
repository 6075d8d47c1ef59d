// septa-inventory-bench: the GPU inventory's share of "inventory reconcile of
// 1,000 nodes <= 2 s" (issue 10, docs/BENCHMARKS.md). 1,000 kubesim nodes of 8
// GPUs each, half H100 with the all-balanced MIG layout, half A100 whole GPUs,
// listed over HTTPS as the informer's first list does, then observed.
#include <benchmark/benchmark.h>

#include <cstdlib>

#include "services/kube/client.h"
#include "services/kube/gpu_labels.h"
#include "services/kubesim/kubesim.h"
#include "services/reconcile/node_observation.h"

namespace {

using nlohmann::json;

constexpr const char* kInventory = R"(
nodes:
  - name: h100-{0..499}
    cpu: "96"
    memory: 1Ti
    taints: [{key: dedicated, value: gpu, effect: NoSchedule}]
    gpus: {model: H100-80GB, count: 8, migConfig: all-balanced}
  - name: a100-{0..499}
    cpu: "64"
    memory: 512Gi
    gpus: {model: A100-80GB, count: 8}
)";

const septa::kube::Resource kNodes{"", "v1", "nodes", false};

septa::kubesim::KubeSim& Sim() {
  static septa::kubesim::KubeSim* sim = [] {
    septa::kubesim::KubeSimOptions options;
    options.io_threads = 2;
    options.inventory = *septa::kubesim::ParseInventory(kInventory, "bench");
    auto* s = new septa::kubesim::KubeSim(options);
    if (!s->Start().ok()) std::abort();
    return s;
  }();
  return *sim;
}

std::unique_ptr<septa::kube::Client> NewClient() {
  auto config = septa::kube::ParseKubeconfig(*Sim().AdminKubeconfig());
  return std::move(*septa::kube::Client::Create(*config));
}

// The nodes as the informer hands them: mutable JSON copies of the list.
std::vector<json> ListNodes(septa::kube::Client& client) {
  auto page = client.List(kNodes, "", {});
  if (!page.ok()) std::abort();
  std::vector<json> nodes;
  nodes.reserve(page->items.size());
  for (const auto& node : page->items) nodes.push_back(node.ToJson());
  return nodes;
}

const septa::gpu::MigPartedConfig& MigConfigs() {
  static const septa::gpu::MigPartedConfig configs = septa::gpu::StockMigPartedConfigs(septa::gpu::Catalog::Default());
  return configs;
}

// Observes every node; aborts unless each is observed with 8 settled GPUs.
void ObserveAll(const std::vector<json>& nodes, benchmark::State& state) {
  for (const json& node : nodes) {
    auto observed = septa::reconcile::ObserveNode(node, septa::gpu::Catalog::Default(), MigConfigs());
    if (!observed.ok() || observed->node.gpus.size() != 8 || !observed->layout_settled) {
      state.SkipWithError("a node was not observed with 8 settled GPUs");
      return;
    }
    benchmark::DoNotOptimize(observed);
  }
}

// Observation alone, per-GPU identity from kubesim's annotation.
void BM_Observe1000Nodes(benchmark::State& state) {
  auto client = NewClient();
  const std::vector<json> nodes = ListNodes(*client);
  for (auto _ : state) ObserveAll(nodes, state);
  state.SetItemsProcessed(state.iterations() * static_cast<long>(nodes.size()));
}
BENCHMARK(BM_Observe1000Nodes)->Unit(benchmark::kMillisecond)->UseRealTime();

// Observation alone, as on a real cluster: no annotation, so every MIG GPU's
// layout is placed from its mig-parted config.
void BM_Observe1000NodesFromLabels(benchmark::State& state) {
  auto client = NewClient();
  std::vector<json> nodes = ListNodes(*client);
  for (json& node : nodes) node["metadata"]["annotations"].erase(septa::kube::kGpuIdentityAnnotation);
  for (auto _ : state) ObserveAll(nodes, state);
  state.SetItemsProcessed(state.iterations() * static_cast<long>(nodes.size()));
}
BENCHMARK(BM_Observe1000NodesFromLabels)->Unit(benchmark::kMillisecond)->UseRealTime();

// The informer's part before it: list 1,000 nodes over HTTPS, copy each to JSON, observe.
void BM_ListAndObserve1000Nodes(benchmark::State& state) {
  auto client = NewClient();
  for (auto _ : state) ObserveAll(ListNodes(*client), state);
  state.SetItemsProcessed(state.iterations() * 1000);
}
// CPU: the whole process, kubesim serving the list included.
BENCHMARK(BM_ListAndObserve1000Nodes)->Unit(benchmark::kMillisecond)->UseRealTime()->MeasureProcessCPUTime();

}  // namespace

BENCHMARK_MAIN();
