// GPU usage at the scale on a real PostgreSQL (issue 34,
// docs/usage.md):
//  - ingest: 1,000 nodes of 8 GPUs (a quarter H100s in MIG mode, three
//    instances each, the rest whole A100s), every node held by its own
//    tenant; each round parses and normalises every node's exposition (as
//    kubesim's exporter renders it) and accounts it through
//    core::UsageAccounting, one transaction per node, as the scraper does
//    every 30 s. Reported: septad's CPU time per round (getrusage: this
//    process only; PostgreSQL's is its own) against the 30 s a round may
//    take, wall time, and the peak resident memory;
//  - reports: a month of day rows for every tenant (recorded through the
//    store as a month of accounting would leave them, one row per day),
//    then one tenant's month by day and virtual cluster, and every
//    tenant's month by tenant, through core::UsageService.
//   septa-usage-bench [--nodes N] [--rounds R] [--report-runs K] [--durable]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/percentile.h"
#include "common/prometheus_text.h"
#include "gpu/catalog.h"
#include "services/core/usage_accounting.h"
#include "services/core/usage_service.h"
#include "services/kubesim/dcgm_text.h"
#include "services/store/pg_store.h"
#include "services/store/scratch_database.h"
#include "tenancy/usage/dcgm_series.h"

namespace {

using namespace septa;
using Millis = std::chrono::duration<double, std::milli>;
constexpr int kGpus = 8;

int Die(const Status& st, const char* what) {
  std::fprintf(stderr, "septa-usage-bench: %s: %s\n", what, st.ToString().c_str());
  return 1;
}

double CpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

long PeakRssMib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024;
}

std::string NodeName(int i) { return (i % 4 == 0 ? "h100-" : "a100-") + std::to_string(i); }
std::string Uuid(int node, int gpu) { return "GPU-" + std::to_string(node) + "-" + std::to_string(gpu); }

// Node i: 8 GPUs, MIG 3g.40gb@0 + 2g.20gb@4 + 1g.10gb@6 (GI ids 1, 5, 13) on every fourth.
gpu::InventoryNode Node(int i) {
  const bool mig = i % 4 == 0;
  const gpu::GpuModel& model = *gpu::Catalog::Default().Find(mig ? "H100-80GB" : "A100-80GB");
  gpu::InventoryNode n;
  n.name = NodeName(i);
  n.cpu_milli = 96000;
  n.memory_mib = 1 << 20;
  for (int g = 0; g < kGpus; ++g) {
    gpu::InventoryGpu gpu;
    gpu.model = model.name;
    gpu.index = g;
    gpu.uuid = Uuid(i, g);
    gpu.mig_enabled = mig;
    if (mig) {
      gpu.mig_layout = {
          {model.ProfileIndex("3g.40gb"), 0}, {model.ProfileIndex("2g.20gb"), 4}, {model.ProfileIndex("1g.10gb"), 6}};
      gpu.mig_gi_ids = {{0, 1}, {4, 5}, {6, 13}};
    }
    n.gpus.push_back(gpu);
  }
  return n;
}

// Node i's exporter text: every GPU or instance busy 50 %, 20 GiB used.
std::string Exposition(int i) {
  const bool mig = i % 4 == 0;
  std::vector<kubesim::DcgmDevice> devices;
  for (int g = 0; g < kGpus; ++g) {
    const auto device = [&](std::optional<int> gi, std::string profile) {
      devices.push_back({.gpu = g,
                         .uuid = Uuid(i, g),
                         .pci_bus_id = "00000000:" + std::to_string(10 + g) + ":00.0",
                         .model_name = mig ? "NVIDIA H100 80GB HBM3" : "NVIDIA A100-SXM4-80GB",
                         .gi_id = gi,
                         .mig_profile = std::move(profile),
                         .busy_percent = 50,
                         .total_mib = 81920,
                         .used_mib = 20480,
                         .power_watts = 400,
                         .energy_millijoules = 1e9});
    };
    if (mig) {
      device(1, "3g.40gb");
      device(5, "2g.20gb");
      device(13, "1g.10gb");
    } else {
      device(std::nullopt, "");
    }
  }
  return kubesim::RenderDcgmText(NodeName(i), devices, {});
}

Status Seed(core::Store& store, int nodes, TimePoint now) {
  return store.Transact(core::TxMode::kReadWrite, [&](core::Tx& tx) -> Status {
    for (int i = 0; i < nodes; ++i) {
      const bool mig = i % 4 == 0;
      SEPTA_RETURN_IF_ERROR(tx.Inventory().PutNode(Node(i), now));
      core::Tenant tenant;
      tenant.name = "tenant-" + std::to_string(i);
      tenant.trust_tier = mig ? "isolated" : "dedicated";
      tenant.version = 1;
      SEPTA_RETURN_IF_ERROR(tx.Tenants().Insert(tenant));
      tenancy::VirtualCluster vc;
      vc.tenant = tenant.name;
      vc.name = "train";
      vc.capacity.tier = mig ? gpu::Tier::kIsolated : gpu::Tier::kDedicated;
      vc.state = tenancy::VirtualClusterState::kReady;
      vc.host_namespace = tenant.name + "-x-train";
      SEPTA_RETURN_IF_ERROR(tx.VirtualClusters().Insert(vc));
      tenancy::Reservation held;
      held.tenant = tenant.name;
      held.vcluster = "train";
      held.tier = vc.capacity.tier;
      for (int g = 0; g < kGpus; ++g) {
        if (mig) {
          held.mig.push_back({.node = NodeName(i), .gpu = g, .profile = "3g.40gb", .start = 0, .slices = 4});
          held.mig.push_back({.node = NodeName(i), .gpu = g, .profile = "2g.20gb", .start = 4, .slices = 2});
          held.mig.push_back({.node = NodeName(i), .gpu = g, .profile = "1g.10gb", .start = 6, .slices = 1});
        } else {
          held.gpus.push_back({.node = NodeName(i), .gpu = g});
        }
      }
      SEPTA_RETURN_IF_ERROR(tx.Reservations().Insert(held));
    }
    return Status::Ok();
  });
}

// A month of day rows for node i's tenant, as 30 days of accounting leave
// them (8 GPUs held all day, half used), recorded through the store: the
// node's cursor ends at `end`.
Status SeedMonth(core::Store& store, int i, TimePoint start, TimePoint end) {
  const bool mig = i % 4 == 0;
  core::UsageScrapeBatch batch{.node = NodeName(i), .cursor = end};
  for (TimePoint day = start; day < end; day += std::chrono::days(1)) {
    batch.minutes.push_back({.entity = {.tenant = "tenant-" + std::to_string(i),
                                        .vcluster = "train",
                                        .node = NodeName(i),
                                        .gpu_uuid = Uuid(i, 0)},
                             .minute = day,
                             .tier = mig ? gpu::Tier::kIsolated : gpu::Tier::kDedicated,
                             .model = mig ? "H100-80GB" : "A100-80GB",
                             .weight = kGpus,
                             .allocated_gpu_seconds = kGpus * 86400.0,
                             .measured_gpu_seconds = kGpus * 86400.0,
                             .used_gpu_seconds = kGpus * 43200.0,
                             .waste_gpu_seconds = kGpus * 43200.0,
                             .cost = kGpus * 24 * 2.5,
                             .activity_max = 0.5,
                             .reserved_memory_mib = 81920,
                             .used_memory_mib = 20480,
                             .samples = 2880});
  }
  return store.Transact(core::TxMode::kReadWrite, [&](core::Tx& tx) { return tx.Usage().Record(batch); });
}

void Report(const char* what, const std::vector<double>& ms) {
  std::printf("%-52s n=%zu  p50 %.1f ms  p99 %.1f ms  max %.1f ms\n", what, ms.size(), Percentile(ms, 0.5),
              Percentile(ms, 0.99), Percentile(ms, 1.0));
}

}  // namespace

int main(int argc, char** argv) {
  int nodes = 1000, rounds = 3, report_runs = 20;
  bool durable = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--nodes" && i + 1 < argc) {
      nodes = std::atoi(argv[++i]);
    } else if (arg == "--rounds" && i + 1 < argc) {
      rounds = std::atoi(argv[++i]);
    } else if (arg == "--report-runs" && i + 1 < argc) {
      report_runs = std::atoi(argv[++i]);
    } else if (arg == "--durable") {
      durable = true;
    } else {
      std::fprintf(stderr, "usage: septa-usage-bench [--nodes N] [--rounds R] [--report-runs K] [--durable]\n");
      return 2;
    }
  }
  if (nodes < 1 || rounds < 1 || report_runs < 1) return Die(InvalidArgument("counts must be positive"), "flags");

  auto database = store::ScratchDatabase::Open("", "septa-usage-bench", durable);
  if (!database.ok()) return Die(database.status(), "database");
  store::PgStore store(store::PgStoreOptions{
      .database_url = (*database)->url(), .pool_size = 4, .migrations = (*database)->migrations()});
  if (Status ready = store.Ready(); !ready.ok()) return Die(ready, "store");
  // The month ends at today's midnight; the ingest rounds account the 30 s after it.
  SystemClock clock;
  const TimePoint month_end = std::chrono::floor<std::chrono::days>(clock.Now());
  const TimePoint month_start = month_end - std::chrono::days(30);
  if (Status seeded = Seed(store, nodes, clock.Now()); !seeded.ok()) return Die(seeded, "seeding");
  for (int i = 0; i < nodes; ++i) {
    if (Status month = SeedMonth(store, i, month_start, month_end); !month.ok()) return Die(month, "seeding a month");
  }
  std::printf("estate: %d nodes x %d GPUs (%d in MIG mode, 3 instances each), one tenant per node, a month of days\n",
              nodes, kGpus, (nodes + 3) / 4);

  std::vector<std::string> texts;
  std::size_t bytes = 0;
  for (int i = 0; i < nodes; ++i) {
    texts.push_back(Exposition(i));
    bytes += texts.back().size();
  }
  std::printf("expositions: %.1f KiB per node on average\n", static_cast<double>(bytes) / nodes / 1024);

  core::UsageAccounting accounting(store, gpu::Catalog::Default(), {});
  TimePoint at = month_end;
  for (int round = 0; round < rounds; ++round) {
    at += std::chrono::seconds(30);
    const double cpu_before = CpuSeconds();
    const auto wall_before = std::chrono::steady_clock::now();
    double parse_cpu = 0;
    for (int i = 0; i < nodes; ++i) {
      const double parse_before = CpuSeconds();
      auto exposition = ParsePrometheusText(texts[i], {});
      if (!exposition.ok()) return Die(exposition.status(), "parsing");
      auto typed = tenancy::usage::NormaliseDcgm(*exposition, {.node = NodeName(i)});
      parse_cpu += CpuSeconds() - parse_before;
      auto result = accounting.Account(
          NodeName(i), at,
          tenancy::usage::NodeScrape{.node = NodeName(i), .at = at, .samples = std::move(typed.samples)});
      if (!result.ok()) return Die(result.status(), "accounting");
      if (!result->recorded) return Die(Internal("node " + NodeName(i) + " not recorded"), "accounting");
    }
    const double cpu = CpuSeconds() - cpu_before;
    const double wall = Millis(std::chrono::steady_clock::now() - wall_before).count() / 1000;
    std::printf(
        "ingest round %d: %d nodes in %.2f s wall; septad CPU %.2f s (%.1f %% of one core over 30 s; "
        "parse+normalise %.2f s); peak RSS %ld MiB\n",
        round + 1, nodes, wall, cpu, cpu / 30 * 100, parse_cpu, PeakRssMib());
  }

  core::UsageService service(store, clock, {});
  core::RequestContext admin;
  admin.principal.admin = true;
  admin.principal.role = core::Role::kViewer;
  admin.request_id = "bench";
  core::RequestContext tenant;
  tenant.principal.tenant = "tenant-1";
  tenant.principal.role = core::Role::kViewer;
  tenant.request_id = "bench";
  const core::UsageWindowRequest month{
      .start = FormatRfc3339(month_start), .end = FormatRfc3339(month_end), .step = "1d", .group_by = {"vcluster"}};
  std::vector<double> one, all;
  std::size_t items = 0;
  for (int run = 0; run < report_runs; ++run) {
    core::UsageWindowRequest mine = month;
    mine.tenant = "tenant-1";
    auto begun = std::chrono::steady_clock::now();
    auto report = service.TenantUsage(tenant, mine);
    one.push_back(Millis(std::chrono::steady_clock::now() - begun).count());
    if (!report.ok()) return Die(report.status(), "a tenant's month");
    core::UsageWindowRequest every = month;
    every.step = "";
    every.group_by = {"tenant"};
    begun = std::chrono::steady_clock::now();
    auto platform = service.PlatformUsage(admin, every);
    all.push_back(Millis(std::chrono::steady_clock::now() - begun).count());
    if (!platform.ok()) return Die(platform.status(), "every tenant's month");
    items = platform->usage.items.size();
  }
  Report("a tenant's month by day and virtual cluster", one);
  char label[96];
  std::snprintf(label, sizeof label, "every tenant's month by tenant (%zu tenants)", items);
  Report(label, all);
  return 0;
}
