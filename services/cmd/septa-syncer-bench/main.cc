// septa-syncer-bench: issue 11's syncer targets, with the real pieces wired
// in one process as septad wires them: an embedded PostgreSQL (durable unless
// told otherwise) or --database-url holding the tenants and virtual-cluster
// rows, kubesim as the host (HTTPS, its scheduler standing in for KAI, its
// nodes starting pods), the simulated control planes written through to
// PostgreSQL, and the syncer (services/syncer) with septad's settings.
//
// The virtual clusters are READY rows written by the bench with their host
// namespaces created on the host (the provisioner, measured by
// septa-provision-bench, is not run: no quota, limit range or network policy
// in the host namespaces, no shard leases). Pods are CPU pods without
// requests (kubesim nodes of 110 pods each).
//
// 1. fill: every virtual cluster but the first --paced-clusters gets
//    --pods-per-cluster pods from --clients threads as fast as they go;
//    waited for until every host pod is Running.
// 2. paced: the first --paced-clusters get theirs, one at a time at --rate,
//    on a host that already holds the fill: each timed from the virtual
//    create's reply (and from its call) to the host pod's ADDED event on a
//    host watch; and from the host pod's Running to the virtual pod's
//    Running on a watch of each paced virtual cluster.
// 3. status: a host status change (status.message, merge patch on the
//    status subresource) of every paced pod at --rate, timed until the
//    virtual pod's watch shows it.
// 4. idle: the process's CPU (getrusage) over --idle-seconds with every
//    virtual cluster watched and converged (a periodic resync, every
//    --resync-seconds, may fall in it: the line counts the reconciles);
//    then one sweep, the resync started at once and timed until the
//    queue is idle: its reconciles and CPU, and that CPU spread over
//    --resync-seconds.
// 5. restart: the syncer is stopped (heap and RSS it held, per virtual
//    cluster), the same idle window without it (the baseline), then a new
//    syncer started: timed until every virtual cluster is watched and its
//    queue is idle, counting the host's write requests and the virtual
//    clusters whose stored objects changed (both must be 0, else exit 1).
//
// docs/BENCHMARKS.md "Syncer" has the figures.
#include <prometheus/registry.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/clock.h"
#include "common/percentile.h"
#include "services/base/open_files.h"
#include "services/base/process_stats.h"
#include "services/kube/client.h"
#include "services/kube/config.h"
#include "services/kube/resources.h"
#include "services/kube/watch.h"
#include "services/kubesim/kubesim.h"
#include "services/store/pg_store.h"
#include "services/store/pg_virtual_object_store.h"
#include "services/store/scratch_database.h"
#include "services/syncer/syncer_controller.h"
#include "services/vcp/simulated_control_planes.h"
#include "tenancy/host/names.h"
#include "tenancy/sync/bookkeeping.h"

namespace {

using namespace septa;
using namespace std::chrono_literals;
using nlohmann::json;
using Steady = std::chrono::steady_clock;

constexpr int kTenants = 10;
constexpr int kPodsPerNode = 100;  // of kubesim's 110, so that no node is ever full

double Ms(Steady::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

int Die(const Status& st, const char* what) {
  std::fprintf(stderr, "septa-syncer-bench: %s: %s\n", what, st.ToString().c_str());
  return 1;
}

std::string TenantOf(int cluster) { return "t-" + std::to_string(cluster % kTenants); }
std::string VclusterOf(int cluster) { return "vc-" + std::to_string(cluster); }
std::string PodName(int j) { return "pod-" + std::to_string(j); }
std::string StatusMarker(std::size_t pod) { return "septa-syncer-bench " + std::to_string(pod); }

json Pod(const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "default"}, {"labels", {{"app", name}}}}},
          {"spec", {{"containers", json::array({{{"name", "main"}, {"image", "busybox"}}})}}}};
}

std::string Phase(const json& pod) { return pod.value("status", json::object()).value("phase", ""); }
std::string Message(const json& pod) { return pod.value("status", json::object()).value("message", ""); }

Result<std::unique_ptr<kube::Client>> ClientOf(const Result<std::string>& kubeconfig) {
  SEPTA_RETURN_IF_ERROR(kubeconfig);
  auto config = kube::ParseKubeconfig(*kubeconfig);
  SEPTA_RETURN_IF_ERROR(config);
  return kube::Client::Create(*std::move(config));
}

// When each pod (index cluster * pods_per_cluster + j) reached each mark,
// as seen by the bench's own calls and watches.
enum Mark : std::size_t {
  kCreateCall,
  kCreateReply,
  kHostAdded,
  kHostRunning,
  kVirtualRunning,
  kStatusPatch,
  kHostStatus,
  kVirtualStatus,
  kMarks
};

class Timeline {
 public:
  explicit Timeline(std::size_t pods) : at_(pods) {}

  void Record(std::size_t pod, Mark mark) {
    const auto now = Steady::now();
    std::lock_guard lock(mu_);
    auto& slot = at_[pod][mark];
    if (slot) return;
    slot = now;
    ++counts_[mark];
    changed_.notify_all();
  }
  bool Await(Mark mark, std::size_t count, std::chrono::seconds timeout) {
    std::unique_lock lock(mu_);
    return changed_.wait_for(lock, timeout, [&] { return counts_[mark] >= count; });
  }
  // Milliseconds from `from` to `to` of pods [first, last); `early` counts
  // those where `to` came first (clamped to 0).
  std::vector<double> Between(Mark from, Mark to, std::size_t first, std::size_t last, std::size_t& early) const {
    std::lock_guard lock(mu_);
    std::vector<double> ms;
    early = 0;
    for (std::size_t i = first; i < last; ++i) {
      if (!at_[i][from] || !at_[i][to]) continue;
      const double d = Ms(*at_[i][to] - *at_[i][from]);
      early += d < 0;
      ms.push_back(std::max(0.0, d));
    }
    return ms;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable changed_;
  std::vector<std::array<std::optional<Steady::time_point>, kMarks>> at_;
  std::array<std::size_t, kMarks> counts_{};
};

void PrintLatencies(const char* what, const std::vector<double>& ms, std::size_t early) {
  std::printf("  %s (%zu pods): p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms", what, ms.size(),
              Percentile(ms, 0.5), Percentile(ms, 0.9), Percentile(ms, 0.99), Percentile(ms, 1.0));
  if (early > 0) std::printf(" (%zu seen before the reply)", early);
  std::printf("\n");
}

// The syncer's reconciles (septa_reconcile_total), by result ("" for all).
double Reconciles(prometheus::Registry& registry, const std::string& result = "") {
  double total = 0;
  for (const auto& family : registry.Collect()) {
    if (family.name != "septa_reconcile_total") continue;
    for (const auto& metric : family.metric) {
      const bool counted = result.empty() || std::ranges::any_of(metric.label, [&](const auto& l) {
                             return l.name == "result" && l.value == result;
                           });
      if (counted) total += metric.counter.value;
    }
  }
  return total;
}

// The syncer as septad makes it (MakeSyncer), with its own metrics.
struct Syncer {
  Syncer(syncer::SyncerOptions options, core::Store& store, kube::Client& host, core::ControlPlanes& planes,
         const Clock& clock)
      : controller(std::move(options), store, host, planes, clock, registry) {}
  prometheus::Registry registry;
  syncer::SyncerController controller;
};

// What the process spent, and the syncer did, while a phase ran.
struct Window {
  double seconds = 0;
  double cpu_seconds = 0;
  double reconciles = 0;
  double cpu_share() const { return cpu_seconds / seconds; }
};
// Runs `phase` (false: it did not end in time) and measures it.
std::optional<Window> Measure(prometheus::Registry* syncer_metrics, const std::function<bool()>& phase) {
  const double reconciles_before = syncer_metrics ? Reconciles(*syncer_metrics) : 0;
  const double cpu_before = base::CpuSeconds();
  const auto start = Steady::now();
  if (!phase()) return std::nullopt;
  return Window{.seconds = Ms(Steady::now() - start) / 1000,
                .cpu_seconds = base::CpuSeconds() - cpu_before,
                .reconciles = syncer_metrics ? Reconciles(*syncer_metrics) - reconciles_before : 0};
}
// `seconds` of doing nothing, measured.
Window MeasureIdle(int seconds, prometheus::Registry* syncer_metrics) {
  return *Measure(syncer_metrics, [seconds] {
    std::this_thread::sleep_for(std::chrono::seconds(seconds));
    return true;
  });
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"septa-syncer-bench: pod sync latency down and up, 1,000 x 10 steady state, resync after a restart"};
  int clusters = 1000, pods_per_cluster = 10, paced_clusters = 100, clients = 4, workers = 4, idle_seconds = 60,
      resync_seconds = 600;
  double rate = 100;
  bool durable = true;
  std::string database_url;
  app.add_option("--clusters", clusters, "virtual clusters, all watched by one syncer")->check(CLI::PositiveNumber);
  app.add_option("--pods-per-cluster", pods_per_cluster, "pods in each virtual cluster")->check(CLI::PositiveNumber);
  app.add_option("--paced-clusters", paced_clusters,
                 "the first virtual clusters, whose pods are created one at a time at --rate and timed")
      ->check(CLI::PositiveNumber);
  app.add_option("--rate", rate, "paced pod creates and host status changes per second")
      ->check(CLI::Range(0.1, 10000.0));
  app.add_option("--clients", clients, "threads creating the other virtual clusters' pods")->check(CLI::PositiveNumber);
  app.add_option("--workers", workers, "the syncer's workers (septad: 4)")->check(CLI::PositiveNumber);
  app.add_option("--idle-seconds", idle_seconds, "the idle windows, with and without the syncer")
      ->check(CLI::PositiveNumber);
  app.add_option("--resync-seconds", resync_seconds, "the syncer's periodic resync (septad: 600)")
      ->check(CLI::PositiveNumber);
  app.add_option("--durable", durable, "embedded PostgreSQL with fsync on every commit (as septad)");
  app.add_option("--database-url", database_url, "an empty PostgreSQL database instead of the embedded one");
  CLI11_PARSE(app, argc, argv);
  if (paced_clusters > clusters) {
    std::fprintf(stderr, "septa-syncer-bench: --paced-clusters %d: at most --clusters (%d)\n", paced_clusters,
                 clusters);
    return 105;
  }
  spdlog::set_level(spdlog::level::warn);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each phase's line as it ends, also into a file
  const std::size_t total = static_cast<std::size_t>(clusters) * pods_per_cluster;
  const std::size_t paced = static_cast<std::size_t>(paced_clusters) * pods_per_cluster;
  const std::size_t heap_at_start = base::HeapInUse(), rss_at_start = base::ResidentBytes();

  // PostgreSQL.
  auto database = store::ScratchDatabase::Open(database_url, "septa-syncer-bench", durable);
  if (!database.ok()) return Die(database.status(), "database");
  database_url = (*database)->url();
  SystemClock clock;
  int exit_code = 0;
  {
    store::PgStore store(store::PgStoreOptions{
        .database_url = database_url, .pool_size = 16, .max_attempts = 50, .migrations = (*database)->migrations()});
    if (Status ready = store.Ready(); !ready.ok()) return Die(ready, "store");

    // The simulated host, counting the write requests it is sent; as septad's embedded one.
    const int nodes = static_cast<int>((total + kPodsPerNode - 1) / kPodsPerNode) + 1;
    auto inventory = kubesim::ParseInventory(
        "nodes:\n  - name: cpu-{0.." + std::to_string(nodes - 1) + "}\n    cpu: \"64\"\n    memory: 256Gi\n", "bench");
    if (!inventory.ok()) return Die(inventory.status(), "inventory");
    std::atomic<std::uint64_t> host_writes{0};
    kubesim::KubeSimOptions sim_options;
    sim_options.cluster_name = "septa-host";
    sim_options.inventory = *std::move(inventory);
    sim_options.nodes.scheduler_names = {"default-scheduler", "kai-scheduler"};
    sim_options.fault = [&](const http::Request& request) -> std::optional<http::HttpStatus> {
      if (request.method() != boost::beast::http::verb::get) ++host_writes;
      return std::nullopt;
    };
    kubesim::KubeSim sim(std::move(sim_options));
    if (Status st = sim.Start(); !st.ok()) return Die(st, "starting kubesim");
    auto host = ClientOf(sim.AdminKubeconfig());
    if (!host.ok()) return Die(host.status(), "host client");

    // Tenants and READY virtual clusters with their host namespaces, as the provisioner leaves them.
    const Status rows = store.Transact(core::TxMode::kReadWrite, [&](core::Tx& tx) -> Status {
      for (int t = 0; t < std::min(kTenants, clusters); ++t) {
        core::Tenant tenant;
        tenant.name = TenantOf(t);
        tenant.trust_tier = "shared";
        tenant.version = 1;
        SEPTA_RETURN_IF_ERROR(tx.Tenants().Insert(tenant));
      }
      for (int c = 0; c < clusters; ++c) {
        tenancy::VirtualCluster vc;
        vc.tenant = TenantOf(c);
        vc.name = VclusterOf(c);
        vc.capacity.tier = gpu::Tier::kShared;
        vc.capacity.milli_gpu = 250;
        vc.quota = {.cpu_milli = 4000, .memory_mib = 8192, .pods = 20};
        vc.state = tenancy::VirtualClusterState::kReady;
        vc.host_namespace = tenancy::host::HostNamespaceName(vc.tenant, vc.name);
        SEPTA_RETURN_IF_ERROR(tx.VirtualClusters().Insert(vc));
      }
      return Status::Ok();
    });
    if (!rows.ok()) return Die(rows, "virtual-cluster rows");
    for (int c = 0; c < clusters; ++c) {
      const json ns = {{"apiVersion", "v1"},
                       {"kind", "Namespace"},
                       {"metadata", {{"name", tenancy::host::HostNamespaceName(TenantOf(c), VclusterOf(c))}}}};
      if (auto created = (*host)->Create(kube::kNamespaces, "", ns); !created.ok()) {
        return Die(created.status(), "host namespace");
      }
    }

    // The control planes, never evicted (the idle windows compare with and without the syncer's watches).
    store::PgVirtualObjectStore objects({.database_url = database_url, .pool_size = 4});
    // As septad sizes its listener: the syncer's clients hold the other end of most connections here.
    vcp::SimulatedControlPlanes planes(
        objects,
        vcp::SimulatedControlPlanesOptions{.max_connections = base::RaiseOpenFilesLimit() / 2, .idle_after = 0ms});
    if (Status st = planes.Start(); !st.ok()) return Die(st, "control planes");
    const std::size_t heap_no_planes = base::HeapInUse();
    const auto ensure_start = Steady::now();
    for (int c = 0; c < clusters; ++c) {
      if (auto ensured = planes.Ensure(TenantOf(c), VclusterOf(c)); !ensured.ok()) {
        return Die(ensured.status(), "control plane");
      }
    }
    const double ensure_s = Ms(Steady::now() - ensure_start) / 1000;
    const std::size_t heap_planes = base::HeapInUse(), rss_planes = base::ResidentBytes();

    // Where each pod's host pod is, and the bench's watch on the host.
    Timeline timeline(total);
    std::unordered_map<std::string, std::size_t> pod_of_host;  // "<ns>/<name>" -> pod
    for (int c = 0; c < clusters; ++c) {
      const std::string ns = tenancy::host::HostNamespaceName(TenantOf(c), VclusterOf(c));
      for (int j = 0; j < pods_per_cluster; ++j) {
        pod_of_host.emplace(ns + "/" + tenancy::sync::HostObjectName(PodName(j), "default", VclusterOf(c)),
                            static_cast<std::size_t>(c) * pods_per_cluster + j);
      }
    }
    auto on_host_pod = [&](const json& pod) {
      const json& md = pod["metadata"];
      auto it = pod_of_host.find(md.value("namespace", "") + "/" + md.value("name", ""));
      if (it == pod_of_host.end()) return;
      timeline.Record(it->second, kHostAdded);
      if (Phase(pod) == "Running") timeline.Record(it->second, kHostRunning);
      if (Message(pod) == StatusMarker(it->second)) timeline.Record(it->second, kHostStatus);
    };
    kube::ListOptions synced;
    synced.label_selector = std::string(tenancy::sync::kSyncedLabel) + "=true";
    auto host_watch = std::make_unique<kube::Informer>(
        **host, kube::kPods, "", synced,
        kube::InformerHandlers{.on_add = on_host_pod,
                               .on_update = [&](const json&, const json& pod) { on_host_pod(pod); },
                               .on_delete = nullptr});
    host_watch->Start();
    if (!host_watch->WaitForSync(30s)) return Die(DeadlineExceeded("30 s"), "host watch");

    // The syncer, as septad's MakeSyncer (no shard leases: it holds every virtual cluster).
    syncer::SyncerOptions options;
    options.settings.scheduler = tenancy::host::Scheduler::kKai;
    options.settings.virtual_api_port = planes.port();
    options.render.scheduler = tenancy::host::Scheduler::kKai;
    options.workers = workers;
    options.resync_interval = std::chrono::seconds(resync_seconds);
    auto watched_all = [&](const Syncer& s, std::chrono::seconds timeout) {
      const auto deadline = Steady::now() + timeout;
      while (s.controller.watches().Watched().size() < static_cast<std::size_t>(clusters)) {
        if (Steady::now() > deadline) return false;
        std::this_thread::sleep_for(2ms);
      }
      return s.controller.AwaitIdle(timeout);
    };
    const auto syncer_start = Steady::now();
    auto syncer = std::make_unique<Syncer>(options, store, **host, planes, clock);
    if (Status st = syncer->controller.Start(60s); !st.ok()) return Die(st, "syncer");
    if (!watched_all(*syncer, 600s)) return Die(DeadlineExceeded("600 s"), "syncer: every virtual cluster watched");
    const double watch_s = Ms(Steady::now() - syncer_start) / 1000;
    const std::size_t heap_watched = base::HeapInUse(), rss_watched = base::ResidentBytes();

    std::printf("septa-syncer-bench: %d virtual clusters x %d pods (%zu pods; %d clusters' %zu pods paced at %.0f/s)\n",
                clusters, pods_per_cluster, total, paced_clusters, paced, rate);
    std::printf(
        "host: kubesim, %d CPU nodes; syncer: %d workers, KAI scheduler names; PostgreSQL: %s; load average %s\n",
        nodes, workers,
        (*database)->embedded() ? (durable ? "embedded, durable (fsync on commit)" : "embedded, not durable")
                                : "--database-url",
        base::LoadAverage().c_str());
    std::printf(
        "setup: %d control planes ensured in %.2f s (heap %.1f KiB each, no pods yet); the syncer watched all of "
        "them %.2f s after its start (heap +%.1f KiB, RSS +%.1f KiB per virtual cluster, no pods yet)\n",
        clusters, ensure_s, (static_cast<double>(heap_planes) - static_cast<double>(heap_no_planes)) / 1024 / clusters,
        watch_s, (static_cast<double>(heap_watched) - static_cast<double>(heap_planes)) / 1024 / clusters,
        (static_cast<double>(rss_watched) - static_cast<double>(rss_planes)) / 1024 / clusters);

    // 1. Fill: the other virtual clusters' pods, as fast as the clients go.
    {
      const auto start = Steady::now();
      std::atomic<int> next{paced_clusters};
      std::atomic<int> failed{0};
      std::vector<std::thread> threads;
      for (int t = 0; t < clients; ++t) {
        threads.emplace_back([&] {
          for (int c = next++; c < clusters; c = next++) {
            auto client = ClientOf(planes.AdminKubeconfig(TenantOf(c), VclusterOf(c)));
            if (!client.ok()) {
              if (failed++ == 0) std::fprintf(stderr, "client: %s\n", client.status().ToString().c_str());
              continue;
            }
            for (int j = 0; j < pods_per_cluster; ++j) {
              auto created = (*client)->Create(kube::kPods, "default", Pod(PodName(j)));
              if (!created.ok() && failed++ == 0) {
                std::fprintf(stderr, "create: %s\n", created.status().ToString().c_str());
              }
            }
          }
        });
      }
      for (auto& t : threads) t.join();
      const double create_s = Ms(Steady::now() - start) / 1000;
      if (failed.load() > 0) return Die(Internal(std::to_string(failed.load()) + " creates failed"), "fill");
      const std::size_t filled = total - paced;
      if (!timeline.Await(kHostRunning, filled, 600s)) return Die(DeadlineExceeded("600 s"), "fill: host Running");
      const double running_s = Ms(Steady::now() - start) / 1000;
      if (!syncer->controller.AwaitIdle(600s)) return Die(DeadlineExceeded("600 s"), "fill: syncer idle");
      std::printf(
          "fill: %zu pods in %d virtual clusters created in %.2f s (%.0f/s), all Running on the host after %.2f s, "
          "the syncer idle after %.2f s (load average %s)\n",
          filled, clusters - paced_clusters, create_s, static_cast<double>(filled) / create_s, running_s,
          Ms(Steady::now() - start) / 1000, base::LoadAverage().c_str());
    }

    // 2. Paced: the first virtual clusters' pods one at a time, on a host holding the fill.
    std::vector<std::unique_ptr<kube::Client>> paced_clients;
    std::vector<std::unique_ptr<kube::Informer>> virtual_watches;  // after their clients: stopped first
    for (int c = 0; c < paced_clusters; ++c) {
      auto client = ClientOf(planes.AdminKubeconfig(TenantOf(c), VclusterOf(c)));
      if (!client.ok()) return Die(client.status(), "paced client");
      paced_clients.push_back(*std::move(client));
      auto on_virtual_pod = [&timeline, c, pods_per_cluster](const json& pod) {
        const std::string name = pod["metadata"].value("name", "");
        if (!name.starts_with("pod-")) return;
        const std::size_t index = static_cast<std::size_t>(c) * pods_per_cluster + std::stoul(name.substr(4));
        if (Phase(pod) == "Running") timeline.Record(index, kVirtualRunning);
        if (Message(pod) == StatusMarker(index)) timeline.Record(index, kVirtualStatus);
      };
      virtual_watches.push_back(std::make_unique<kube::Informer>(
          *paced_clients.back(), kube::kPods, "default", kube::ListOptions{},
          kube::InformerHandlers{.on_add = on_virtual_pod,
                                 .on_update = [on_virtual_pod](const json&, const json& pod) { on_virtual_pod(pod); },
                                 .on_delete = nullptr}));
      virtual_watches.back()->Start();
      if (!virtual_watches.back()->WaitForSync(30s)) return Die(DeadlineExceeded("30 s"), "virtual watch");
    }
    const auto interval = std::chrono::duration_cast<Steady::duration>(std::chrono::duration<double>(1.0 / rate));
    auto paced_pod = [&](std::size_t k) {  // round robin over the paced virtual clusters
      const int c = static_cast<int>(k % paced_clusters), j = static_cast<int>(k / paced_clusters);
      return std::pair{c, j};
    };
    {
      const auto start = Steady::now();
      for (std::size_t k = 0; k < paced; ++k) {
        std::this_thread::sleep_until(start + k * interval);
        const auto [c, j] = paced_pod(k);
        const std::size_t index = static_cast<std::size_t>(c) * pods_per_cluster + j;
        timeline.Record(index, kCreateCall);
        auto created = paced_clients[c]->Create(kube::kPods, "default", Pod(PodName(j)));
        timeline.Record(index, kCreateReply);
        if (!created.ok()) return Die(created.status(), "paced create");
      }
      const double create_s = Ms(Steady::now() - start) / 1000;
      if (!timeline.Await(kVirtualRunning, paced, 300s)) return Die(DeadlineExceeded("300 s"), "paced: Running");
      // The bench's host watch may deliver a pod's Running after the syncer's
      // did and the virtual pod showed it: every pair is timed once both are in.
      if (!timeline.Await(kHostRunning, total, 300s)) return Die(DeadlineExceeded("300 s"), "paced: host Running");
      std::printf("paced: %zu pods created in %.2f s (%.0f/s) on a host holding %zu synced pods (load average %s):\n",
                  paced, create_s, static_cast<double>(paced) / create_s, total - paced, base::LoadAverage().c_str());
      std::size_t early = 0;
      auto down = timeline.Between(kCreateReply, kHostAdded, 0, paced, early);
      PrintLatencies("virtual create's reply -> host pod ADDED", down, early);
      down = timeline.Between(kCreateCall, kHostAdded, 0, paced, early);
      PrintLatencies("virtual create's call -> host pod ADDED", down, early);
      const auto up = timeline.Between(kHostRunning, kVirtualRunning, 0, paced, early);
      PrintLatencies("host pod Running -> virtual pod Running", up, early);
    }
    if (!syncer->controller.AwaitIdle(300s)) return Die(DeadlineExceeded("300 s"), "paced: syncer idle");

    // 3. Status: a host status change of every paced pod, timed to the virtual pod.
    {
      const auto start = Steady::now();
      kube::PatchOptions status;
      status.subresource = "status";
      for (std::size_t k = 0; k < paced; ++k) {
        std::this_thread::sleep_until(start + k * interval);
        const auto [c, j] = paced_pod(k);
        const std::size_t index = static_cast<std::size_t>(c) * pods_per_cluster + j;
        const json patch = {{"status", {{"message", StatusMarker(index)}}}};
        timeline.Record(index, kStatusPatch);
        auto patched = (*host)->Patch(kube::kPods, tenancy::host::HostNamespaceName(TenantOf(c), VclusterOf(c)),
                                      tenancy::sync::HostObjectName(PodName(j), "default", VclusterOf(c)),
                                      kube::PatchType::kMerge, patch.dump(), status);
        if (!patched.ok()) return Die(patched.status(), "host status patch");
      }
      if (!timeline.Await(kVirtualStatus, paced, 300s)) return Die(DeadlineExceeded("300 s"), "status: virtual");
      if (!timeline.Await(kHostStatus, paced, 300s)) return Die(DeadlineExceeded("300 s"), "status: host");
      std::printf("status: %zu host status changes at %.0f/s (load average %s):\n", paced, rate,
                  base::LoadAverage().c_str());
      std::size_t early = 0;
      auto up = timeline.Between(kStatusPatch, kVirtualStatus, 0, paced, early);
      PrintLatencies("host status patch sent -> virtual pod shows it", up, early);
      up = timeline.Between(kHostStatus, kVirtualStatus, 0, paced, early);
      PrintLatencies("host pod MODIFIED seen -> virtual pod shows it", up, early);
    }
    // The bench's own watches and clients go: what stays is what septad would hold.
    virtual_watches.clear();
    paced_clients.clear();
    host_watch.reset();
    if (!syncer->controller.AwaitIdle(300s)) return Die(DeadlineExceeded("300 s"), "status: syncer idle");

    // 4. Idle, every virtual cluster watched and converged.
    const Window with = MeasureIdle(idle_seconds, &syncer->registry);
    std::printf(
        "idle: %d virtual clusters x %d pods watched: the process used %.2f %% of a core over %d s "
        "(%.0f reconciles in the window; load average %s)\n",
        clusters, pods_per_cluster, 100 * with.cpu_share(), idle_seconds, with.reconciles, base::LoadAverage().c_str());
    const std::optional<Window> sweep = Measure(&syncer->registry, [&] {
      syncer->controller.Resync();  // what the periodic resync does
      return syncer->controller.AwaitIdle(600s);
    });
    if (!sweep) return Die(DeadlineExceeded("600 s"), "sweep");
    std::printf(
        "sweep: one resync of %d virtual clusters: %.0f reconciles in %.2f s, %.2f CPU-seconds (the process), "
        "%.2f %% of a core spread over %d s (load average %s)\n",
        clusters, sweep->reconciles, sweep->seconds, sweep->cpu_seconds, 100 * sweep->cpu_seconds / resync_seconds,
        resync_seconds, base::LoadAverage().c_str());

    // 5. Restart: what the syncer held, the same window without it, and a new syncer's resync.
    std::vector<std::optional<std::uint64_t>> versions;
    for (int c = 0; c < clusters; ++c) {
      auto version = objects.ResourceVersion({TenantOf(c), VclusterOf(c)});
      if (!version.ok()) return Die(version.status(), "resource version");
      versions.push_back(*version);
    }
    const std::size_t heap_with = base::HeapInUse(), rss_with = base::ResidentBytes();
    const std::uint64_t host_before = host_writes.load();
    syncer.reset();
    const std::size_t heap_without = base::HeapInUse(), rss_without = base::ResidentBytes();
    std::printf(
        "memory: the syncer held %.1f KiB of heap, %.1f KiB of RSS per watched virtual cluster (%d pods each; "
        "process with it: heap %.1f MiB, RSS %.1f MiB, at start %.1f / %.1f MiB)\n",
        (static_cast<double>(heap_with) - static_cast<double>(heap_without)) / 1024 / clusters,
        (static_cast<double>(rss_with) - static_cast<double>(rss_without)) / 1024 / clusters, pods_per_cluster,
        static_cast<double>(heap_with) / (1 << 20), static_cast<double>(rss_with) / (1 << 20),
        static_cast<double>(heap_at_start) / (1 << 20), static_cast<double>(rss_at_start) / (1 << 20));
    const Window without = MeasureIdle(idle_seconds, nullptr);
    std::printf(
        "idle without the syncer: %.2f %% of a core over %d s, so the syncer's share is %.2f %% of a core "
        "(load average %s)\n",
        100 * without.cpu_share(), idle_seconds, 100 * (with.cpu_share() - without.cpu_share()),
        base::LoadAverage().c_str());

    const auto restart = Steady::now();
    syncer = std::make_unique<Syncer>(options, store, **host, planes, clock);
    if (Status st = syncer->controller.Start(60s); !st.ok()) return Die(st, "restarted syncer");
    const double started_ms = Ms(Steady::now() - restart);
    if (!watched_all(*syncer, 600s)) return Die(DeadlineExceeded("600 s"), "restart: resync");
    const double resync_ms = Ms(Steady::now() - restart);
    std::size_t changed = 0;
    for (int c = 0; c < clusters; ++c) {
      auto version = objects.ResourceVersion({TenantOf(c), VclusterOf(c)});
      if (!version.ok()) return Die(version.status(), "resource version");
      changed += *version != versions[c];
    }
    const std::uint64_t host_written = host_writes.load() - host_before;
    std::printf(
        "restart: %zu pods of %d virtual clusters resynced in %.0f ms (host pods listed after %.0f ms; %.0f "
        "reconciles, %.0f errors); host writes %llu, virtual clusters with objects written %zu (load average %s)\n",
        total, clusters, resync_ms, started_ms, Reconciles(syncer->registry), Reconciles(syncer->registry, "error"),
        static_cast<unsigned long long>(host_written), changed, base::LoadAverage().c_str());
    if (host_written != 0 || changed != 0) exit_code = 1;
    syncer.reset();
  }
  return exit_code;
}
