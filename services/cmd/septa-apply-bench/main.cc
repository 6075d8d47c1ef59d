// GitOps' Diff and Apply (core/apply_service.h) on a real PostgreSQL at the
// issue's scale: one platform apply set of 100 tenants × 10 virtual
// clusters, each cluster with GPU capacity (half the tenants whole GPUs on
// A100 nodes, half MIG slices on H100 nodes), 1,100 objects in all. Times,
// through the use case (each call one SERIALIZABLE transaction, placement
// included): the first apply (everything created and placed), a diff of
// that estate with one change per object, the apply of such a change to
// every object, and the no-op re-apply.
//   septa-apply-bench [--tenants N] [--vclusters-per-tenant M] [--runs R] [--durable]
// Starts a private PostgreSQL (embedded, like septad's) in a fresh temporary
// directory and removes it afterwards.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/percentile.h"
#include "gpu/catalog.h"
#include "services/apiv1/declarations.h"
#include "services/cmd/bench_gpu_node.h"
#include "services/core/apply_service.h"
#include "services/core/auth.h"
#include "services/store/pg_store.h"
#include "services/store/scratch_database.h"

namespace {

using namespace septa;
using Millis = std::chrono::duration<double, std::milli>;

int Die(const Status& st, const char* what) {
  std::fprintf(stderr, "septa-apply-bench: %s: %s\n", what, st.ToString().c_str());
  return 1;
}

// The estate as a pipeline sends it (a septa.v1.ApplyRequest: the apply is
// timed through the API's conversion, intents included); `generation` is
// written into every display name, so that two generations differ in one
// field of every object.
v1::ApplyRequest Estate(int tenants, int per_tenant, int generation) {
  v1::ApplyRequest request;
  request.set_apply_set("platform");
  request.set_source("septa-apply-bench");
  const std::string suffix = " g" + std::to_string(generation);
  for (int t = 0; t < tenants; ++t) {
    const bool mig = t % 2 == 0;
    v1::ApplyObject& tenant_object = *request.add_objects();
    v1::Tenant& tenant = *tenant_object.mutable_tenant();
    tenant.set_name("tenant-" + std::to_string(t));
    tenant.set_trust_tier(mig ? "isolated" : "dedicated");
    tenant.set_display_name("Tenant " + std::to_string(t) + suffix);
    (*tenant.mutable_labels())["cost-center"] = std::to_string(4000 + t);
    for (const char* path : {"display_name", "trust_tier", "labels"}) {
      tenant_object.mutable_declared_fields()->add_paths(path);
    }
    tenant_object.set_source("tenants.yaml");
    for (int v = 0; v < per_tenant; ++v) {
      v1::ApplyObject& vc_object = *request.add_objects();
      v1::VirtualCluster& vc = *vc_object.mutable_virtual_cluster();
      vc.set_tenant(tenant.name());
      vc.set_name("vc-" + std::to_string(v));
      vc.set_display_name("Cluster " + std::to_string(v) + suffix);
      if (mig) {
        auto& slice = *vc.mutable_capacity()->add_mig();
        slice.set_profile("1g.10gb");
        slice.set_count(1);
      } else {
        vc.mutable_capacity()->mutable_gpus()->set_count(1);
      }
      vc.mutable_quota()->set_pods(50);
      for (const char* path : {"display_name", "capacity", "quota.pods"}) {
        vc_object.mutable_declared_fields()->add_paths(path);
      }
      vc_object.set_source("vclusters/" + tenant.name() + ".yaml");
    }
  }
  return request;
}

void Report(const char* what, const std::vector<double>& ms) {
  std::printf("%-44s n=%zu  p50 %.0f ms  p99 %.0f ms  max %.0f ms\n", what, ms.size(), Percentile(ms, 0.5),
              Percentile(ms, 0.99), Percentile(ms, 1.0));
}

}  // namespace

int main(int argc, char** argv) {
  int tenants = 100, per_tenant = 10, runs = 10;
  bool durable = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--tenants" && i + 1 < argc) {
      tenants = std::atoi(argv[++i]);
    } else if (arg == "--vclusters-per-tenant" && i + 1 < argc) {
      per_tenant = std::atoi(argv[++i]);
    } else if (arg == "--runs" && i + 1 < argc) {
      runs = std::atoi(argv[++i]);
    } else if (arg == "--durable") {
      durable = true;
    } else {
      std::fprintf(stderr,
                   "usage: septa-apply-bench [--tenants N] [--vclusters-per-tenant M] [--runs R] [--durable]\n");
      return 2;
    }
  }
  if (tenants < 1 || per_tenant < 0 || runs < 1) return Die(InvalidArgument("counts must be positive"), "flags");

  auto database = store::ScratchDatabase::Open("", "septa-apply-bench", durable);
  if (!database.ok()) return Die(database.status(), "database");
  // septad's statement timeout (5 s) bounds each statement; an attempt is cut
  // at twice it, which a 1,100-object transaction must stay far below.
  store::PgStore store(store::PgStoreOptions{
      .database_url = (*database)->url(), .pool_size = 4, .migrations = (*database)->migrations()});
  if (Status ready = store.Ready(); !ready.ok()) return Die(ready, "store");
  SystemClock clock;

  // Room for every cluster with a fifth to spare: whole A100s and MIG H100s (4 × 1g.10gb-able slots per GPU).
  const int whole_nodes = (tenants / 2 * per_tenant * 6 / 5) / bench::kGpusPerNode + 1;
  const int mig_nodes = whole_nodes;
  const Status seeded = store.Transact(core::TxMode::kReadWrite, [&](core::Tx& tx) -> Status {
    for (int i = 0; i < whole_nodes; ++i)
      SEPTA_RETURN_IF_ERROR(tx.Inventory().PutNode(bench::GpuNode(i, false), clock.Now()));
    for (int i = 0; i < mig_nodes; ++i)
      SEPTA_RETURN_IF_ERROR(tx.Inventory().PutNode(bench::GpuNode(i, true), clock.Now()));
    return Status::Ok();
  });
  if (!seeded.ok()) return Die(seeded, "seeding the inventory");

  core::CapacityLedger ledger(gpu::Catalog::Default());
  core::Authenticator authenticator(store, clock, std::chrono::seconds(5));
  const apiv1::ApplyObjectDecoder decoder;
  core::ApplyService apply(store, clock, ledger, gpu::Catalog::Default(), authenticator, decoder);
  core::RequestContext ctx;
  ctx.principal.admin = true;
  ctx.principal.role = core::Role::kOwner;
  ctx.request_id = "bench";
  const std::size_t objects = static_cast<std::size_t>(Estate(tenants, per_tenant, 0).objects_size());
  std::printf("estate: %d tenants x %d virtual clusters = %zu objects; inventory %d A100 + %d H100 nodes of %d GPUs\n",
              tenants, per_tenant, objects, whole_nodes, mig_nodes, bench::kGpusPerNode);

  auto timed = [&](auto&& call, const char* what) -> Result<double> {
    const auto t0 = std::chrono::steady_clock::now();
    auto outcome = call();
    const double ms = Millis(std::chrono::steady_clock::now() - t0).count();
    if (!outcome.ok()) return Status(outcome.status().code(), std::string(what) + ": " + outcome.status().message());
    return ms;
  };

  // Each call converts its request as the API does (apiv1::ApplyOrderOf), inside the timing.
  const auto order_of = [&](int generation) {
    auto order = apiv1::ApplyOrderOf(Estate(tenants, per_tenant, generation));
    if (!order.ok()) {
      Die(order.status(), "the estate");
      std::exit(1);
    }
    return *std::move(order);
  };
  auto created = timed([&] { return apply.Apply(ctx, order_of(0)); }, "first apply");
  if (!created.ok()) return Die(created.status(), "apply");
  std::printf("%-44s %.0f ms\n", "first apply (every object created, placed)", *created);

  std::vector<double> diffs, updates, noops;
  for (int r = 1; r <= runs; ++r) {
    auto diff = timed([&] { return apply.Diff(ctx, order_of(r)); }, "diff");
    if (!diff.ok()) return Die(diff.status(), "diff");
    diffs.push_back(*diff);
    auto update = timed([&] { return apply.Apply(ctx, order_of(r)); }, "apply");
    if (!update.ok()) return Die(update.status(), "apply");
    updates.push_back(*update);
    auto noop = timed([&] { return apply.Apply(ctx, order_of(r)); }, "re-apply");
    if (!noop.ok()) return Die(noop.status(), "re-apply");
    noops.push_back(*noop);
  }
  Report("diff (one field of every object differs)", diffs);
  Report("apply (one field of every object updated)", updates);
  Report("no-op re-apply (all UNCHANGED)", noops);
  return 0;
}
