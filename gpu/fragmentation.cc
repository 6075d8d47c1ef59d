#include "gpu/fragmentation.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace septa::gpu {

WorkloadModel LearnWorkload(const std::vector<PodShape>& pods, double coverage) {
  using Key = std::tuple<std::int32_t, std::int16_t, std::int16_t, std::uint32_t>;
  std::map<Key, std::pair<int, std::map<std::int32_t, int>>> counts;  // count, memory histogram
  for (const PodShape& p : pods) {
    auto& entry = counts[Key{p.cpu_milli, p.gpu_milli, p.num_gpu, p.num_gpu == 0 ? kAnyModel : p.model_mask}];
    ++entry.first;
    ++entry.second[p.mem_mib];
  }
  WorkloadModel model;
  for (const auto& [key, entry] : counts) {
    WorkloadClass c;
    std::tie(c.cpu_milli, c.gpu_milli, c.num_gpu, c.model_mask) = key;
    c.pod_count = entry.first;
    c.mem_mib = std::max_element(entry.second.begin(), entry.second.end(), [](const auto& a, const auto& b) {
                  return a.second < b.second;
                })->first;
    model.classes.push_back(c);
  }
  // Most popular first; the key order (map order) breaks ties deterministically.
  std::stable_sort(model.classes.begin(), model.classes.end(),
                   [](const WorkloadClass& a, const WorkloadClass& b) { return a.pod_count > b.pod_count; });
  const double wanted = coverage * static_cast<double>(pods.size());
  double covered = 0;
  std::size_t keep = 0;
  while (keep < model.classes.size() && covered < wanted) covered += model.classes[keep++].pod_count;
  model.classes.resize(keep);
  for (WorkloadClass& c : model.classes) c.frequency = c.pod_count / covered;
  return model;
}

bool ClassFits(const NodeState& node, const WorkloadClass& m) {
  if (node.cpu_free < m.cpu_milli || !((m.model_mask >> node.model) & 1u)) return false;
  if (m.num_gpu == 1 && m.gpu_milli < kMilliPerGpu) {
    for (int g = 0; g < node.gpu_count; ++g) {
      if (node.gpu_free[g] >= m.gpu_milli) return true;
    }
    return false;
  }
  return node.FullyFreeGpus() >= m.num_gpu;
}

int ClassFragmentation(const NodeState& node, const WorkloadClass& m) {
  if (m.num_gpu == 0 || !ClassFits(node, m)) return node.IdleMilli();
  const int need = m.PerGpuNeed();
  int stranded = 0;
  for (int g = 0; g < node.gpu_count; ++g) {
    if (node.gpu_free[g] < need) stranded += node.gpu_free[g];
  }
  return stranded;
}

double NodeFragmentation(const NodeState& node, const WorkloadModel& workload) {
  double f = 0;
  for (const WorkloadClass& m : workload.classes) f += m.frequency * ClassFragmentation(node, m);
  return f;
}

}  // namespace septa::gpu
