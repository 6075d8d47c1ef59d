#include "tenancy/usage/gpu_identity.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

namespace septa::tenancy::usage {

std::vector<DcgmGpuRef> GpuRefsOf(const std::vector<DcgmSample>& samples) {
  std::vector<DcgmGpuRef> refs;
  for (const DcgmSample& sample : samples) {
    if (std::find(refs.begin(), refs.end(), sample.gpu) == refs.end()) refs.push_back(sample.gpu);
  }
  return refs;
}

LearntIdentities CompleteGpuIdentities(gpu::InventoryNode& node, const std::vector<DcgmGpuRef>& refs,
                                       const gpu::Catalog& catalog) {
  LearntIdentities learnt;
  std::map<int, std::set<std::string>> uuids;                  // by NVML index
  std::map<int, std::map<std::string, std::set<int>>> gi_ids;  // by index, then profile
  for (const DcgmGpuRef& ref : refs) {
    if (ref.node != node.name || ref.index < 0) continue;
    if (!ref.uuid.empty()) uuids[ref.index].insert(ref.uuid);
    if (ref.gi_id && !ref.mig_profile.empty()) gi_ids[ref.index][ref.mig_profile].insert(*ref.gi_id);
  }
  for (gpu::InventoryGpu& gpu : node.gpus) {
    if (gpu.uuid.empty()) {
      if (auto it = uuids.find(gpu.index); it != uuids.end()) {
        if (it->second.size() == 1) {
          gpu.uuid = *it->second.begin();
          ++learnt.uuids;
        } else {
          ++learnt.ambiguous;
        }
      }
    }
    if (!gpu.mig_enabled || !gpu.mig_gi_ids.empty() || gpu.mig_layout.empty()) continue;
    const gpu::GpuModel* model = catalog.Find(gpu.model);
    const auto shown = gi_ids.find(gpu.index);
    if (model == nullptr || shown == gi_ids.end()) continue;
    std::map<int, int> per_profile;  // profile index -> instances in the layout
    for (const gpu::MigInstance& instance : gpu.mig_layout) ++per_profile[instance.profile];
    for (const gpu::MigInstance& instance : gpu.mig_layout) {
      if (instance.profile < 0 || instance.profile >= static_cast<int>(model->mig_profiles.size())) continue;
      const auto ids = shown->second.find(model->mig_profiles[instance.profile].name);
      if (ids == shown->second.end()) continue;
      if (per_profile[instance.profile] != 1 || ids->second.size() != 1) {
        ++learnt.ambiguous;
        continue;
      }
      gpu.mig_gi_ids[instance.start] = *ids->second.begin();
      ++learnt.gi_ids;
    }
  }
  return learnt;
}

}  // namespace septa::tenancy::usage
