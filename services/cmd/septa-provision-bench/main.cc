// septa-provision-bench: issue 13's provisioning targets, with the real
// pieces wired in one process as septad wires them: an embedded PostgreSQL
// (durable unless told otherwise) or --database-url, the virtual-cluster use
// case (what REST and gRPC call) with the capacity ledger, the inventory
// controller's first sync of the simulated host (kubesim) into the store,
// the simulated control planes written through to PostgreSQL, and the
// provisioner controller on shard leases, triggered by NOTIFY.
//
// 1. paced: --paced creates at --rate per second, each timed from the
//    create call to the moment the use case's Get first reports state READY
//    (a listener on the same NOTIFY channel tells an observer which virtual
//    clusters to read);
// 2. burst: --count creates from --clients threads as fast as they go,
//    timed until every one is READY;
// 3. restart: the provisioner, its leases and the control planes are
//    stopped and fresh ones started over the same store and host; timed
//    until every virtual cluster has been reconciled once, counting the
//    host's write requests, the virtual-cluster rows written and the
//    virtual objects written meanwhile (all should be 0); then every control
//    plane is evicted to read the heap an idle one held.
//
// Capacity (stated in the report): half the virtual clusters are `shared`
// (250 milli-GPU, four to an A100-80GB), half `isolated` (one 1g.10gb, seven
// to an H100-80GB in all-1g.10gb); kubesim gets just enough 8-GPU nodes plus
// one of each. docs/BENCHMARKS.md "Provisioning" has the figures.
#include <prometheus/registry.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/percentile.h"
#include "gpu/catalog.h"
#include "gpu/mig_parted.h"
#include "services/base/process_stats.h"
#include "services/core/capacity_ledger.h"
#include "services/core/virtual_cluster_service.h"
#include "services/core/virtual_object_store.h"
#include "services/kube/client.h"
#include "services/kubesim/kubesim.h"
#include "services/reconcile/inventory_controller.h"
#include "services/reconcile/provisioner_controller.h"
#include "services/reconcile/shard_leases.h"
#include "services/store/notification_listener.h"
#include "services/store/pg_lease_store.h"
#include "services/store/pg_store.h"
#include "services/store/pg_virtual_object_store.h"
#include "services/store/scratch_database.h"
#include "services/vcp/simulated_control_planes.h"

namespace {

using namespace septa;
using namespace std::chrono_literals;
using Steady = std::chrono::steady_clock;

constexpr int kTenantsPerTier = 10;
constexpr int kSharedMilliGpu = 250;  // four to a GPU
constexpr int kMig1gPerH100 = 7;      // all-1g.10gb
constexpr int kGpusPerNode = 8;

double Ms(Steady::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

int Die(const Status& st, const char* what) {
  std::fprintf(stderr, "septa-provision-bench: %s: %s\n", what, st.ToString().c_str());
  return 1;
}

// Virtual cluster i: even ones shared, odd ones isolated, spread over the tenants of their tier.
struct Spec {
  std::string tenant;
  tenancy::VirtualCluster draft;
};
Spec SpecOf(int i) {
  Spec s;
  s.draft.name = "vc-" + std::to_string(i);
  s.draft.quota = {.cpu_milli = 4000, .memory_mib = 8192, .pods = 20};
  if (i % 2 == 0) {
    s.tenant = "shared-" + std::to_string(i / 2 % kTenantsPerTier);
    s.draft.capacity.tier = gpu::Tier::kShared;
    s.draft.capacity.milli_gpu = kSharedMilliGpu;
  } else {
    s.tenant = "isolated-" + std::to_string(i / 2 % kTenantsPerTier);
    s.draft.capacity.tier = gpu::Tier::kIsolated;
    s.draft.capacity.mig = {{"1g.10gb", 1, "H100-80GB"}};
  }
  return s;
}

std::string InventoryYaml(int total, int& a100_nodes, int& h100_nodes) {
  const int shared = (total + 1) / 2, isolated = total / 2;
  a100_nodes = (shared * kSharedMilliGpu + 1000 * kGpusPerNode - 1) / (1000 * kGpusPerNode) + 1;
  h100_nodes = (isolated + kMig1gPerH100 * kGpusPerNode - 1) / (kMig1gPerH100 * kGpusPerNode) + 1;
  return "nodes:\n"
         "  - name: a100-{0.." +
         std::to_string(a100_nodes - 1) +
         "}\n"
         "    cpu: \"64\"\n    memory: 512Gi\n    gpus: {model: A100-80GB, count: 8}\n"
         "  - name: h100-{0.." +
         std::to_string(h100_nodes - 1) +
         "}\n"
         "    cpu: \"96\"\n    memory: 1Ti\n    gpus: {model: H100-80GB, count: 8, migConfig: all-1g.10gb}\n";
}

// Forwards to the PostgreSQL store and counts the writes that change something.
class CountingObjectStore final : public core::VirtualObjectStore {
 public:
  explicit CountingObjectStore(core::VirtualObjectStore& inner) : inner_(inner) {}
  std::uint64_t writes() const { return writes_.load(); }

  Result<std::pair<core::StoredControlPlane, bool>> CreateControlPlane(
      const core::VirtualClusterKey& key, const core::StoredControlPlane& created) override {
    auto out = inner_.CreateControlPlane(key, created);
    if (out.ok() && out->second) ++writes_;
    return out;
  }
  Result<std::optional<core::StoredControlPlane>> GetControlPlane(const core::VirtualClusterKey& key) override {
    return inner_.GetControlPlane(key);
  }
  Result<std::vector<core::VirtualClusterKey>> ListControlPlanes() override { return inner_.ListControlPlanes(); }
  Status RemoveControlPlane(const core::VirtualClusterKey& key) override {
    ++writes_;
    return inner_.RemoveControlPlane(key);
  }
  Result<std::vector<core::VirtualObject>> LoadObjects(const core::VirtualClusterKey& key) override {
    return inner_.LoadObjects(key);
  }
  Result<std::optional<std::uint64_t>> ResourceVersion(const core::VirtualClusterKey& key) override {
    return inner_.ResourceVersion(key);
  }
  Status PutObject(const core::VirtualClusterKey& key, const core::VirtualObject& object,
                   std::uint64_t expected) override {
    ++writes_;
    return inner_.PutObject(key, object, expected);
  }
  Status DeleteObject(const core::VirtualClusterKey& key, const std::string& type_key, const std::string& ns,
                      const std::string& name, std::uint64_t resource_version, std::uint64_t expected) override {
    ++writes_;
    return inner_.DeleteObject(key, type_key, ns, name, resource_version, expected);
  }
  Status AddTokenDigest(const core::VirtualClusterKey& key, const std::string& sha256_hex) override {
    ++writes_;
    return inner_.AddTokenDigest(key, sha256_hex);
  }
  Result<std::vector<std::string>> TokenDigests(const core::VirtualClusterKey& key) override {
    return inner_.TokenDigests(key);
  }
  Result<ListenerCertificate> ListenerCa(const ListenerCertificate& created) override {
    return inner_.ListenerCa(created);
  }
  Status ReplaceCaPrivateKey(const core::VirtualClusterKey& key, const std::string& expected,
                             const std::string& replacement) override {
    ++writes_;
    return inner_.ReplaceCaPrivateKey(key, expected, replacement);
  }
  Result<std::optional<ListenerCertificate>> StoredListenerCa() override { return inner_.StoredListenerCa(); }
  Status ReplaceListenerCaPrivateKey(const std::string& expected, const std::string& replacement) override {
    ++writes_;
    return inner_.ReplaceListenerCaPrivateKey(expected, replacement);
  }
  Result<core::CredentialStatus> GetCredentialStatus(const core::VirtualClusterKey& key,
                                                     const std::string& serial) override {
    return inner_.GetCredentialStatus(key, serial);
  }
  Result<std::int64_t> CredentialTtlMax(const core::VirtualClusterKey& key) override {
    return inner_.CredentialTtlMax(key);
  }
  Result<bool> TenantSuspended(const std::string& tenant) override { return inner_.TenantSuspended(tenant); }

 private:
  core::VirtualObjectStore& inner_;
  std::atomic<std::uint64_t> writes_{0};
};

// When each virtual cluster was first reported READY by the use case's Get:
// the NOTIFY of every row change names a virtual cluster to read again.
class ReadyObserver {
 public:
  ReadyObserver(const std::string& database_url, core::VirtualClusterService& service) : service_(service) {
    ctx_.principal.admin = true;
    ctx_.principal.role = core::Role::kOwner;
    ctx_.request_id = "provision-bench";
    thread_ = std::jthread([this](std::stop_token stop) { Run(stop); });
    listener_ = std::make_unique<store::NotificationListener>(
        database_url, "septa_vclusters", [this](const std::string& key) { Changed(key); }, [this] { Changed(""); });
  }
  ~ReadyObserver() {
    listener_.reset();
    thread_.request_stop();
    wake_.notify_all();
  }

  std::uint64_t notifications() const { return notifications_.load(); }
  // Waits until every key has been READY (false after `timeout`).
  bool AwaitReady(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    return ready_cv_.wait_for(lock, timeout, [&] {
      return std::ranges::all_of(keys, [&](const std::string& k) { return ready_at_.contains(k); });
    });
  }
  Steady::time_point ReadyAt(const std::string& key) {
    std::lock_guard lock(mu_);
    return ready_at_.at(key);
  }

 private:
  void Changed(const std::string& key) {
    ++notifications_;
    std::lock_guard lock(mu_);
    if (key.empty()) {
      resync_ = true;  // reconnected: notifications may have been lost
    } else if (!ready_at_.contains(key)) {
      pending_.insert(key);
    }
    wake_.notify_all();
  }

  void Run(std::stop_token stop) {
    while (!stop.stop_requested()) {
      std::set<std::string> batch;
      {
        std::unique_lock lock(mu_);
        wake_.wait_for(lock, 1s, [&] { return stop.stop_requested() || !pending_.empty() || resync_; });
        if (resync_) {
          resync_ = false;
          for (const auto& key : seen_) {
            if (!ready_at_.contains(key)) pending_.insert(key);
          }
        }
        batch.swap(pending_);
        seen_.insert(batch.begin(), batch.end());
      }
      for (const auto& key : batch) {
        const std::optional<core::VirtualClusterKey> parsed = core::ParseVirtualClusterKey(key);
        if (!parsed) continue;
        auto view = service_.Get(ctx_, parsed->tenant, parsed->vcluster);
        if (!view.ok() || view->vcluster.state != tenancy::VirtualClusterState::kReady) continue;
        const auto now = Steady::now();
        std::lock_guard lock(mu_);
        ready_at_.emplace(key, now);
        ready_cv_.notify_all();
      }
    }
  }

  core::VirtualClusterService& service_;
  core::RequestContext ctx_;
  std::mutex mu_;
  std::condition_variable wake_, ready_cv_;
  std::set<std::string> pending_, seen_;
  bool resync_ = false;
  std::map<std::string, Steady::time_point> ready_at_;
  std::atomic<std::uint64_t> notifications_{0};
  std::jthread thread_;
  std::unique_ptr<store::NotificationListener> listener_;  // last: calls into the above
};

// septa_reconcile_total of the provisioner, every result.
double Reconciles(prometheus::Registry& registry) {
  double total = 0;
  for (const auto& family : registry.Collect()) {
    if (family.name != "septa_reconcile_total") continue;
    for (const auto& metric : family.metric) {
      const bool provisioner = std::ranges::any_of(
          metric.label, [](const auto& l) { return l.name == "controller" && l.value == "provisioner"; });
      if (provisioner) total += metric.counter.value;
    }
  }
  return total;
}

// The provisioner as septad runs it: shard leases, the controller, NOTIFY as its trigger.
struct Provisioner {
  Provisioner(core::LeaseStore& leases, core::Store& store, kube::Client& host, core::ControlPlanes& planes,
              const Clock& clock, int workers, const std::string& holder) {
    shards = std::make_unique<reconcile::ShardLeases>(
        reconcile::ShardLeasesOptions{.name = "provisioner", .holder = holder, .shards = 8}, leases, clock);
    shards->Start();
    reconcile::ProvisionerControllerOptions options;
    options.workers = workers;
    options.shards = shards.get();
    controller = std::make_unique<reconcile::ProvisionerController>(options, store, host, &planes, clock, registry);
  }
  // Listening first, as septad: what commits after the first listing is told.
  Status Start(const std::string& database_url) {
    trigger = std::make_unique<store::NotificationListener>(
        database_url, "septa_vclusters", [this](const std::string& key) { controller->EnqueuePayload(key); },
        [this] { controller->Resync(); });
    return controller->Start(30s);
  }
  ~Provisioner() {
    trigger.reset();
    controller.reset();
    shards.reset();  // releases the leases
  }
  prometheus::Registry registry;
  std::unique_ptr<reconcile::ShardLeases> shards;
  std::unique_ptr<reconcile::ProvisionerController> controller;
  std::unique_ptr<store::NotificationListener> trigger;
};

struct Latencies {
  std::vector<double> ms;
  void Print(const char* what) const {
    std::printf("  %s: p50 %.0f ms, p90 %.0f ms, p99 %.0f ms, max %.0f ms\n", what, Percentile(ms, 0.5),
                Percentile(ms, 0.9), Percentile(ms, 0.99), Percentile(ms, 1.0));
  }
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"septa-provision-bench: virtual cluster create -> READY, 1,000 at once, restart reconcile"};
  int paced = 100, count = 1000, clients = 4, workers = 4;
  double rate = 10;
  bool durable = true;
  std::string database_url;
  app.add_option("--paced", paced, "virtual clusters created one at a time at --rate, each timed to READY")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--rate", rate, "paced creates per second")->check(CLI::Range(0.1, 1000.0));
  app.add_option("--count", count, "virtual clusters then created at once (the burst)")->check(CLI::NonNegativeNumber);
  app.add_option("--clients", clients, "threads creating the burst")->check(CLI::PositiveNumber);
  app.add_option("--workers", workers, "the provisioner's workers (septad: 4)")->check(CLI::PositiveNumber);
  app.add_option("--durable", durable, "embedded PostgreSQL with fsync on every commit (as septad)");
  app.add_option("--database-url", database_url, "an empty PostgreSQL database instead of the embedded one");
  CLI11_PARSE(app, argc, argv);
  spdlog::set_level(spdlog::level::warn);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each phase's line as it ends, also into a file
  const int total = paced + count;

  // PostgreSQL.
  auto database = store::ScratchDatabase::Open(database_url, "septa-provision-bench", durable);
  if (!database.ok()) return Die(database.status(), "database");
  database_url = (*database)->url();
  SystemClock clock;
  int exit_code = 0;
  {
    store::PgStore store(store::PgStoreOptions{
        .database_url = database_url, .pool_size = 16, .max_attempts = 50, .migrations = (*database)->migrations()});
    if (Status ready = store.Ready(); !ready.ok()) return Die(ready, "store");

    // The simulated host, counting the write requests it is sent.
    int a100_nodes = 0, h100_nodes = 0;
    auto inventory = kubesim::ParseInventory(InventoryYaml(total, a100_nodes, h100_nodes), "bench");
    if (!inventory.ok()) return Die(inventory.status(), "inventory");
    std::atomic<std::uint64_t> host_writes{0};
    kubesim::KubeSimOptions sim_options;
    sim_options.cluster_name = "septa-host";
    sim_options.inventory = *std::move(inventory);
    sim_options.fault = [&](const http::Request& request) -> std::optional<http::HttpStatus> {
      if (request.method() != boost::beast::http::verb::get) ++host_writes;
      return std::nullopt;
    };
    kubesim::KubeSim sim(std::move(sim_options));
    if (Status st = sim.Start(); !st.ok()) return Die(st, "starting kubesim");
    auto host_client = [&]() -> Result<std::unique_ptr<kube::Client>> {
      auto kubeconfig = sim.AdminKubeconfig();
      SEPTA_RETURN_IF_ERROR(kubeconfig);
      auto config = kube::ParseKubeconfig(*kubeconfig);
      SEPTA_RETURN_IF_ERROR(config);
      return kube::Client::Create(*std::move(config));
    };
    auto host = host_client();
    if (!host.ok()) return Die(host.status(), "host client");

    // The inventory's first sync, as septad does before it serves.
    prometheus::Registry inventory_metrics;
    const gpu::MigPartedConfig mig_configs = gpu::StockMigPartedConfigs(gpu::Catalog::Default());
    reconcile::InventoryController inventory_controller({}, store, **host, gpu::Catalog::Default(), mig_configs, clock,
                                                        inventory_metrics);
    if (Status st = inventory_controller.Start(60s); !st.ok()) return Die(st, "inventory");
    if (!inventory_controller.AwaitIdle(60s)) return Die(DeadlineExceeded("60 s"), "inventory's first sync");

    // Tenants, the ledger and the use case.
    const Status tenants = store.Transact(core::TxMode::kReadWrite, [&](core::Tx& tx) -> Status {
      for (int t = 0; t < kTenantsPerTier; ++t) {
        for (const char* tier : {"shared", "isolated"}) {
          core::Tenant tenant;
          tenant.name = std::string(tier) + "-" + std::to_string(t);
          tenant.trust_tier = tier;
          tenant.version = 1;
          SEPTA_RETURN_IF_ERROR(tx.Tenants().Insert(tenant));
        }
      }
      return Status::Ok();
    });
    if (!tenants.ok()) return Die(tenants, "tenants");
    core::CapacityLedger ledger(gpu::Catalog::Default());
    core::VirtualClusterService service(store, clock, ledger, gpu::Catalog::Default());

    // The control planes and the provisioner.
    store::PgVirtualObjectStore objects({.database_url = database_url, .pool_size = 4});
    store::PgLeaseStore leases({.database_url = database_url});
    const std::string holder = "provision-bench:" + std::to_string(::getpid());
    auto planes = std::make_unique<vcp::SimulatedControlPlanes>(objects, vcp::SimulatedControlPlanesOptions{});
    if (Status st = planes->Start(); !st.ok()) return Die(st, "control planes");
    auto provisioner = std::make_unique<Provisioner>(leases, store, **host, *planes, clock, workers, holder);
    if (Status st = provisioner->Start(database_url); !st.ok()) return Die(st, "provisioner");
    ReadyObserver observer(database_url, service);

    std::printf("septa-provision-bench: %d virtual clusters (%d paced at %.1f/s, %d at once from %d clients)\n", total,
                paced, rate, count, clients);
    std::printf(
        "host: kubesim, %d A100-80GB nodes (8 whole GPUs: shared, %d milli-GPU each, 4 per GPU) and %d "
        "H100-80GB nodes (8 GPUs in all-1g.10gb: isolated, one 1g.10gb each, 7 per GPU); KAI queues\n",
        a100_nodes, kSharedMilliGpu, h100_nodes);
    std::printf("PostgreSQL: %s; provisioner: %d workers, 8 shard leases; load average %s\n",
                (*database)->embedded() ? (durable ? "embedded, durable (fsync on commit)" : "embedded, not durable")
                                        : "--database-url",
                workers, base::LoadAverage().c_str());

    std::vector<Steady::time_point> created_at(total);
    std::atomic<int> failed{0};
    auto create = [&](int i) {
      core::RequestContext ctx;
      ctx.principal.admin = true;
      ctx.principal.role = core::Role::kOwner;
      ctx.request_id = "provision-bench";
      const Spec spec = SpecOf(i);
      created_at[i] = Steady::now();
      auto created = service.Create(ctx, spec.tenant, spec.draft, "");
      if (!created.ok() && failed++ == 0) {
        std::fprintf(stderr, "create %s/%s failed: %s\n", spec.tenant.c_str(), spec.draft.name.c_str(),
                     created.status().ToString().c_str());
      }
    };
    auto key_of = [](int i) {
      const Spec spec = SpecOf(i);
      return tenancy::VirtualClusterText(spec.tenant, spec.draft.name);
    };
    auto keys_in = [&](int from, int to) {
      std::vector<std::string> keys;
      for (int i = from; i < to; ++i) keys.push_back(key_of(i));
      return keys;
    };
    auto latencies_in = [&](int from, int to) {
      Latencies l;
      for (int i = from; i < to; ++i) l.ms.push_back(Ms(observer.ReadyAt(key_of(i)) - created_at[i]));
      return l;
    };

    // 1. Paced.
    if (paced > 0) {
      const auto start = Steady::now();
      const auto interval = std::chrono::duration_cast<Steady::duration>(std::chrono::duration<double>(1.0 / rate));
      for (int i = 0; i < paced; ++i) {
        std::this_thread::sleep_until(start + i * interval);
        create(i);
      }
      if (failed.load() > 0) return Die(Internal(std::to_string(failed.load()) + " creates failed"), "paced");
      if (!observer.AwaitReady(keys_in(0, paced), 120s)) return Die(DeadlineExceeded("120 s"), "paced: READY");
      std::printf("paced: %d creates at %.1f/s, create -> READY (load average %s):\n", paced, rate,
                  base::LoadAverage().c_str());
      latencies_in(0, paced).Print("create -> READY");
    }

    // 2. Burst.
    if (count > 0) {
      const auto start = Steady::now();
      std::atomic<int> next{paced};
      std::vector<std::thread> threads;
      for (int t = 0; t < clients; ++t) {
        threads.emplace_back([&] {
          for (int i = next++; i < total; i = next++) create(i);
        });
      }
      for (auto& t : threads) t.join();
      const double create_s = Ms(Steady::now() - start) / 1000;
      if (failed.load() > 0) return Die(Internal(std::to_string(failed.load()) + " creates failed"), "burst");
      if (!observer.AwaitReady(keys_in(paced, total), 600s)) return Die(DeadlineExceeded("600 s"), "burst: READY");
      Steady::time_point last = start;
      for (int i = paced; i < total; ++i) last = std::max(last, observer.ReadyAt(key_of(i)));
      const double all_s = Ms(last - start) / 1000;
      std::printf(
          "burst: %d creates in %.2f s (%.0f/s); all READY %.2f s after the first create (%.1f READY/s; "
          "load average %s)\n",
          count, create_s, count / create_s, all_s, count / all_s, base::LoadAverage().c_str());
      latencies_in(paced, total).Print("create -> READY under the burst");
    }

    // 3. Restart: a fresh provisioner and fresh control planes over the same store and host.
    // On the same port, as septad's vcluster_addr: the endpoints stay what they were.
    const std::uint16_t planes_port = planes->port();
    provisioner.reset();
    planes.reset();
    const std::uint64_t rows_before = observer.notifications(), host_before = host_writes.load();
    CountingObjectStore counted(objects);
    const auto restart = Steady::now();
    auto fresh_host = host_client();
    if (!fresh_host.ok()) return Die(fresh_host.status(), "host client");
    planes = std::make_unique<vcp::SimulatedControlPlanes>(
        counted, vcp::SimulatedControlPlanesOptions{.port = planes_port, .tick_interval = 0ms, .idle_after = 1ms});
    if (Status st = planes->Start(); !st.ok()) return Die(st, "control planes");
    provisioner = std::make_unique<Provisioner>(leases, store, **fresh_host, *planes, clock, workers, holder);
    if (Status st = provisioner->Start(database_url); !st.ok()) return Die(st, "provisioner");
    const double started_ms = Ms(Steady::now() - restart);
    const auto deadline = Steady::now() + 600s;
    while (Reconciles(provisioner->registry) < total && Steady::now() < deadline) std::this_thread::sleep_for(2ms);
    if (!provisioner->controller->AwaitIdle(60s)) return Die(DeadlineExceeded("60 s"), "restart: idle");
    const double restart_ms = Ms(Steady::now() - restart);
    const double reconciled = Reconciles(provisioner->registry);
    std::this_thread::sleep_for(200ms);  // NOTIFYs of any row written reach the observer
    const std::uint64_t rows = observer.notifications() - rows_before, host_written = host_writes.load() - host_before;
    std::printf(
        "restart: %.0f reconciles of %d virtual clusters in %.0f ms (informers listed and leases taken "
        "after %.0f ms); host writes %llu, virtual-cluster rows written %llu, virtual objects written "
        "%llu (load average %s)\n",
        reconciled, total, restart_ms, started_ms, static_cast<unsigned long long>(host_written),
        static_cast<unsigned long long>(rows), static_cast<unsigned long long>(counted.writes()),
        base::LoadAverage().c_str());
    if (reconciled < total || host_written != 0 || rows != 0 || counted.writes() != 0) exit_code = 1;

    // Memory of an idle control plane: what evicting them all gives back.
    const std::size_t loaded = planes->loaded_count(), heap_loaded = base::HeapInUse();
    std::this_thread::sleep_for(5ms);
    planes->Tick();
    const std::size_t heap_evicted = base::HeapInUse();
    if (loaded > planes->loaded_count()) {
      std::printf("idle control planes: %zu loaded, %.1f KiB of heap each (given back on eviction)\n", loaded,
                  (static_cast<double>(heap_loaded) - static_cast<double>(heap_evicted)) / 1024 /
                      static_cast<double>(loaded - planes->loaded_count()));
    }
    provisioner.reset();
    planes.reset();
  }
  return exit_code;
}
