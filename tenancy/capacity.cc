#include "tenancy/capacity.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <unordered_map>

#include "common/text.h"
#include "tenancy/virtual_cluster_ref.h"

namespace septa::tenancy {

namespace {

std::string Quoted(std::string_view text) { return "\"" + EscapeControlCharacters(text) + "\""; }

std::string KindPath(gpu::Tier kind) { return "capacity." + std::string(CapacityKindField(kind)); }

std::string_view KindDescription(gpu::Tier kind) {
  switch (kind) {
    case gpu::Tier::kShared: return "fractions of time-shared GPUs";
    case gpu::Tier::kIsolated: return "MIG instances";
    case gpu::Tier::kDedicated: return "whole GPUs";
    case gpu::Tier::kExclusive: return "whole nodes";
  }
  return "";
}

std::vector<std::string> ModelNames(const gpu::Catalog& catalog, bool mig_capable_only) {
  std::vector<std::string> names;
  for (const gpu::GpuModel& model : catalog.models()) {
    if (!mig_capable_only || model.mig_capable) names.push_back(model.name);
  }
  return names;
}

std::vector<std::string> ProfileNames(const gpu::GpuModel& model) {
  std::vector<std::string> names;
  for (const gpu::MigProfile& profile : model.mig_profiles) names.push_back(profile.name);
  return names;
}

// Every MIG profile name of the catalog, once, in order.
std::vector<std::string> AllProfileNames(const gpu::Catalog& catalog) {
  std::set<std::string> names;
  for (const gpu::GpuModel& model : catalog.models()) {
    if (model.mig_capable) {
      for (const gpu::MigProfile& profile : model.mig_profiles) names.insert(profile.name);
    }
  }
  return {names.begin(), names.end()};
}

Status CheckCount(const std::string& field, std::int64_t count, std::int64_t max) {
  if (count >= 1 && count <= max) return Status::Ok();
  return InvalidField(field, "must be between 1 and " + std::to_string(max) + ", got " + std::to_string(count));
}

// The catalog model a request names; INVALID_ARGUMENT naming `field` when unknown.
Result<const gpu::GpuModel*> FindModel(const gpu::Catalog& catalog, const std::string& field, const std::string& name,
                                       bool mig_capable_only) {
  const gpu::GpuModel* model = catalog.Find(name);
  const std::string choices = mig_capable_only ? "MIG-capable models: " : "known models: ";
  if (model == nullptr) {
    return InvalidField(field, "unknown GPU model " + Quoted(name) + "; " + choices +
                                   Join(ModelNames(catalog, mig_capable_only), ", "));
  }
  if (mig_capable_only && !model->mig_capable) {
    return InvalidField(field, model->name + " is not MIG-capable; " + choices + Join(ModelNames(catalog, true), ", "));
  }
  return model;
}

Status ValidateShared(const Capacity& capacity) {
  if (capacity.milli_gpu <= 0 && capacity.gpu_memory_mib != 0) {
    return InvalidField("capacity.shared.milli_gpu",
                        "is required with gpu_memory_mib: a share of GPU memory comes "
                        "with a share of GPU time");
  }
  SEPTA_RETURN_IF_ERROR(CheckCount("capacity.shared.milli_gpu", capacity.milli_gpu, kMaxSharedMilliGpu));
  if (capacity.gpu_memory_mib < 0 || capacity.gpu_memory_mib > kMaxSharedGpuMemoryMib) {
    return InvalidField("capacity.shared.gpu_memory_mib", "must be between 0 and " +
                                                              std::to_string(kMaxSharedGpuMemoryMib) + ", got " +
                                                              std::to_string(capacity.gpu_memory_mib));
  }
  return Status::Ok();
}

Status ValidateMig(const Capacity& capacity, const gpu::Catalog& catalog) {
  if (capacity.mig.size() > static_cast<std::size_t>(kMaxMigEntries)) {
    return InvalidField("capacity.mig", "must have at most " + std::to_string(kMaxMigEntries) + " entries, got " +
                                            std::to_string(capacity.mig.size()));
  }
  std::map<std::pair<std::string, std::string>, std::size_t> seen;  // (profile, model) → first entry
  for (std::size_t i = 0; i < capacity.mig.size(); ++i) {
    const MigCapacity& entry = capacity.mig[i];
    const std::string path = "capacity.mig[" + std::to_string(i) + "]";
    if (entry.profile.empty()) return InvalidField(path + ".profile", "is required");
    if (!entry.model.empty()) {
      auto model = FindModel(catalog, path + ".model", entry.model, /*mig_capable_only=*/true);
      SEPTA_RETURN_IF_ERROR(model);
      if ((*model)->FindProfile(entry.profile) == nullptr) {
        return InvalidField(path + ".profile", (*model)->name + " has no MIG profile " + Quoted(entry.profile) +
                                                   "; its profiles: " + Join(ProfileNames(**model), ", "));
      }
    } else {
      const std::vector<std::string> known = AllProfileNames(catalog);
      if (!std::binary_search(known.begin(), known.end(), entry.profile)) {
        return InvalidField(path + ".profile",
                            "unknown MIG profile " + Quoted(entry.profile) + "; known profiles: " + Join(known, ", "));
      }
    }
    SEPTA_RETURN_IF_ERROR(CheckCount(path + ".count", entry.count, kMaxMigInstances));
    auto [first, inserted] = seen.emplace(std::make_pair(entry.profile, entry.model), i);
    if (!inserted) {
      return InvalidField(path, "repeats capacity.mig[" + std::to_string(first->second) + "] (" +
                                    EscapeControlCharacters(entry.profile) +
                                    (entry.model.empty() ? "" : " on " + entry.model) +
                                    "); ask for the total count in one entry");
    }
  }
  return Status::Ok();
}

Status ValidateWhole(const Capacity& capacity, const gpu::Catalog& catalog) {
  const std::string path = KindPath(capacity.tier);
  if (!capacity.model.empty()) {
    SEPTA_RETURN_IF_ERROR(FindModel(catalog, path + ".model", capacity.model, /*mig_capable_only=*/false));
  }
  const int max = capacity.tier == gpu::Tier::kExclusive ? kMaxNodes : kMaxGpus;
  return CheckCount(path + ".count", capacity.count, max);
}

bool SetsShared(const Capacity& c) { return c.milli_gpu != 0 || c.gpu_memory_mib != 0; }
bool SetsMig(const Capacity& c) { return !c.mig.empty(); }
bool SetsWhole(const Capacity& c) { return !c.model.empty() || c.count != 0; }

// Exact sums of fractions of 1000 (MIG shares have denominators 7 or 4).
class MilliSum {
 public:
  void Add(std::int64_t numerator, std::int64_t denominator) {
    const std::int64_t common = std::lcm(denominator_, denominator);
    numerator_ = numerator_ * (common / denominator_) + numerator * (common / denominator);
    denominator_ = common;
  }
  void AddWhole(std::int64_t milli) { Add(milli, 1); }
  std::int64_t RoundedUp() const { return (numerator_ + denominator_ - 1) / denominator_; }

 private:
  std::int64_t numerator_ = 0;
  std::int64_t denominator_ = 1;
};

// `count` instances of `profile` on `model`, in milli GPU-equivalents.
void AddMig(MilliSum& sum, const gpu::GpuModel& model, const gpu::MigProfile& profile, std::int64_t count) {
  sum.Add(count * profile.compute_slices * 1000, model.compute_slices);
}

bool NodeIsOfModel(const gpu::InventoryNode& node, std::string_view model) {
  if (node.gpus.empty()) return false;
  return model.empty() || std::all_of(node.gpus.begin(), node.gpus.end(),
                                      [&](const gpu::InventoryGpu& gpu) { return gpu.model == model; });
}

}  // namespace

std::string_view CapacityKindField(gpu::Tier tier) {
  switch (tier) {
    case gpu::Tier::kShared: return "shared";
    case gpu::Tier::kIsolated: return "mig";
    case gpu::Tier::kDedicated: return "gpus";
    case gpu::Tier::kExclusive: return "nodes";
  }
  return "";
}

Status ValidateCapacity(const Capacity& capacity, gpu::Tier tier, const gpu::Catalog& catalog) {
  const int kinds_set = int{SetsShared(capacity)} + int{SetsMig(capacity)} + int{SetsWhole(capacity)};
  const std::string allowed = KindPath(tier) + " (" + std::string(KindDescription(tier)) + ")";
  if (kinds_set == 0) {
    return InvalidField("capacity",
                        "is required; the tenant's " + std::string(gpu::TierName(tier)) + " tier holds " + allowed);
  }
  const bool consistent =
      (capacity.tier == gpu::Tier::kShared && SetsShared(capacity)) ||
      (capacity.tier == gpu::Tier::kIsolated && SetsMig(capacity)) ||
      ((capacity.tier == gpu::Tier::kDedicated || capacity.tier == gpu::Tier::kExclusive) && SetsWhole(capacity));
  if (kinds_set > 1 || !consistent) {
    return InvalidField("capacity", "must set exactly one of shared, mig, gpus or nodes");
  }
  if (capacity.tier != tier) {
    return FieldError(Code::kFailedPrecondition, KindPath(capacity.tier),
                      "the tenant's " + std::string(gpu::TierName(tier)) + " tier does not hold " +
                          std::string(KindDescription(capacity.tier)) + "; it holds " + allowed + " only");
  }
  switch (capacity.tier) {
    case gpu::Tier::kShared: return ValidateShared(capacity);
    case gpu::Tier::kIsolated: return ValidateMig(capacity, catalog);
    case gpu::Tier::kDedicated:
    case gpu::Tier::kExclusive: return ValidateWhole(capacity, catalog);
  }
  return Status::Ok();
}

Result<std::int64_t> CapacityGpuMilli(const Capacity& capacity, const gpu::Catalog& catalog,
                                      const std::vector<gpu::InventoryNode>& nodes) {
  switch (capacity.tier) {
    case gpu::Tier::kShared: return std::int64_t{capacity.milli_gpu};
    case gpu::Tier::kDedicated: return std::int64_t{capacity.count} * 1000;
    case gpu::Tier::kExclusive: {
      std::int64_t most = 0;
      for (const gpu::InventoryNode& node : nodes) {
        if (NodeIsOfModel(node, capacity.model)) most = std::max<std::int64_t>(most, node.gpus.size());
      }
      return std::int64_t{capacity.count} * most * 1000;
    }
    case gpu::Tier::kIsolated: break;
  }
  MilliSum sum;
  for (std::size_t i = 0; i < capacity.mig.size(); ++i) {
    const MigCapacity& entry = capacity.mig[i];
    // The model on which one instance is the largest share of its GPU.
    const gpu::GpuModel* charged = nullptr;
    const gpu::MigProfile* charged_profile = nullptr;
    for (const gpu::GpuModel& model : catalog.models()) {
      if (!model.mig_capable || (!entry.model.empty() && model.name != entry.model)) continue;
      const gpu::MigProfile* profile = model.FindProfile(entry.profile);
      if (profile == nullptr) continue;
      if (charged == nullptr || std::int64_t{profile->compute_slices} * charged->compute_slices >
                                    std::int64_t{charged_profile->compute_slices} * model.compute_slices) {
        charged = &model;
        charged_profile = profile;
      }
    }
    if (charged == nullptr) {
      return InvalidField("capacity.mig[" + std::to_string(i) + "].profile",
                          "no GPU model of the catalog has MIG profile " + Quoted(entry.profile) +
                              (entry.model.empty() ? "" : " on " + Quoted(entry.model)));
    }
    AddMig(sum, *charged, *charged_profile, entry.count);
  }
  return sum.RoundedUp();
}

Result<std::int64_t> ReservationGpuMilli(const Reservation& reservation, const gpu::Catalog& catalog,
                                         const std::vector<gpu::InventoryNode>& nodes) {
  std::unordered_map<std::string_view, const gpu::InventoryNode*> by_name;
  for (const gpu::InventoryNode& node : nodes) by_name.emplace(node.name, &node);
  const std::string owner = "reservation of " + tenancy::VirtualClusterText(reservation.tenant, reservation.vcluster);
  const auto find_node = [&](const std::string& name) -> Result<const gpu::InventoryNode*> {
    auto it = by_name.find(name);
    if (it == by_name.end()) return NotFound(owner + ": node " + Quoted(name) + " is not in the inventory");
    return it->second;
  };

  MilliSum sum;
  for (const ReservedShare& share : reservation.shares) sum.AddWhole(share.milli_gpu);
  sum.AddWhole(std::int64_t{1000} * static_cast<std::int64_t>(reservation.gpus.size()));
  for (const std::string& name : reservation.nodes) {
    auto node = find_node(name);
    SEPTA_RETURN_IF_ERROR(node);
    sum.AddWhole(std::int64_t{1000} * static_cast<std::int64_t>((*node)->gpus.size()));
  }
  for (const ReservedMig& instance : reservation.mig) {
    auto node = find_node(instance.node);
    SEPTA_RETURN_IF_ERROR(node);
    const auto& gpus = (*node)->gpus;
    auto gpu =
        std::find_if(gpus.begin(), gpus.end(), [&](const gpu::InventoryGpu& g) { return g.index == instance.gpu; });
    if (gpu == gpus.end()) {
      return NotFound(owner + ": node " + Quoted(instance.node) + " has no GPU " + std::to_string(instance.gpu));
    }
    const gpu::GpuModel* model = catalog.Find(gpu->model);
    const gpu::MigProfile* profile = model == nullptr ? nullptr : model->FindProfile(instance.profile);
    if (profile == nullptr || model->compute_slices <= 0) {
      return NotFound(owner + ": GPU " + std::to_string(instance.gpu) + " of node " + Quoted(instance.node) + " (" +
                      EscapeControlCharacters(gpu->model) + ") has no MIG profile " + Quoted(instance.profile) +
                      " in the catalog");
    }
    AddMig(sum, *model, *profile, 1);
  }
  return sum.RoundedUp();
}

std::string FormatMilli(std::int64_t milli) {
  const bool negative = milli < 0;
  const std::int64_t magnitude = negative ? -milli : milli;
  std::string fraction = std::to_string(magnitude % 1000);
  fraction.insert(0, 3 - fraction.size(), '0');
  return (negative ? "-" : "") + std::to_string(magnitude / 1000) + "." + fraction;
}

}  // namespace septa::tenancy
