// The inventory the placement engine works on: nodes (cpu, memory, labels,
// taints), their GPUs (model, index, UUID, MIG layout when MIG is enabled) and
// the allocations made on them, by tenant and trust tier (DESIGN.md §2).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/mig_geometry.h"

namespace septa::gpu {

// The isolation class of a trust tier (DESIGN.md §2), the one tier type of
// the code base: trust tiers are named records that each map onto one.
enum class Tier { kShared, kIsolated, kDedicated, kExclusive };
std::string_view TierName(Tier tier);                     // "shared", "isolated", ...
std::optional<Tier> TierFromName(std::string_view name);  // TierName's inverse

// A GPU is in exactly one mode at a time. MIG is configured (the planner
// changes it); whole and time-shared follow from what runs on a non-MIG GPU.
enum class GpuMode { kFree, kWhole, kTimeShared, kMig };
std::string_view GpuModeName(GpuMode mode);

struct Taint {
  std::string key;
  std::string value;
  std::string effect;  // NoSchedule, PreferNoSchedule, NoExecute
  bool operator==(const Taint&) const = default;
};

struct InventoryGpu {
  std::string model;  // catalog canonical name
  int index = 0;
  std::string uuid;
  bool mig_enabled = false;
  MigLayout mig_layout;  // configured GPU instances when MIG is enabled
  // Usage attribution reads dcgm-exporter's series by GPU-instance id (DCGM's
  // GPU_I_ID), which shows no placement, while reservations key MIG instances
  // by placement: this maps one to the other for the instances of mig_layout.
  // Known where the node tells it (kubesim's identity annotation); on a real
  // cluster the usage accounting learns what it can from the exporter's
  // series (tenancy/usage/gpu_identity.h), never stored here.
  std::map<int, int> mig_gi_ids{};  // first memory slice -> GPU-instance id, as observed; empty when not known
};

// What the host cluster last said of a node. Septa never places on a node
// that is not kReady, and keeps a node that went away (kGone) while anything
// is reserved on it, so the reservation stays visible.
enum class NodeHealth { kReady, kNotReady, kGone };
std::string_view NodeHealthName(NodeHealth health);  // "Ready", "NotReady", "Gone"

struct InventoryNode {
  std::string name;
  int cpu_milli = 0;
  int memory_mib = 0;
  std::map<std::string, std::string> labels;
  std::vector<Taint> taints;
  std::vector<InventoryGpu> gpus;
  std::string mig_config;        // the node's nvidia.com/mig.config label (a mig-parted layout name)
  std::string mig_config_state;  // nvidia.com/mig.config.state: pending, rebooting, success, failed
  NodeHealth health = NodeHealth::kReady;
};

enum class AllocationKind { kFractional, kWholeGpus, kMigSlice, kExclusiveNode };

struct Allocation {
  std::uint64_t id = 0;
  std::string tenant;
  Tier tier = Tier::kShared;
  AllocationKind kind = AllocationKind::kFractional;
  int node = -1;
  std::vector<int> gpus;  // GPU indices on the node
  int milli_gpu = 0;      // per GPU
  int cpu_milli = 0;
  int memory_mib = 0;
  int mig_instance = -1;  // index into the GPU's mig_layout
  int mig_start = -1;     // first memory slice
  int mig_slices = 0;     // memory slices taken
  std::string mig_profile;
};

}  // namespace septa::gpu
