// septa-bench mig: MIG placement and re-partitioning under churn
// (shared/docs/MIG-BENCH.md), every requested policy side by side on the same
// seeds. The simulator and the policies live in gpu/mig_churn*; this shell
// reads the traces, times decisions and prints the tables.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/percentile.h"
#include "common/text.h"
#include "gpu/catalog.h"
#include "gpu/mig_churn.h"
#include "services/base/file.h"
#include "services/cmd/septa-bench/arguments.h"
#include "services/cmd/septa-bench/commands.h"

namespace septa::bench {
namespace {

namespace fs = std::filesystem;

struct MigOptions {
  std::vector<std::string> pods;
  std::string mix_from = "../shared/data/openb/openb_pod_list_default.csv";
  std::string cluster = "mix-1280";
  std::string policy = "all";
  std::string seeds = "42-51";
  std::string loads = "1.1,1.3";
  std::string mode = "queue,loss";
  int warmup = 5000;
  int measured = 20000;
  int window = 0;       // > 0: MIG-BENCH's B3 windows (that many arrivals into an empty cluster)
  bool fill = false;    // W0 instead of W1
  bool replay = false;  // W2 instead of W1
  double t_gi = 5, t_dp = 30, t_node = 120;
  double pause_budget = 1.8;
  double drain_budget = 0.01;  // GRMU's, a fraction of the accepted pods
  double max_lifetime = 86400;
  bool json = false;
};

// The non-empty items of a comma list.
std::vector<std::string> MigSplit(const std::string& text) {
  std::vector<std::string> out = Split(text, ',');
  std::erase(out, std::string());
  return out;
}

struct MeanStd {
  double mean = 0, std = 0;
};
MeanStd MigMeanStd(const std::vector<double>& v) {
  MeanStd r;
  if (v.empty()) return r;
  for (double x : v) r.mean += x / static_cast<double>(v.size());
  for (double x : v) r.std += (x - r.mean) * (x - r.mean) / static_cast<double>(v.size());
  r.std = std::sqrt(r.std);
  return r;
}

// One policy over the seeds.
struct MigRow {
  std::string policy;
  MeanStd accepted_pct, slice_pct, accepted_pods;
  std::array<double, 4> class_pct = {};
  double relayouts_per_k = 0, pauses_per_k = 0, drains_per_k = 0, drains_pct = 0;
  double gi_changes_per_k = 0, dropped_per_k = 0, lost_gpu_hours = 0;
  double wait_p50 = 0, wait_p95 = 0;
  double decision_p50 = 0, decision_p99 = 0, plan_p50 = 0, plan_p99 = 0, plans = 0;
  double gpu_hours = 0;
  double undersized_pct = 0;  // of accepted pods
  double active_gpus = 0;
  double wall_s = 0;
};

using Shares = std::array<double, gpu::kMigShapeCount>;

// The open-source baselines a policy is compared with: MIG-BENCH's goal A
// (whole-GPU re-layouts: static, HAMi templates, nos) and goal B (per-instance:
// HAMi v2.10, nos, DRA).
enum class MigBaseline { kNone, kWholeGpu, kPerInstance };

struct MigPolicyEntry {
  std::string name;
  MigBaseline baseline;
  // Null for the offline bound, which is solved over a run's arrivals.
  std::function<std::unique_ptr<gpu::ChurnPolicy>(const MigOptions&, const Shares&)> make;
};

constexpr char kOfflineBound[] = "bound-offline";

// Every policy of `--policy all`, in the tables' order.
const std::vector<MigPolicyEntry>& MigPolicies() {
  static const std::vector<MigPolicyEntry> kPolicies = {
      {"static", MigBaseline::kWholeGpu, [](const MigOptions&, const Shares& s) { return gpu::MakeStaticPolicy(s); }},
      {"hami-templates", MigBaseline::kWholeGpu,
       [](const MigOptions& o, const Shares&) { return gpu::MakeHamiTemplatesPolicy(o.t_gi); }},
      {"nos", MigBaseline::kWholeGpu,
       [](const MigOptions& o, const Shares&) { return gpu::MakeNosPolicy(o.t_gi, o.t_dp, false); }},
      {"nos-rgi", MigBaseline::kPerInstance,
       [](const MigOptions& o, const Shares&) { return gpu::MakeNosPolicy(o.t_gi, o.t_dp, true); }},
      {"hami-dynamic", MigBaseline::kPerInstance,
       [](const MigOptions& o, const Shares&) { return gpu::MakeHamiDynamicPolicy(o.t_gi); }},
      {"dra", MigBaseline::kPerInstance, [](const MigOptions& o, const Shares&) { return gpu::MakeDraPolicy(o.t_gi); }},
      {"septa", MigBaseline::kNone,
       [](const MigOptions& o, const Shares& s) { return gpu::MakeSeptaPolicy(s, o.t_node, o.pause_budget); }},
      {"fgd-mig", MigBaseline::kNone,
       [](const MigOptions& o, const Shares& s) { return gpu::MakeFgdMigPolicy(s, o.t_gi); }},
      {"grmu", MigBaseline::kNone,
       [](const MigOptions& o, const Shares& s) { return gpu::MakeGrmuPolicy(s, o.t_gi, o.drain_budget); }},
      {"bound-fluid", MigBaseline::kNone, [](const MigOptions&, const Shares&) { return gpu::MakeFluidBound(); }},
      {"bound-repack", MigBaseline::kNone, [](const MigOptions&, const Shares&) { return gpu::MakeRepackBound(); }},
      {kOfflineBound, MigBaseline::kNone, nullptr},
  };
  return kPolicies;
}

const MigPolicyEntry* FindMigPolicy(const std::string& name) {
  for (const MigPolicyEntry& e : MigPolicies()) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

// B3 over the arrivals `config` offers every policy, as a result row.
Result<gpu::ChurnResult> OfflineBound(const gpu::ChurnCluster& cluster, const std::vector<gpu::ChurnPod>& workload,
                                      const gpu::ChurnConfig& config) {
  const std::vector<gpu::OfflineArrival> arrivals = gpu::ChurnArrivals(cluster, workload, config);
  SEPTA_ASSIGN_OR_RETURN(const gpu::OfflineBound bound, gpu::SolveOfflineBound(cluster, arrivals));
  gpu::ChurnResult r;
  r.policy = kOfflineBound;
  r.arrivals = static_cast<int>(arrivals.size());
  r.accepted = static_cast<int>(std::floor(bound.pods + 1e-6));  // whole pods: at most the LP's
  r.accepted_slices = bound.slices;
  for (const gpu::OfflineArrival& a : arrivals) {
    r.offered_slices += a.pod.ComputeSlices();
    ++r.class_offered[a.pod.ShapeClass()];
  }
  for (int c = 0; c < 4; ++c) r.class_accepted[c] = static_cast<int>(std::floor(bound.class_pods[c] + 1e-6));
  return r;
}

Result<MigRow> RunMigPolicy(const gpu::ChurnCluster& cluster, const std::vector<gpu::ChurnPod>& workload,
                            const MigPolicyEntry& entry, const MigOptions& o, const Shares& shares, double load,
                            bool queue, const std::vector<std::uint64_t>& seeds) {
  MigRow row;
  row.policy = entry.name;
  std::vector<double> acc, slice, pods, waits, decision, plan;
  const double runs = static_cast<double>(seeds.size());
  for (std::uint64_t seed : seeds) {
    gpu::ChurnConfig config;
    config.load = load;
    config.queue = queue;
    config.warmup = o.window > 0 ? 0 : o.warmup;
    config.measured = o.window > 0 ? o.window : o.measured;
    config.prefill = o.window == 0;
    config.replay = o.replay;
    config.seed = seed;
    config.clock_ns = [] {
      return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count();
    };
    const auto t0 = std::chrono::steady_clock::now();
    const Result<gpu::ChurnResult> run = [&]() -> Result<gpu::ChurnResult> {
      if (!entry.make) return OfflineBound(cluster, workload, config);
      return gpu::RunChurn(cluster, workload, *entry.make(o, shares), config);
    }();
    if (!run.ok()) return run.status();
    const gpu::ChurnResult& r = *run;
    row.wall_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / runs;
    const double arrivals = std::max(1, r.arrivals);
    acc.push_back(100.0 * r.accepted / arrivals);
    slice.push_back(r.offered_slices > 0 ? 100.0 * r.accepted_slices / r.offered_slices : 0);
    pods.push_back(r.accepted);
    for (int c = 0; c < 4; ++c) {
      row.class_pct[c] += (r.class_offered[c] > 0 ? 100.0 * r.class_accepted[c] / r.class_offered[c] : 0) / runs;
    }
    row.relayouts_per_k += 1000.0 * r.relayouts / arrivals / runs;
    row.pauses_per_k += 1000.0 * r.node_pauses / arrivals / runs;
    row.drains_per_k += 1000.0 * r.drains / arrivals / runs;
    row.drains_pct += (r.accepted > 0 ? 100.0 * r.drains / r.accepted : 0) / runs;
    row.gi_changes_per_k += 1000.0 * r.gi_changes / arrivals / runs;
    row.dropped_per_k += 1000.0 * r.dropped / arrivals / runs;
    row.lost_gpu_hours += r.lost_gpu_hours / runs;
    row.gpu_hours += r.gpu_hours / runs;
    row.active_gpus += r.active_gpus / runs;
    row.undersized_pct += (r.accepted > 0 ? 100.0 * r.undersized / r.accepted : 0) / runs;
    row.plans += static_cast<double>(r.plan_us.size()) / runs;
    waits.insert(waits.end(), r.waits_s.begin(), r.waits_s.end());
    decision.insert(decision.end(), r.decision_us.begin(), r.decision_us.end());
    plan.insert(plan.end(), r.plan_us.begin(), r.plan_us.end());
  }
  row.accepted_pct = MigMeanStd(acc);
  row.slice_pct = MigMeanStd(slice);
  row.accepted_pods = MigMeanStd(pods);
  row.wait_p50 = Percentile(waits, 0.5);
  row.wait_p95 = Percentile(waits, 0.95);
  row.decision_p50 = Percentile(decision, 0.5);
  row.decision_p99 = Percentile(decision, 0.99);
  row.plan_p50 = Percentile(plan, 0.5);
  row.plan_p99 = Percentile(plan, 0.99);
  return row;
}

// What --policy names, in the tables' order; the offline bound with --all
// only where it is defined (--window, loss mode).
Result<std::vector<const MigPolicyEntry*>> SelectMigPolicies(const MigOptions& o) {
  std::vector<const MigPolicyEntry*> policies;
  const bool offline_defined = o.window > 0 && MigSplit(o.mode) == std::vector<std::string>{"loss"};
  for (const std::string& name : MigSplit(o.policy)) {
    if (name == "all") {
      for (const MigPolicyEntry& e : MigPolicies()) {
        if (e.make || offline_defined) policies.push_back(&e);
      }
      continue;
    }
    const MigPolicyEntry* entry = FindMigPolicy(name);
    if (entry == nullptr) {
      std::vector<std::string> known;
      for (const MigPolicyEntry& e : MigPolicies()) known.push_back(e.name);
      return InvalidArgument(fmt::format("--policy: unknown policy {} (known: {}, or all)", name, Join(known, ", ")));
    }
    if (!entry->make && !offline_defined) {
      return InvalidArgument(fmt::format(
          "--policy: {} is defined over windows into an empty cluster in loss mode: add --window N --mode loss", name));
    }
    policies.push_back(entry);
  }
  return policies;
}

// W0: every policy's allocation at 100 % and 130 % offered, mean ± std over the seeds.
void PrintMigFill(const gpu::ChurnCluster& cluster, const std::vector<gpu::ChurnPod>& workload,
                  const std::vector<const MigPolicyEntry*>& policies, const MigOptions& o, const Shares& shares,
                  const std::string& trace, const std::vector<std::uint64_t>& seeds) {
  const int gpus = cluster.Gpus();
  nlohmann::json out = {{"trace", trace},     {"cluster", o.cluster},  {"gpus", gpus},
                        {"workload", "fill"}, {"seeds", seeds.size()}, {"results", nlohmann::json::array()}};
  if (!o.json) {
    fmt::print("trace {} · {} ({} GPUs) · W0 fill (pods never leave, loss mode) · {} seeds\n", trace, o.cluster, gpus,
               seeds.size());
    fmt::print("{:<15} {:>22} {:>22} {:>20}\n", "policy", "allocated @100 % %", "allocated @130 % %",
               "arrivals @100/130 %");
  }
  for (const MigPolicyEntry* entry : policies) {
    if (!entry->make) continue;  // the offline bound is defined over windows
    std::vector<double> at_100, at_130;
    double arrivals_100 = 0, arrivals_130 = 0;
    for (std::uint64_t seed : seeds) {
      auto fill = gpu::RunFill(
          cluster, workload, [&] { return entry->make(o, shares); }, seed);
      if (!fill.ok()) continue;  // only an empty workload, refused before
      at_100.push_back(100.0 * fill->allocated_100);
      at_130.push_back(100.0 * fill->allocated_130);
      arrivals_100 += static_cast<double>(fill->arrivals_100) / static_cast<double>(seeds.size());
      arrivals_130 += static_cast<double>(fill->arrivals_130) / static_cast<double>(seeds.size());
    }
    const MeanStd a = MigMeanStd(at_100), b = MigMeanStd(at_130);
    if (o.json) {
      out["results"].push_back({{"policy", entry->name},
                                {"allocated_pct_at_100", {{"mean", a.mean}, {"std", a.std}}},
                                {"allocated_pct_at_130", {{"mean", b.mean}, {"std", b.std}}},
                                {"arrivals_to_100", arrivals_100},
                                {"arrivals_to_130", arrivals_130}});
      continue;
    }
    fmt::print("{:<15} {:>15.2f}±{:<6.2f} {:>15.2f}±{:<6.2f} {:>9.0f}/{:<10.0f}\n", entry->name, a.mean, a.std, b.mean,
               b.std, arrivals_100, arrivals_130);
  }
  if (o.json) {
    fmt::print("{}\n", out.dump());
  } else {
    fmt::print(
        "allocated = accepted compute slices / the cluster's, when the offered slices reach 100 % and 130 % of "
        "them\n\n");
  }
}

int RunMig(MigOptions o) {
  const std::string data_dir = "../shared/data/openb/";
  if (o.pods.empty()) o.pods.push_back(data_dir + "openb_pod_list_default.csv");
  auto seeds = ParseSeeds(o.seeds);
  if (!seeds.ok()) {
    fmt::print(stderr, "{}\n", seeds.status().message());
    return 2;
  }
  int scale = 0;
  if (o.cluster == "mix-256") scale = 1;
  if (o.cluster == "mix-1280") scale = 5;
  if (o.cluster.starts_with("mix-x")) scale = std::atoi(o.cluster.c_str() + 5);
  auto cluster = o.cluster == "mix-6208" ? gpu::Mix6208Cluster(gpu::Catalog::Default())
                                         : gpu::MixCluster(gpu::Catalog::Default(), scale);
  if (!cluster.ok()) {
    fmt::print(stderr, "--cluster {}: {} (mix-256, mix-1280, mix-6208 or mix-x<scale>)\n", o.cluster,
               cluster.status().message());
    return 2;
  }
  auto selected = SelectMigPolicies(o);
  if (!selected.ok()) {
    fmt::print(stderr, "{}\n", selected.status().message());
    return 2;
  }
  const std::vector<const MigPolicyEntry*>& policies = *selected;
  auto load_trace = [&](const std::string& path) -> Result<std::vector<gpu::ChurnPod>> {
    if (path.starts_with("synthetic:")) {
      auto pods = gpu::SyntheticWorkload(path.substr(10), 10000, 7);
      SEPTA_RETURN_IF_ERROR(pods);
      for (gpu::ChurnPod& p : *pods) p.lifetime_s = std::max(60.0, p.lifetime_s);
      return pods;
    }
    Result<std::string> text = base::ReadFile(path);
    SEPTA_RETURN_IF_ERROR(text);
    auto trace = gpu::ParseChurnTrace(*text, path, gpu::MixModelNames());
    SEPTA_RETURN_IF_ERROR(trace);
    return gpu::ChurnWorkloadM1(*trace, 60, o.max_lifetime);
  };
  // Offline parameters (static's layout mix, Septa's forecast) come from one
  // visible trace only, never from the trace being measured.
  auto mix_workload = load_trace(o.mix_from);
  if (!mix_workload.ok()) {
    fmt::print(stderr, "--mix-from: {}\n", mix_workload.status().message());
    return 1;
  }
  const std::array<double, gpu::kMigShapeCount> shares = gpu::SliceTimeShares(*mix_workload);
  std::vector<double> loads;
  for (const std::string& l : MigSplit(o.loads)) loads.push_back(std::atof(l.c_str()));
  const std::vector<std::string> modes = MigSplit(o.mode);
  for (const std::string& path : o.pods) {
    auto workload = load_trace(path);
    if (!workload.ok()) {
      fmt::print(stderr, "{}\n", workload.status().message());
      return 1;
    }
    const bool synthetic = path.starts_with("synthetic:");
    if (synthetic && o.replay) {
      fmt::print(stderr, "--replay: {} has no creation times to replay (an openb pod list has)\n", path);
      return 2;
    }
    const std::string trace = synthetic ? path : fs::path(path).stem().string();
    // A synthetic mix is our own distribution, known in advance: the offline
    // parameters take its own shares.
    const std::array<double, gpu::kMigShapeCount> trace_shares = synthetic ? gpu::SliceTimeShares(*workload) : shares;
    if (o.fill) {
      PrintMigFill(*cluster, *workload, policies, o, trace_shares, trace, *seeds);
      continue;
    }
    for (const std::string& mode : modes) {
      if (mode != "queue" && mode != "loss") {
        fmt::print(stderr, "--mode: {} is neither queue nor loss\n", mode);
        return 2;
      }
      for (double load : loads) {
        std::vector<MigRow> rows;
        for (const MigPolicyEntry* p : policies) {
          auto row = RunMigPolicy(*cluster, *workload, *p, o, trace_shares, load, mode == "queue", *seeds);
          if (!row.ok()) {
            fmt::print(stderr, "{}: {}\n", p->name, row.status().message());
            return 1;
          }
          rows.push_back(std::move(row).value());
        }
        // The best baseline of each goal, by accepted pods.
        const MigRow* best_a = nullptr;
        const MigRow* best_b = nullptr;
        const MigRow* bound = nullptr;
        const MigRow* repack = nullptr;
        const MigRow* offline = nullptr;
        for (std::size_t i = 0; i < rows.size(); ++i) {
          const MigRow& r = rows[i];
          const MigRow*& best = policies[i]->baseline == MigBaseline::kWholeGpu ? best_a : best_b;
          if (policies[i]->baseline != MigBaseline::kNone &&
              (best == nullptr || r.accepted_pct.mean > best->accepted_pct.mean)) {
            best = &r;
          }
          if (r.policy == "bound-fluid") bound = &r;
          if (r.policy == "bound-repack") repack = &r;
          if (r.policy == kOfflineBound) offline = &r;
        }
        auto ratio = [](const MigRow& r, const MigRow* of) {
          return of && of->slice_pct.mean > 0 ? r.slice_pct.mean / of->slice_pct.mean : 0.0;
        };
        auto d_pods = [](const MigRow& r, const MigRow* best) {
          return best ? 100.0 * (r.accepted_pods.mean / best->accepted_pods.mean - 1) : 0.0;
        };
        auto d_slice = [](const MigRow& r, const MigRow* best) {
          return best ? r.slice_pct.mean - best->slice_pct.mean : 0.0;
        };
        if (o.json) {
          nlohmann::json out = {{"trace", trace},
                                {"cluster", o.cluster},
                                {"gpus", cluster->Gpus()},
                                {"mode", mode},
                                {"load", load},
                                {"seeds", seeds->size()},
                                {"warmup", o.window > 0 ? 0 : o.warmup},
                                {"measured", o.window > 0 ? o.window : o.measured},
                                {"from_empty", o.window > 0},
                                {"workload", o.replay ? "replay" : "churn"},
                                {"best_whole_gpu_baseline", best_a ? best_a->policy : ""},
                                {"best_per_instance_baseline", best_b ? best_b->policy : ""},
                                {"results", nlohmann::json::array()}};
          for (const MigRow& r : rows) {
            out["results"].push_back({{"policy", r.policy},
                                      {"accepted_pct", {{"mean", r.accepted_pct.mean}, {"std", r.accepted_pct.std}}},
                                      {"slice_pct", {{"mean", r.slice_pct.mean}, {"std", r.slice_pct.std}}},
                                      {"accepted_pods", r.accepted_pods.mean},
                                      {"delta_pods_pct_vs_best_whole_gpu", d_pods(r, best_a)},
                                      {"delta_slice_points_vs_best_whole_gpu", d_slice(r, best_a)},
                                      {"delta_pods_pct_vs_best_per_instance", d_pods(r, best_b)},
                                      {"delta_slice_points_vs_best_per_instance", d_slice(r, best_b)},
                                      {"slice_ratio_b1", ratio(r, bound)},
                                      {"slice_ratio_b2", ratio(r, repack)},
                                      {"slice_ratio_b3", ratio(r, offline)},
                                      {"class_pct", r.class_pct},
                                      {"relayouts_per_1000", r.relayouts_per_k},
                                      {"node_pauses_per_1000", r.pauses_per_k},
                                      {"drains_per_1000", r.drains_per_k},
                                      {"drains_pct_of_accepted", r.drains_pct},
                                      {"dropped_per_1000", r.dropped_per_k},
                                      {"lost_gpu_hours", r.lost_gpu_hours},
                                      {"gi_changes_per_1000", r.gi_changes_per_k},
                                      {"gpu_hours", r.gpu_hours},
                                      {"undersized_pct_of_accepted", r.undersized_pct},
                                      {"active_gpus_time_mean", r.active_gpus},
                                      {"wait_s", {{"p50", r.wait_p50}, {"p95", r.wait_p95}}},
                                      {"decision_us", {{"p50", r.decision_p50}, {"p99", r.decision_p99}}},
                                      {"plan_us", {{"p50", r.plan_p50}, {"p99", r.plan_p99}, {"per_run", r.plans}}},
                                      {"wall_s", r.wall_s}});
          }
          fmt::print("{}\n", out.dump());
          continue;
        }
        fmt::print("trace {} · {} ({} GPUs) · {} mode · load {:.2f} · {} seeds · {}\n", trace, o.cluster,
                   cluster->Gpus(), mode, load, seeds->size(),
                   o.window > 0 ? fmt::format("{} arrivals into an empty cluster", o.window)
                                : fmt::format("{}+{} arrivals{}", o.warmup, o.measured,
                                              o.replay ? " replayed (W2: the trace's order and gaps)" : ""));
        fmt::print(
            "{:<15} {:>14} {:>14} {:>13} {:>13} {:>6} {:>6} {:>6} {:>23} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>7} "
            "{:>13} {:>13} {:>7} {:>7}\n",
            "policy", "accepted %", "slice-wt %", "ΔA pods/slice", "ΔB pods/slice", "/B1", "/B2", "/B3",
            "1g-2g 3g-4g 7g multi", "under%", "relay", "pause", "gi", "drain", "drain%", "wait95", "decide p50/99",
            "plan p50/99", "active", "wall s");
        for (const MigRow& r : rows) {
          fmt::print(
              "{:<15} {:>7.2f}±{:<5.2f} {:>7.2f}±{:<5.2f} {:>+6.1f}/{:<+6.1f} {:>+6.1f}/{:<+6.1f} {:>6.3f} {:>6.3f} "
              "{:>6.3f} "
              "{:>5.1f} {:>5.1f} {:>5.1f} {:>5.1f} {:>6.1f} {:>6.2f} {:>6.2f} {:>6.1f} {:>6.2f} {:>6.2f} {:>7.0f} "
              "{:>6.1f}/{:<6.1f} {:>6.0f}/{:<6.0f} {:>7.1f} {:>7.2f}\n",
              r.policy, r.accepted_pct.mean, r.accepted_pct.std, r.slice_pct.mean, r.slice_pct.std, d_pods(r, best_a),
              d_slice(r, best_a), d_pods(r, best_b), d_slice(r, best_b), ratio(r, bound), ratio(r, repack),
              ratio(r, offline), r.class_pct[0], r.class_pct[1], r.class_pct[2], r.class_pct[3], r.undersized_pct,
              r.relayouts_per_k, r.pauses_per_k, r.gi_changes_per_k, r.drains_per_k, r.drains_pct, r.wait_p95,
              r.decision_p50, r.decision_p99, r.plan_p50, r.plan_p99, r.active_gpus, r.wall_s);
        }
        fmt::print(
            "ΔA = vs the best whole-GPU baseline ({}), ΔB = vs the best per-instance baseline ({}): pods in %, "
            "slice-weighted in points; /B1, /B2, /B3 = slice-weighted acceptance / the fluid's, the free repack's, the "
            "offline bound's (0 = not run); under% = accepted pods on an instance with less compute than their shape; "
            "relay (GPUs changed), "
            "pause, gi (instances created + destroyed), drain per 1,000 arrivals; drain% of accepted pods; wait95 s; "
            "decide/plan µs; active = time-mean GPUs running an instance\n\n",
            best_a ? best_a->policy : "-", best_b ? best_b->policy : "-");
      }
    }
  }
  return 0;
}

}  // namespace

void AddMigCommand(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<MigOptions>();
  CLI::App* cmd = app.add_subcommand("mig", "MIG placement and re-partitioning under churn (MIG-BENCH.md)");
  cmd->add_option("--pods", options->pods,
                  "openb pod list CSV or synthetic:<uniform|small-heavy|large-heavy>, repeatable "
                  "(default ../shared/data/openb/openb_pod_list_default.csv)");
  cmd->add_option("--mix-from", options->mix_from, "visible trace the offline layout mix is taken from")
      ->capture_default_str();
  cmd->add_option("--cluster", options->cluster, "mix-256, mix-1280, mix-6208 or mix-x<scale>")->capture_default_str();
  cmd->add_option("--policy", options->policy, "policy name, comma list, or all")->capture_default_str();
  cmd->add_option("--seeds", options->seeds, "seeds: 42-51 or 1,2,5")->capture_default_str();
  cmd->add_option("--loads", options->loads, "offered loads rho, comma list")->capture_default_str();
  cmd->add_option("--mode", options->mode, "admission: queue, loss or both (comma list)")->capture_default_str();
  cmd->add_option("--warmup", options->warmup, "arrivals before measuring")->capture_default_str();
  cmd->add_option("--measured", options->measured, "arrivals measured")->capture_default_str();
  cmd->add_option("--window", options->window,
                  "MIG-BENCH's B3 windows: N arrivals into an empty cluster, all measured (replaces --warmup and "
                  "--measured); with --mode loss, --policy all adds the offline bound bound-offline")
      ->check(CLI::Range(0, 1000000));
  cmd->add_flag("--replay", options->replay,
                "W2 instead of W1: arrivals in the trace's creation order and gaps, compressed to the load, from a "
                "seeded start");
  cmd->add_flag("--fill", options->fill,
                "W0 instead of W1: pods that never leave fill an empty cluster to 130 % of its slices offered "
                "(--loads, --mode, --warmup and --measured do not apply)");
  cmd->add_option("--t-gi", options->t_gi, "seconds to create a GPU instance")->capture_default_str();
  cmd->add_option("--t-dp", options->t_dp, "seconds for the device plugin to re-advertise")->capture_default_str();
  cmd->add_option("--t-node", options->t_node, "seconds of a mig-manager cycle (node paused)")->capture_default_str();
  cmd->add_option("--pause-budget", options->pause_budget, "Septa: node pauses per 1,000 arrivals at most")
      ->capture_default_str();
  cmd->add_option("--drain-budget", options->drain_budget,
                  "grmu: drains as a fraction of the accepted pods at most (a Pareto sweep of acceptance against "
                  "drains)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--max-lifetime", options->max_lifetime,
                  "cap on pod lifetimes in seconds (0 = none); measuring starts once it has passed")
      ->capture_default_str();
  cmd->add_flag("--json", options->json, "one JSON object per trace × mode × load on stdout");
  cmd->callback([options, &exit_code] { exit_code = RunMig(*options); });
}

}  // namespace septa::bench
