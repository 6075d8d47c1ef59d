// septa-inventory-bench: the GPU inventory's share of "inventory reconcile of
// 1,000 nodes <= 2 s" (issue 10, docs/BENCHMARKS.md). 1,000 kubesim nodes of 8
// GPUs each, half H100 with the all-balanced MIG layout, half A100 whole GPUs,
// listed over HTTPS as the informer's first list does, then observed; and the
// whole first sync of the inventory controller into PostgreSQL (an embedded
// server in a temporary directory, or SEPTA_BENCH_DATABASE_URL).
#include <benchmark/benchmark.h>
#include <prometheus/registry.h>

#include <cstdlib>
#include <memory>

#include "services/kube/client.h"
#include "services/kube/gpu_labels.h"
#include "services/kube/resources.h"
#include "services/kubesim/kubesim.h"
#include "services/reconcile/inventory_controller.h"
#include "services/reconcile/node_observation.h"
#include "services/store/pg_store.h"
#include "services/store/scratch_database.h"

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

using septa::kube::kNodes;

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

// A migrated database for the inventory, kept for the whole run; the
// embedded server is stopped and its directory removed at exit.
struct BenchDatabase {
  std::unique_ptr<septa::store::ScratchDatabase> database;  // outlives the store (declared first)
  std::unique_ptr<septa::store::PgStore> store;

  BenchDatabase() {
    const char* external = std::getenv("SEPTA_BENCH_DATABASE_URL");
    auto opened = septa::store::ScratchDatabase::Open(external != nullptr ? external : "", "septa-inventory-bench",
                                                      /*durable=*/true);
    if (!opened.ok()) std::abort();
    database = *std::move(opened);
    store = std::make_unique<septa::store::PgStore>(septa::store::PgStoreOptions{
        .database_url = database->url(), .pool_size = 8, .migrations = database->migrations()});
    if (!store->Ready().ok()) std::abort();
  }
};

septa::store::PgStore& Store() {
  static BenchDatabase database;
  return *database.store;
}

void ForgetStoredNodes() {
  septa::Status st = Store().Transact(septa::core::TxMode::kReadWrite, [](septa::core::Tx& tx) -> septa::Status {
    auto nodes = tx.Inventory().ListNodes();
    SEPTA_RETURN_IF_ERROR(nodes);
    for (const auto& n : *nodes) SEPTA_RETURN_IF_ERROR(tx.Inventory().DeleteNode(n.name));
    return septa::Status::Ok();
  });
  if (!st.ok()) std::abort();
}

// The inventory controller's first sync, as septad runs it before serving:
// the informer lists the 1,000 nodes, the controller observes each and
// writes it (node, 8 GPUs, MIG instances) in a transaction of its own;
// `state.range(0)` workers. Empty store each time (every node written) or,
// with `state.range(1)`, the store already current (every node read, none written).
void BM_FirstSync1000NodesIntoPostgres(benchmark::State& state) {
  auto client = NewClient();
  septa::SystemClock clock;
  const bool current = state.range(1) != 0;
  ForgetStoredNodes();
  for (auto _ : state) {
    state.PauseTiming();
    if (!current) ForgetStoredNodes();
    prometheus::Registry metrics;
    septa::reconcile::InventoryController controller({.workers = static_cast<int>(state.range(0))}, Store(), *client,
                                                     septa::gpu::Catalog::Default(), MigConfigs(), clock, metrics);
    state.ResumeTiming();
    if (!controller.Start(std::chrono::seconds(60)).ok() || !controller.AwaitIdle(std::chrono::seconds(120))) {
      state.SkipWithError("the first sync did not finish");
      return;
    }
    state.PauseTiming();
    controller.Stop();
    state.ResumeTiming();
  }
  std::size_t stored = 0;
  (void)Store().Transact(septa::core::TxMode::kReadOnly, [&](septa::core::Tx& tx) -> septa::Status {
    auto nodes = tx.Inventory().ListNodes();
    SEPTA_RETURN_IF_ERROR(nodes);
    stored = nodes->size();
    return septa::Status::Ok();
  });
  if (stored != 1000) state.SkipWithError("the store does not hold the 1,000 nodes");
  state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_FirstSync1000NodesIntoPostgres)
    ->ArgNames({"workers", "current"})
    ->Args({2, 0})
    ->Args({4, 0})
    ->Args({8, 0})
    ->Args({4, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MeasureProcessCPUTime()
    ->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
