// septa-bench placement: the openb replay of PLACEMENT-BENCH.md, every
// requested policy side by side on the same machine.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "common/percentile.h"
#include "gpu/catalog.h"
#include "gpu/openb_csv.h"
#include "gpu/packing_bound.h"
#include "gpu/policy.h"
#include "gpu/trace_replay.h"
#include "services/base/file.h"
#include "services/cmd/septa-bench/arguments.h"
#include "services/cmd/septa-bench/commands.h"

namespace septa::bench {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string nodes;
  std::vector<std::string> pods;
  std::string policy = "all";
  std::string seeds = "42-51";
  bool json = false;
  bool packing_bound = false;
};

struct Spread {
  double mean = 0, min = 0, max = 0;
};

struct PolicyResult {
  std::string policy;
  Spread alloc_100, alloc_130;
  std::array<double, 4> frag = {};
  double failed_pods = 0;
  double decision_p50_us = 0, decision_p99_us = 0;
  double wall_s = 0;
  double state_bytes_per_gpu = 0;
  // --packing-bound: means over seeds (docs/placement.md).
  bool has_bound = false;
  double fractional_gpus = 0, packed_gpus = 0, recoverable_gpus = 0, ceiling_130 = 0;
};

Spread SpreadOf(const std::vector<double>& values) {
  Spread s;
  s.min = *std::min_element(values.begin(), values.end());
  s.max = *std::max_element(values.begin(), values.end());
  for (double v : values) s.mean += v / static_cast<double>(values.size());
  return s;
}

Result<PolicyResult> RunPolicy(const gpu::ReplayInput& input, const std::string& policy_name,
                               const std::vector<std::uint64_t>& seeds, bool packing_bound) {
  PolicyResult r;
  r.policy = policy_name;
  r.has_bound = packing_bound;
  const double runs = static_cast<double>(seeds.size());
  const double gpus = static_cast<double>(input.cluster.total_gpu_milli) / gpu::kMilliPerGpu;
  std::vector<double> alloc_100, alloc_130;
  std::vector<float> decision_us;
  double wall = 0, failed = 0;
  for (std::uint64_t seed : seeds) {
    const auto run_start = Clock::now();
    std::unique_ptr<gpu::Policy> policy = gpu::MakePolicy(policy_name, input.cluster, input.workload, seed);
    gpu::TraceReplay replay(input, gpu::ArrivalOrder(input, seed), *policy);
    std::optional<gpu::GpuContentsRecorder> recorder;
    if (packing_bound) recorder.emplace(input.cluster);
    while (!replay.done()) {
      const auto t0 = Clock::now();
      const gpu::GpuPick pick = replay.Decide();
      const auto t1 = Clock::now();
      decision_us.push_back(std::chrono::duration<float, std::micro>(t1 - t0).count());
      if (recorder) recorder->Record(replay.next_pod(), pick);
      replay.Commit(pick);
    }
    wall += std::chrono::duration<double>(Clock::now() - run_start).count();
    const gpu::ReplayMeasures m = replay.Measures();
    if (recorder) {
      Result<gpu::PackingBound> bound = gpu::ComputePackingBound(*recorder);
      if (!bound.ok()) {
        return Status(bound.status().code(),
                      policy_name + ", seed " + std::to_string(seed) + ": packing bound: " + bound.status().message());
      }
      r.fractional_gpus += bound->fractional_gpus / runs;
      r.packed_gpus += bound->packed_gpus / runs;
      r.recoverable_gpus += bound->RecoverableGpus() / runs;
      r.ceiling_130 += (m.alloc_ratio_130 + 100.0 * bound->RecoverableGpus() / gpus) / runs;
    }
    alloc_100.push_back(m.alloc_ratio_100);
    alloc_130.push_back(m.alloc_ratio_130);
    for (std::size_t i = 0; i < r.frag.size(); ++i) r.frag[i] += m.frag_pct[i] / runs;
    failed += m.failed_pods;
    r.state_bytes_per_gpu =
        static_cast<double>(policy->StateBytes() + 2 * input.cluster.nodes.size() * sizeof(gpu::NodeState)) / gpus;
  }
  r.alloc_100 = SpreadOf(alloc_100);
  r.alloc_130 = SpreadOf(alloc_130);
  r.failed_pods = failed / runs;
  r.decision_p50_us = Percentile(decision_us, 0.50);
  r.decision_p99_us = Percentile(decision_us, 0.99);
  r.wall_s = wall / runs;
  return r;
}

nlohmann::json ToJson(const std::string& trace, const gpu::ReplayInput& input,
                      const std::vector<PolicyResult>& results) {
  nlohmann::json out;
  out["trace"] = trace;
  out["nodes"] = input.cluster.nodes.size();
  out["gpus"] = input.cluster.total_gpu_milli / gpu::kMilliPerGpu;
  out["results"] = nlohmann::json::array();
  for (const PolicyResult& r : results) {
    auto spread = [](const Spread& s) { return nlohmann::json{{"mean", s.mean}, {"min", s.min}, {"max", s.max}}; };
    nlohmann::json frag;
    for (std::size_t i = 0; i < r.frag.size(); ++i) frag[std::to_string(gpu::kFragSamplePoints[i])] = r.frag[i];
    nlohmann::json result = {{"policy", r.policy},
                             {"alloc_ratio_100", spread(r.alloc_100)},
                             {"alloc_ratio_130", spread(r.alloc_130)},
                             {"frag_pct", frag},
                             {"failed_pods", r.failed_pods},
                             {"decision_us", {{"p50", r.decision_p50_us}, {"p99", r.decision_p99_us}}},
                             {"wall_s", r.wall_s},
                             {"state_bytes_per_gpu", r.state_bytes_per_gpu}};
    if (r.has_bound) {
      result["packing_bound"] = {{"fractional_gpus", r.fractional_gpus},
                                 {"packed_gpus", r.packed_gpus},
                                 {"recoverable_gpus", r.recoverable_gpus},
                                 {"ceiling_130", r.ceiling_130}};
    }
    out["results"].push_back(std::move(result));
  }
  return out;
}

void PrintTable(const std::string& trace, const gpu::ReplayInput& input, std::size_t seed_count,
                const std::vector<PolicyResult>& results) {
  fmt::print("trace {}: {} nodes, {} GPUs, {} pods, {} seeds\n", trace, input.cluster.nodes.size(),
             input.cluster.total_gpu_milli / gpu::kMilliPerGpu, input.pods.size(), seed_count);
  fmt::print("{:<14} {:>21} {:>21} {:>23} {:>8} {:>9} {:>9} {:>8}\n", "policy", "alloc@100% mean[min,max]",
             "alloc@130% mean[min,max]", "frag% @30/50/70/90", "failed", "p50 us", "p99 us", "wall s");
  for (const PolicyResult& r : results) {
    fmt::print(
        "{:<14} {:>7.2f} [{:5.2f},{:5.2f}] {:>7.2f} [{:5.2f},{:5.2f}] {:>5.2f} {:>5.2f} {:>5.2f} {:>5.2f} {:>8.0f} "
        "{:>9.1f} {:>9.1f} {:>8.2f}\n",
        r.policy, r.alloc_100.mean, r.alloc_100.min, r.alloc_100.max, r.alloc_130.mean, r.alloc_130.min,
        r.alloc_130.max, r.frag[0], r.frag[1], r.frag[2], r.frag[3], r.failed_pods, r.decision_p50_us,
        r.decision_p99_us, r.wall_s);
  }
  if (!results.empty() && results.front().has_bound) {
    fmt::print(
        "packing bound: the same fractional pods packed by the bin-packing LP (hindsight, offline); freed GPUs\n"
        "given to failed whole-GPU pods\n");
    fmt::print("{:<14} {:>15} {:>12} {:>12} {:>11} {:>11}\n", "policy", "fraction GPUs", "LP GPUs", "recoverable",
               "alloc@130%", "ceiling");
    for (const PolicyResult& r : results) {
      fmt::print("{:<14} {:>15.1f} {:>12.1f} {:>12.1f} {:>11.2f} {:>11.2f}\n", r.policy, r.fractional_gpus,
                 r.packed_gpus, r.recoverable_gpus, r.alloc_130.mean, r.ceiling_130);
    }
  }
  fmt::print("\n");
}

int Run(Options options) {
  const std::string data_dir = "../shared/data/openb/";
  if (options.nodes.empty()) options.nodes = data_dir + "openb_node_list_gpu_node.csv";
  if (options.pods.empty() && fs::is_directory(data_dir)) {
    for (const auto& entry : fs::directory_iterator(data_dir)) {
      const std::string file = entry.path().filename().string();
      if (file.starts_with("openb_pod_list_") && file.ends_with(".csv")) options.pods.push_back(entry.path().string());
    }
    std::sort(options.pods.begin(), options.pods.end());
  }
  if (options.pods.empty()) {
    fmt::print(stderr, "septa-bench placement: no --pods given and no {} found\n", data_dir);
    return 2;
  }
  std::vector<std::string> policies;
  if (options.policy == "all") {
    policies = gpu::PolicyNames();
  } else {
    std::stringstream list(options.policy);
    for (std::string name; std::getline(list, name, ',');) {
      const auto& known = gpu::PolicyNames();
      if (std::find(known.begin(), known.end(), name) == known.end()) {
        fmt::print(stderr, "septa-bench placement: unknown policy '{}'\n", name);
        return 2;
      }
      policies.push_back(name);
    }
  }
  Result<std::vector<std::uint64_t>> seeds = ParseSeeds(options.seeds);
  if (!seeds.ok()) {
    fmt::print(stderr, "septa-bench placement: {}\n", seeds.status().message());
    return 2;
  }
  const gpu::Catalog& catalog = gpu::Catalog::Default();
  Result<std::string> node_text = base::ReadFile(options.nodes);
  if (!node_text.ok()) {
    fmt::print(stderr, "septa-bench placement: {}\n", node_text.status().message());
    return 2;
  }
  Result<std::vector<gpu::OpenbNode>> nodes = gpu::ParseOpenbNodes(*node_text, options.nodes, catalog);
  if (!nodes.ok()) {
    fmt::print(stderr, "septa-bench placement: {}\n", nodes.status().message());
    return 2;
  }
  for (const std::string& pods_path : options.pods) {
    Result<std::string> pod_text = base::ReadFile(pods_path);
    if (!pod_text.ok()) {
      fmt::print(stderr, "septa-bench placement: {}\n", pod_text.status().message());
      return 2;
    }
    Result<std::vector<gpu::OpenbPod>> pods = gpu::ParseOpenbPods(*pod_text, pods_path, catalog);
    if (!pods.ok()) {
      fmt::print(stderr, "septa-bench placement: {}\n", pods.status().message());
      return 2;
    }
    Result<gpu::ReplayInput> input = gpu::BuildReplayInput(*nodes, *pods);
    if (!input.ok()) {
      fmt::print(stderr, "septa-bench placement: {}: {}\n", pods_path, input.status().message());
      return 2;
    }
    std::vector<PolicyResult> results;
    for (const std::string& policy : policies) {
      Result<PolicyResult> result = RunPolicy(*input, policy, *seeds, options.packing_bound);
      if (!result.ok()) {
        fmt::print(stderr, "septa-bench placement: {}: {}\n", pods_path, result.status().message());
        return 2;
      }
      results.push_back(std::move(*result));
    }
    const std::string trace = fs::path(pods_path).filename().string();
    if (options.json) {
      fmt::print("{}\n", ToJson(trace, *input, results).dump());
    } else {
      PrintTable(trace, *input, seeds->size(), results);
    }
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

void AddPlacementCommand(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("placement", "replay openb traces per placement policy");
  cmd->add_option("--nodes", options->nodes,
                  "node list CSV (default ../shared/data/openb/openb_node_list_gpu_node.csv)");
  cmd->add_option("--pods", options->pods, "pod list CSV, repeatable (default: every openb_pod_list_*.csv there)");
  cmd->add_option("--policy", options->policy, "policy name, comma list, or all")->capture_default_str();
  cmd->add_option("--seeds", options->seeds, "seeds: 42-51 or 1,2,5")->capture_default_str();
  cmd->add_flag("--json", options->json, "one JSON object per trace on stdout");
  cmd->add_flag("--packing-bound", options->packing_bound,
                "also bound what perfect packing of each run's fractional pods could recover (LP, hindsight)");
  cmd->callback([options, &exit_code] { exit_code = Run(*options); });
}

}  // namespace septa::bench
