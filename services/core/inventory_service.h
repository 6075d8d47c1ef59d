// The GPU inventory as admins read it: every stored node and GPU with its
// MIG layout, and who holds what (the reservations joined to the nodes and
// GPUs they name, in memory, from one snapshot).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "gpu/inventory.h"
#include "services/core/auth.h"
#include "services/core/store.h"

namespace septa::core {

// A tenant's virtual cluster holding capacity.
struct Holder {
  std::string tenant;
  std::string vcluster;
  bool releasing = false;  // deleted; held until the provisioner reports nothing runs on it
  bool operator==(const Holder&) const = default;
};

struct HeldMigInstance {
  std::string profile;  // "3g.40gb"; the placement's own name when the GPU's model lacks it
  int start = 0;
  int slices = 0;
  std::optional<Holder> holder;  // none: free
  bool operator==(const HeldMigInstance&) const = default;
};

struct HeldShare {
  Holder holder;
  int milli_gpu = 0;
  std::int64_t gpu_memory_mib = 0;
  bool operator==(const HeldShare&) const = default;
};

struct HeldGpu {
  gpu::InventoryGpu gpu;                   // mig_layout as stored
  std::vector<HeldMigInstance> instances;  // the layout's, by start, and reserved ones the layout lacks yet
  std::optional<Holder> holder;            // the whole GPU
  std::vector<HeldShare> shares;
};

struct HeldNode {
  gpu::InventoryNode node;  // gpus: see `gpus`
  std::vector<HeldGpu> gpus;
  std::optional<Holder> holder;  // the whole node
  // False while a MIG re-layout is under way (nvidia.com/mig.config.state
  // pending, rebooting or failed): the layouts are the last ones known.
  bool layout_settled = true;
};

struct InventoryPage {
  std::vector<HeldNode> nodes;  // ordered by name
  std::string next_page_token;  // empty on the last page
};

struct FreeCapacity;

class InventoryService {
 public:
  static constexpr int kDefaultPageSize = 1000;
  static constexpr int kMaxPageSize = 1000;

  explicit InventoryService(Store& store) : store_(store) {}

  // Admins only (kPermissionDenied otherwise). page_size 0 means the
  // default; 1..1000 otherwise (kInvalidArgument naming page_size);
  // page_token as returned (kInvalidArgument naming page_token).
  Result<InventoryPage> ListNodes(const RequestContext& ctx, int page_size, const std::string& page_token);
  // What a new virtual cluster of `tenant` could get now, in its trust
  // tier's kind (free_capacity.h). The tenant's principals and admins;
  // others get kNotFound.
  Result<FreeCapacity> FreeFor(const RequestContext& ctx, const std::string& tenant);
  // The same for each kind of GPU sharing (shared, isolated, dedicated,
  // exclusive). Admins only.
  Result<std::vector<FreeCapacity>> FreeForEveryTier(const RequestContext& ctx);

 private:
  Store& store_;
};

}  // namespace septa::core
