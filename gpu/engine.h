// The placement engine of the tenant-facing control plane: places capacity by
// trust tier and returns exactly what it took on release.
//   shared    — a milli-GPU fraction on a time-shared GPU holding only shared fractions
//   isolated  — a configured MIG instance; a MIG GPU may hold several tenants' slices
//   dedicated — whole GPUs, on nodes where others hold only whole GPUs too
//   exclusive — a whole node nobody else touches
// Node choice for fractions and whole GPUs goes through a placement policy
// (septa by default); refusals say which constraint failed on how many nodes.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "gpu/catalog.h"
#include "gpu/inventory.h"
#include "gpu/policy.h"

namespace septa::gpu {

struct PlacementRequest {
  std::string tenant;
  Tier tier = Tier::kShared;
  int cpu_milli = 0;
  int memory_mib = 0;
  int gpu_count = 1;
  int milli_gpu = 1000;             // per GPU; below 1000 only for a shared fraction
  std::string mig_profile;          // isolated tier: e.g. "3g.40gb"
  std::vector<std::string> models;  // acceptable canonical models; empty = any
  std::vector<Taint> tolerations;   // an empty value tolerates any value of the key
};

struct Placement {
  std::uint64_t allocation_id = 0;
  int node = -1;
  std::string node_name;
  std::vector<int> gpus;
  std::vector<std::string> gpu_uuids;
  int mig_start = -1;  // MIG: memory slices [mig_start, mig_start + mig_slices)
  int mig_slices = 0;
};

// A placement made earlier and recorded (a reservation row), to take again
// when the engine is rebuilt from the record.
struct RecordedPlacement {
  std::string tenant;
  Tier tier = Tier::kShared;
  std::string node;
  std::vector<int> gpus;    // indices on the node; exclusive: empty takes them all
  int milli_gpu = 0;        // shared: the fraction
  std::string mig_profile;  // isolated: the instance's profile and first memory slice
  int mig_start = -1;
};

class PlacementEngine {
 public:
  // Fails on an unknown model, a bad MIG layout or more than 8 GPUs per node.
  static Result<std::unique_ptr<PlacementEngine>> Create(std::vector<InventoryNode> nodes, const Catalog& catalog,
                                                         std::string_view policy = "septa",
                                                         const WorkloadModel& workload = {});

  // A placement, or ResourceExhausted / InvalidArgument whose violations list
  // each failed constraint ("cpu", "memory", "gpu", "model", "taint", "tier",
  // "mig") with the number of nodes it ruled out.
  Result<Placement> Place(const PlacementRequest& request);
  // Gives back exactly what the allocation took.
  Status Release(std::uint64_t allocation_id);
  // Takes a recorded placement again, exactly where it was. Unlike Place it
  // does not ask for a healthy node (what is held on a node that went
  // NotReady stays held); FailedPrecondition when the record conflicts with
  // what the engine holds or no longer matches the inventory (a GPU or MIG
  // instance that is not there), NotFound for an unknown node.
  Result<Placement> Hold(const RecordedPlacement& recorded);

  const std::vector<InventoryNode>& nodes() const { return nodes_; }
  const std::map<std::uint64_t, Allocation>& allocations() const { return allocations_; }
  GpuMode Mode(int node, int gpu) const;
  int FreeCpu(int node) const { return state_[node].cpu_free; }
  int FreeMemory(int node) const { return state_[node].mem_free; }
  int FreeMilli(int node, int gpu) const { return state_[node].gpus[gpu].free_milli; }

 private:
  struct GpuState {
    int free_milli = kMilliPerGpu;
    int fractions = 0;           // shared allocations on it
    std::uint32_t mig_used = 0;  // bit i: configured instance i allocated
  };
  struct NodeRuntime {
    int cpu_free = 0;
    int mem_free = 0;
    int dedicated = 0;      // whole-GPU allocations
    int shared_or_mig = 0;  // fraction and MIG allocations
    std::string exclusive_tenant;
    std::vector<GpuState> gpus;
  };
  PlacementEngine(std::vector<InventoryNode> nodes, const Catalog& catalog);

  // Why `recorded` cannot be held on `node`, or "" when it can; fills `a`.
  std::string HoldRejects(int node, const RecordedPlacement& recorded, Allocation& a) const;
  // The first constraint the node fails for the request, or nullptr.
  const char* NodeRejects(int node, const PlacementRequest& request, std::uint32_t model_mask) const;
  void RefreshView(int node);
  Result<Placement> Commit(Allocation allocation);
  Status Refuse(const PlacementRequest& request, std::uint32_t model_mask) const;

  std::vector<InventoryNode> nodes_;
  const Catalog& catalog_;
  std::vector<const GpuModel*> gpu_models_;  // model index -> catalog entry
  std::vector<NodeRuntime> state_;
  // What fractions and whole GPUs can use on each node, for the policies.
  ClusterState shared_view_, whole_view_;
  std::unique_ptr<Policy> shared_policy_, whole_policy_;
  std::map<std::uint64_t, Allocation> allocations_;
  std::uint64_t next_id_ = 1;
  std::map<std::tuple<int, int, int, int, std::uint32_t>, int> shape_ids_;
};

}  // namespace septa::gpu
