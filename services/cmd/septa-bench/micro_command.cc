// septa-bench micro: Google Benchmark micro-benchmarks of the placement
// decision on a synthetic cluster (default 10,000 nodes x 8 GPUs) under churn:
// each iteration decides one pod, places it and releases an older one, so the
// per-node score caches see the invalidation a live cluster causes.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <random>
#include <sstream>

#include "common/percentile.h"
#include "gpu/policy.h"
#include "services/cmd/septa-bench/commands.h"

namespace septa::bench {
namespace {

struct MicroOptions {
  int nodes = 10000;
  int gpus = 8;
  double fill = 0.7;  // share of GPU capacity in use while measuring
};

struct Placed {
  int node;
  std::uint8_t mask;
  gpu::PodShape shape;
};

std::vector<gpu::PodShape> SyntheticShapes() {
  // A mix in the spirit of production traces: fractions, whole GPUs, a few
  // multi-GPU pods and CPU-only pods; shape ids numbered in this order.
  const std::vector<std::array<int, 3>> mix = {{4000, 1, 250},   {6000, 1, 500},   {8000, 1, 750}, {12000, 1, 1000},
                                               {24000, 2, 1000}, {48000, 4, 1000}, {8000, 0, 0},   {90000, 8, 1000}};
  std::vector<gpu::PodShape> shapes;
  for (std::size_t i = 0; i < mix.size(); ++i) {
    gpu::PodShape s;
    s.cpu_milli = mix[i][0];
    s.mem_mib = mix[i][0] * 4;
    s.num_gpu = static_cast<std::int16_t>(mix[i][1]);
    s.gpu_milli = static_cast<std::int16_t>(mix[i][2]);
    s.shape_id = static_cast<std::int32_t>(i);
    shapes.push_back(s);
  }
  return shapes;
}

gpu::ClusterState SyntheticCluster(int nodes, int gpus) {
  gpu::ClusterState c;
  c.model_names = {"H100-80GB"};
  for (int i = 0; i < nodes; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "node-%05d", i);
    gpu::NodeState n;
    n.cpu_free = 12000 * gpus;
    n.mem_free = 49152 * gpus;
    n.gpu_count = static_cast<std::uint8_t>(gpus);
    for (int g = 0; g < gpus; ++g) n.gpu_free[g] = gpu::kMilliPerGpu;
    c.names.push_back(name);
    c.capacity.push_back(n);
    c.total_gpu_milli += gpus * gpu::kMilliPerGpu;
  }
  c.nodes = c.capacity;
  return c;
}

void BM_Decision(benchmark::State& state, std::string policy_name, MicroOptions options) {
  gpu::ClusterState cluster = SyntheticCluster(options.nodes, options.gpus);
  const std::vector<gpu::PodShape> shapes = SyntheticShapes();
  const std::vector<double> weights = {20, 20, 15, 30, 5, 3, 15, 1};
  gpu::WorkloadModel workload = gpu::LearnWorkload([&] {
    std::vector<gpu::PodShape> sample;
    for (std::size_t i = 0; i < shapes.size(); ++i)
      sample.insert(sample.end(), static_cast<int>(weights[i]), shapes[i]);
    return sample;
  }());
  std::unique_ptr<gpu::Policy> policy = gpu::MakePolicy(policy_name, cluster, workload, 42);
  std::mt19937_64 rng(42);
  std::discrete_distribution<int> pick_shape(weights.begin(), weights.end());
  std::deque<Placed> live;
  long long allocated = 0;
  auto place = [&](const gpu::PodShape& shape) {
    const gpu::GpuPick pick = policy->Choose(cluster, shape);
    if (pick.node < 0) return;
    gpu::ApplyPod(cluster.nodes[pick.node], shape, pick.gpu_mask, -1);
    policy->NodeChanged(pick.node);
    live.push_back({pick.node, pick.gpu_mask, shape});
    allocated += shape.RequestedMilli();
  };
  auto release_oldest = [&] {
    const Placed p = live.front();
    live.pop_front();
    gpu::ApplyPod(cluster.nodes[p.node], p.shape, p.mask, +1);
    policy->NodeChanged(p.node);
    allocated -= p.shape.RequestedMilli();
  };
  while (allocated < options.fill * static_cast<double>(cluster.total_gpu_milli)) place(shapes[pick_shape(rng)]);

  std::vector<float> micros;
  for (auto _ : state) {
    const gpu::PodShape& shape = shapes[pick_shape(rng)];
    const auto t0 = std::chrono::steady_clock::now();
    const gpu::GpuPick pick = policy->Choose(cluster, shape);
    micros.push_back(std::chrono::duration<float, std::micro>(std::chrono::steady_clock::now() - t0).count());
    benchmark::DoNotOptimize(pick);
    if (pick.node >= 0) {
      gpu::ApplyPod(cluster.nodes[pick.node], shape, pick.gpu_mask, -1);
      policy->NodeChanged(pick.node);
      live.push_back({pick.node, pick.gpu_mask, shape});
      allocated += shape.RequestedMilli();
    }
    while (!live.empty() && allocated > options.fill * static_cast<double>(cluster.total_gpu_milli)) release_oldest();
  }
  if (!micros.empty()) {
    state.counters["p50_us"] = Percentile(micros, 0.50);
    state.counters["p99_us"] = Percentile(micros, 0.99);
  }
  const double gpus = static_cast<double>(cluster.total_gpu_milli) / gpu::kMilliPerGpu;
  state.counters["state_B_per_gpu"] =
      static_cast<double>(policy->StateBytes() + 2 * cluster.nodes.size() * sizeof(gpu::NodeState)) / gpus;
}

}  // namespace

void AddMicroCommand(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<MicroOptions>();
  auto policies = std::make_shared<std::string>("septa,fgd,bestfit");
  CLI::App* cmd =
      app.add_subcommand("micro", "decision-time micro-benchmarks (Google Benchmark; --benchmark_* passed through)");
  cmd->add_option("--nodes", options->nodes, "synthetic cluster nodes")->capture_default_str();
  cmd->add_option("--gpus", options->gpus, "GPUs per node (1..8)")->capture_default_str()->check(CLI::Range(1, 8));
  cmd->add_option("--fill", options->fill, "share of GPU capacity kept allocated")->capture_default_str();
  cmd->add_option("--policy", *policies, "comma list of policies")->capture_default_str();
  cmd->allow_extras();
  cmd->callback([cmd, options, policies, &exit_code] {
    std::vector<std::string> args = {"septa-bench"};
    for (const std::string& extra : cmd->remaining()) args.push_back(extra);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    int argc = static_cast<int>(argv.size());
    benchmark::Initialize(&argc, argv.data());
    if (benchmark::ReportUnrecognizedArguments(argc, argv.data())) {
      exit_code = 2;
      return;
    }
    std::stringstream list(*policies);
    for (std::string name; std::getline(list, name, ',');) {
      if (!gpu::MakePolicy(name, SyntheticCluster(1, 1), {}, 0)) {
        std::fprintf(stderr, "septa-bench micro: unknown policy '%s'\n", name.c_str());
        exit_code = 2;
        return;
      }
      benchmark::RegisterBenchmark(
          ("decision/" + name + "/" + std::to_string(options->nodes) + "x" + std::to_string(options->gpus)).c_str(),
          BM_Decision, name, *options)
          ->Unit(benchmark::kMicrosecond);
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
  });
}

}  // namespace septa::bench
