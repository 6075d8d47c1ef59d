// Virtual cluster creation with GPU reservation on a real PostgreSQL, at the
// scale of issue 10's targets: an inventory of 1,000 GPU nodes of 8 GPUs
// (half H100 in MIG mode, half whole A100), then creates through the use
// case — each one a SERIALIZABLE transaction that reads the capacity epoch,
// places through the engine and writes the virtual cluster, its reservation
// rows (the double-booking triggers run) and an audit record. Also measures
// rebuilding the engine from the rows, as a replica does at start.
//   septa-capacity-bench [--creates N] [--threads T] [--durable]
// Starts a private PostgreSQL (embedded, like septad's) in a fresh temporary
// directory and removes it afterwards.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/percentile.h"
#include "gpu/catalog.h"
#include "services/cmd/bench_gpu_node.h"
#include "services/core/capacity_ledger.h"
#include "services/core/virtual_cluster_service.h"
#include "services/store/pg_store.h"
#include "services/store/scratch_database.h"

namespace {

using namespace septa;
using Millis = std::chrono::duration<double, std::milli>;

constexpr int kNodes = 1000;

int Die(const Status& st, const char* what) {
  std::fprintf(stderr, "septa-capacity-bench: %s: %s\n", what, st.ToString().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  int creates = 2000, threads = 4;
  bool durable = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--creates" && i + 1 < argc) {
      creates = std::atoi(argv[++i]);
    } else if (arg == "--threads" && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else if (arg == "--durable") {
      durable = true;
    } else {
      std::fprintf(stderr, "usage: septa-capacity-bench [--creates N] [--threads T] [--durable]\n");
      return 2;
    }
  }
  if (creates < 1 || threads < 1) return Die(InvalidArgument("--creates and --threads must be positive"), "flags");

  auto database = store::ScratchDatabase::Open("", "septa-capacity-bench", durable);
  if (!database.ok()) return Die(database.status(), "database");
  store::PgStore store(store::PgStoreOptions{.database_url = (*database)->url(),
                                             .pool_size = threads + 2,
                                             .max_attempts = 50,
                                             .migrations = (*database)->migrations()});
  if (Status ready = store.Ready(); !ready.ok()) return Die(ready, "store");
  SystemClock clock;

  // The inventory and one tenant per creator thread and tier.
  auto t0 = std::chrono::steady_clock::now();
  for (int batch = 0; batch < kNodes; batch += 100) {
    const Status seeded = store.Transact(core::TxMode::kReadWrite, [&](core::Tx& tx) -> Status {
      for (int i = batch; i < batch + 100; ++i)
        SEPTA_RETURN_IF_ERROR(tx.Inventory().PutNode(bench::GpuNode(i, i % 2 == 0), clock.Now()));
      return Status::Ok();
    });
    if (!seeded.ok()) return Die(seeded, "seeding the inventory");
  }
  const Status tenants = store.Transact(core::TxMode::kReadWrite, [&](core::Tx& tx) -> Status {
    for (int t = 0; t < threads; ++t) {
      for (const char* tier : {"isolated", "dedicated"}) {
        core::Tenant tenant;
        tenant.name = std::string(tier) + "-" + std::to_string(t);
        tenant.trust_tier = tier;
        tenant.version = 1;
        SEPTA_RETURN_IF_ERROR(tx.Tenants().Insert(tenant));
      }
    }
    return Status::Ok();
  });
  if (!tenants.ok()) return Die(tenants, "seeding tenants");
  std::printf("inventory: %d nodes x %d GPUs stored in %.0f ms\n", kNodes, bench::kGpusPerNode,
              Millis(std::chrono::steady_clock::now() - t0).count());

  core::CapacityLedger ledger(gpu::Catalog::Default());
  core::VirtualClusterService service(store, clock, ledger, gpu::Catalog::Default());
  // As septad does before it serves: the engine is built once up front.
  const Status built =
      ledger.Transact(store, core::TxMode::kReadOnly,
                      [](core::Tx& tx, core::CapacityLedger::Session& s) { return s.Engine(tx).status(); });
  if (!built.ok()) return Die(built, "building the engine");

  std::vector<std::vector<double>> latencies(threads);
  std::atomic<int> next{0}, failed{0};
  t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      core::RequestContext ctx;
      ctx.principal.admin = true;
      ctx.principal.role = core::Role::kOwner;
      ctx.request_id = "bench";
      for (int i = next++; i < creates; i = next++) {
        tenancy::VirtualCluster vc;
        vc.name = "vc-" + std::to_string(i);
        std::string tenant;
        if (i % 2 == 0) {
          tenant = "isolated-" + std::to_string(t);
          vc.capacity.tier = gpu::Tier::kIsolated;
          vc.capacity.mig = {{"3g.40gb", 1, ""}, {"1g.10gb", 1, ""}};
        } else {
          tenant = "dedicated-" + std::to_string(t);
          vc.capacity.tier = gpu::Tier::kDedicated;
          vc.capacity.model = "A100-80GB";
          vc.capacity.count = 2;
        }
        const auto start = std::chrono::steady_clock::now();
        auto created = service.Create(ctx, tenant, vc, "");
        latencies[t].push_back(Millis(std::chrono::steady_clock::now() - start).count());
        if (!created.ok()) {
          if (failed++ == 0) std::fprintf(stderr, "create failed: %s\n", created.status().ToString().c_str());
        }
      }
    });
  }
  for (auto& w : workers) w.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::vector<double> all;
  for (const auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  std::printf("creates: %d in %.2f s = %.0f/s with %d threads; p50 %.2f ms, p90 %.2f ms, p99 %.2f ms; %d failed\n",
              creates, seconds, creates / seconds, threads, Percentile(all, 0.5), Percentile(all, 0.9),
              Percentile(all, 0.99), failed.load());

  // validate_only (the portal's form check): every rule and a placement in a
  // rolled-back transaction; the engine it moved is rebuilt by the next
  // session, so each check here pays one rebuild.
  {
    core::RequestContext ctx;
    ctx.principal.admin = true;
    ctx.principal.role = core::Role::kOwner;
    ctx.request_id = "bench-check";
    constexpr int kChecks = 50;
    std::vector<double> checks;
    for (int i = 0; i < kChecks; ++i) {
      tenancy::VirtualCluster vc;
      vc.name = "check-" + std::to_string(i);
      vc.capacity.tier = gpu::Tier::kIsolated;
      vc.capacity.mig = {{"2g.20gb", 1, ""}};  // the profile the creates above left free
      const auto start = std::chrono::steady_clock::now();
      auto checked = service.Create(ctx, "isolated-0", vc, "", core::WriteMode::kValidateOnly);
      checks.push_back(Millis(std::chrono::steady_clock::now() - start).count());
      if (!checked.ok()) return Die(checked.status(), "validate_only create");
    }
    std::printf("validate_only creates: %d one after another, p50 %.2f ms, p90 %.2f ms, max %.2f ms\n", kChecks,
                Percentile(checks, 0.5), Percentile(checks, 0.9), Percentile(checks, 1.0));

    // Real creates from one client, alone and while two clients check
    // without pause: checks run on the service's twin ledger, so the creates
    // should not wait for them.
    auto timed_creates = [&](const std::string& prefix) -> Result<std::vector<double>> {
      std::vector<double> took;
      for (int i = 0; i < 600; ++i) {
        tenancy::VirtualCluster vc;
        vc.name = prefix + std::to_string(i);
        vc.capacity.tier = gpu::Tier::kDedicated;
        vc.capacity.model = "A100-80GB";
        vc.capacity.count = 1;
        const auto start = std::chrono::steady_clock::now();
        auto created = service.Create(ctx, "dedicated-1", vc, "");
        took.push_back(Millis(std::chrono::steady_clock::now() - start).count());
        if (!created.ok()) return created.status();
      }
      return took;
    };
    auto alone = timed_creates("alone-");
    if (!alone.ok()) return Die(alone.status(), "creates alone");
    std::atomic<bool> stop{false};
    std::atomic<int> checked{0}, refused{0};
    std::mutex first_refusal_mu;
    std::string first_refusal;
    std::vector<std::thread> checkers;
    for (int c = 0; c < 2; ++c) {
      checkers.emplace_back([&, c] {
        for (int i = 0; !stop; ++i) {
          tenancy::VirtualCluster vc;
          vc.name = "probe-" + std::to_string(c) + "-" + std::to_string(i);
          vc.capacity.tier = gpu::Tier::kIsolated;
          vc.capacity.mig = {{"2g.20gb", 1, ""}};  // the profile the creates above left free
          // Two tenants: one check per tenant is in flight at a time.
          auto answer =
              service.Create(ctx, "isolated-" + std::to_string(c + 1), vc, "", core::WriteMode::kValidateOnly);
          if (answer.ok()) {
            ++checked;
          } else if (refused++ == 0) {
            std::lock_guard lock(first_refusal_mu);
            first_refusal = answer.status().ToString();
          }
        }
      });
    }
    auto beside = timed_creates("beside-");
    stop = true;
    for (auto& c : checkers) c.join();
    if (!beside.ok()) return Die(beside.status(), "creates beside checks");
    std::printf(
        "600 creates from one client: alone p50 %.2f ms, p99 %.2f ms; beside 2 clients checking "
        "(%d checks answered meanwhile, %d failed%s%s) p50 %.2f ms, p99 %.2f ms\n",
        Percentile(*alone, 0.5), Percentile(*alone, 0.99), checked.load(), refused.load(),
        first_refusal.empty() ? "" : ", the first: ", first_refusal.c_str(), Percentile(*beside, 0.5),
        Percentile(*beside, 0.99));
  }

  // A second replica's first create rebuilds its engine from every row.
  core::CapacityLedger fresh(gpu::Catalog::Default());
  t0 = std::chrono::steady_clock::now();
  const Status rebuilt =
      fresh.Transact(store, core::TxMode::kReadOnly,
                     [](core::Tx& tx, core::CapacityLedger::Session& s) { return s.Engine(tx).status(); });
  if (!rebuilt.ok()) return Die(rebuilt, "rebuilding the engine");
  std::printf("engine rebuilt from %d reservations on %d nodes in %.0f ms\n", creates - failed.load(), kNodes,
              Millis(std::chrono::steady_clock::now() - t0).count());
  return failed.load() == 0 ? 0 : 1;
}
