#include "gpu/policy_septa.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "gpu/packing_lp.h"

namespace septa::gpu {

SeptaPolicy::SeptaPolicy(const ClusterState& cluster, const WorkloadModel& workload)
    : ScoringPolicy(static_cast<int>(cluster.nodes.size())) {
  for (const WorkloadClass& m : workload.classes) {
    if (m.num_gpu == 0) continue;  // uses no GPU: all idle GPU is waste for it
    Class c;
    const int need = m.PerGpuNeed();
    auto it = std::find_if(needs_.begin(), needs_.end(), [&](const Need& n) { return n.milli == need; });
    if (it == needs_.end()) {
      Need n{need, std::vector<std::uint8_t>(kMilliPerGpu + 1)};
      for (int f = 0; f <= kMilliPerGpu; ++f) n.slots_by_free[f] = static_cast<std::uint8_t>(f / need);
      needs_.push_back(std::move(n));
      it = needs_.end() - 1;
    }
    c.need = static_cast<int>(it - needs_.begin());
    c.num_gpu = m.num_gpu;
    c.cpu_milli = m.cpu_milli;
    c.mem_mib = m.mem_mib;
    c.model_mask = m.model_mask;
    c.milli_per_instance = static_cast<double>(m.num_gpu) * need;
    c.frequency = m.frequency;
    classes_.push_back(c);
  }
  const int models = std::max<int>(1, static_cast<int>(cluster.model_names.size()));
  priced_remainder_.assign(static_cast<std::size_t>(models) * (kMilliPerGpu + 1), 0.f);
  for (int model = 0; model < models; ++model) PriceModel(model);
  // The CPU the mix asks per milli-GPU it fills: the expected fill of a
  // node's GPUs can be no larger than its free CPU allows.
  double cpu = 0, milli = 0, mem = 0;
  for (const Class& c : classes_) {
    cpu += c.frequency * c.cpu_milli;
    mem += c.frequency * c.mem_mib;
    milli += c.frequency * c.milli_per_instance;
  }
  cpu_per_milli_ = milli > 0 ? cpu / milli : 0;
  mem_per_milli_ = milli > 0 ? mem / milli : 0;
  slots_before_.resize(needs_.size());
  slots_after_.resize(needs_.size());
}

// The packing LP of the fractional classes allowed on `model` prices each pod
// size in GPUs (gpu/packing_lp.h). K(f), the most a GPU with f milli free can
// still be worth at those prices, is a knapsack over f; whole-GPU classes
// make a free GPU worth one GPU. The table keeps the priced remainder
// f - 1000 K(f): the part of f that the mix, packed as well as it can be,
// leaves unused.
void SeptaPolicy::PriceModel(int model) {
  std::vector<PackingDemand> demand;
  bool whole = false;
  for (const Class& c : classes_) {
    if (!((c.model_mask >> model) & 1u)) continue;
    const int d = needs_[c.need].milli;
    if (d >= kMilliPerGpu) {
      whole = true;
      continue;
    }
    auto it = std::find_if(demand.begin(), demand.end(), [&](const PackingDemand& x) { return x.milli == d; });
    if (it == demand.end()) it = demand.insert(demand.end(), PackingDemand{d, 0, 0});
    it->demand += c.frequency;
  }
  Result<PackingLpSolution> lp = SolvePackingLp(demand);
  if (!lp.ok()) {
    // Cannot happen for sizes 1..999 short of a solver failure. Pricing each
    // pod at what it asks still values a gap by what the mix can fill of it,
    // only blind to how sizes pair.
    lp_status_ = lp.status();
    lp = PackingLpSolution{};
    for (const PackingDemand& d : demand) lp->prices.push_back(d.milli / static_cast<double>(kMilliPerGpu));
  }
  std::vector<double> k = MostValuableFill(demand, lp->prices);
  if (whole) k[kMilliPerGpu] = std::max(k[kMilliPerGpu], 1.0);
  float* remainder = priced_remainder_.data() + static_cast<std::size_t>(model) * (kMilliPerGpu + 1);
  for (int f = 0; f <= kMilliPerGpu; ++f) remainder[f] = static_cast<float>(f - kMilliPerGpu * k[f]);
}

std::size_t SeptaPolicy::StateBytes() const {
  return ScoringPolicy::StateBytes() + priced_remainder_.size() * sizeof(float) +
         needs_.size() * (sizeof(Need) + kMilliPerGpu + 1) + classes_.size() * sizeof(Class);
}

void SeptaPolicy::CountSlots(const NodeState& node, std::vector<int>& slots) const {
  for (std::size_t d = 0; d < needs_.size(); ++d) {
    int s = 0;
    for (int g = 0; g < node.gpu_count; ++g) s += needs_[d].slots_by_free[node.gpu_free[g]];
    slots[d] = s;
  }
}

double SeptaPolicy::WasteOf(const std::vector<int>& slots, int cpu_free, int idle, int model) const {
  double usable = 0;
  for (const Class& c : classes_) {
    if (!((c.model_mask >> model) & 1u)) continue;
    int instances = c.num_gpu == 1 ? slots[c.need] : slots[c.need] / c.num_gpu;
    // Divide only when CPU is what binds: this runs for every class of every scored node.
    if (c.cpu_milli > 0 && cpu_free < instances * c.cpu_milli) instances = cpu_free / c.cpu_milli;
    usable += c.frequency * instances * c.milli_per_instance;
  }
  return idle - usable;
}

void SeptaPolicy::SlotsAfter(const NodeState& node, const PodShape& pod, std::uint8_t gpu_mask) {
  slots_after_ = slots_before_;
  for (int g = 0; g < node.gpu_count; ++g) {
    if (!((gpu_mask >> g) & 1u)) continue;
    const int before = node.gpu_free[g];
    const int after = before - pod.gpu_milli;
    for (std::size_t d = 0; d < needs_.size(); ++d) {
      slots_after_[d] += needs_[d].slots_by_free[after] - needs_[d].slots_by_free[before];
    }
  }
}

double SeptaPolicy::RemainderOf(int model, int gpu_count, const std::int16_t* gpu_free, int cpu_free,
                                int mem_free) const {
  const float* r = priced_remainder_.data() + static_cast<std::size_t>(model) * (kMilliPerGpu + 1);
  double idle = 0, fill = 0;
  for (int g = 0; g < gpu_count; ++g) {
    idle += gpu_free[g];
    fill += gpu_free[g] - r[gpu_free[g]];
  }
  if (cpu_per_milli_ > 0) fill = std::min(fill, cpu_free / cpu_per_milli_);
  if (mem_per_milli_ > 0) fill = std::min(fill, mem_free / mem_per_milli_);
  return idle - fill;
}

double SeptaPolicy::Remainder(const NodeState& node) const {
  return RemainderOf(node.model, node.gpu_count, node.gpu_free, node.cpu_free, node.mem_free);
}

double SeptaPolicy::Waste(const NodeState& node) {
  CountSlots(node, slots_before_);
  return WasteOf(slots_before_, node.cpu_free, node.IdleMilli(), node.model);
}

NodeScore SeptaPolicy::ScoreNode(const ClusterState& cluster, int node, const PodShape& pod) {
  const NodeState& n = cluster.nodes[node];
  const int idle = n.IdleMilli();
  CountSlots(n, slots_before_);
  const double before = WasteOf(slots_before_, n.cpu_free, idle, n.model);
  const double remainder_before = Remainder(n);
  const int idle_after = idle - pod.RequestedMilli();
  const int cpu_after = n.cpu_free - pod.cpu_milli;
  // Score, in this order: growth of the priced remainder (hundredths of a
  // GPU), then of waste (tenths), less is better; then packing in 0..1000
  // (less idle GPU left scores higher).
  const int pack = (kMaxGpusPerNode * kMilliPerGpu - idle_after) / kMaxGpusPerNode;
  auto quantise = [](double milli, double quantum, std::int32_t limit) {
    return std::clamp(static_cast<std::int32_t>(std::lround(milli / quantum)), -limit, limit);
  };
  auto score = [&](std::uint8_t mask) {
    std::int16_t free_after[kMaxGpusPerNode];
    for (int g = 0; g < n.gpu_count; ++g) {
      free_after[g] = static_cast<std::int16_t>(n.gpu_free[g] - (((mask >> g) & 1u) ? pod.gpu_milli : 0));
    }
    const std::int32_t priced =
        quantise(RemainderOf(n.model, n.gpu_count, free_after, cpu_after, n.mem_free - pod.mem_mib) - remainder_before,
                 kPricedQuantumMilli, kPricedLimit);
    SlotsAfter(n, pod, mask);
    const std::int32_t waste =
        quantise(WasteOf(slots_after_, cpu_after, idle_after, n.model) - before, kWasteQuantumMilli, 511);
    return -priced * (1 << 20) + (511 - waste) * 1024 + pack;
  };
  if (!pod.fractional()) {
    const std::uint8_t mask = DefaultGpuChoice(n, pod);
    return NodeScore{score(mask), mask};
  }
  // GPUs with the same free milli give the same result: score each value once.
  NodeScore best{std::numeric_limits<std::int32_t>::min(), 0};
  std::int16_t seen[kMaxGpusPerNode];
  int seen_count = 0;
  for (int g = 0; g < n.gpu_count; ++g) {
    const std::int16_t free = n.gpu_free[g];
    if (free < pod.gpu_milli || std::find(seen, seen + seen_count, free) != seen + seen_count) continue;
    seen[seen_count++] = free;
    const auto mask = static_cast<std::uint8_t>(1u << g);
    const std::int32_t s = score(mask);
    if (s > best.score) best = NodeScore{s, mask};
  }
  return best;
}

}  // namespace septa::gpu
