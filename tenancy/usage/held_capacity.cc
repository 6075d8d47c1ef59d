#include "tenancy/usage/held_capacity.h"

#include <algorithm>

#include "common/text.h"
#include "tenancy/virtual_cluster_ref.h"

namespace septa::tenancy::usage {

namespace held_capacity_internal {
namespace {

std::string QuotedName(const std::string& name) { return "\"" + EscapeControlCharacters(name) + "\""; }

class Resolver {
 public:
  Resolver(const Reservation& reservation, const std::vector<gpu::InventoryNode>& nodes, const gpu::Catalog& catalog)
      : owner_("reservation of " + VirtualClusterText(reservation.tenant, reservation.vcluster)),
        nodes_(nodes),
        catalog_(catalog) {}

  Result<const gpu::InventoryNode*> Node(const std::string& name) const {
    for (const auto& node : nodes_) {
      if (node.name == name) return &node;
    }
    return NotFound(owner_ + ": node " + QuotedName(name) + " is not in the inventory");
  }

  Result<const gpu::InventoryGpu*> Gpu(const std::string& node_name, int index) const {
    SEPTA_ASSIGN_OR_RETURN(const gpu::InventoryNode* node, Node(node_name));
    for (const auto& gpu : node->gpus) {
      if (gpu.index == index) return Known(node_name, gpu);
    }
    return NotFound(owner_ + ": node " + QuotedName(node_name) + " has no GPU " + std::to_string(index));
  }

  Result<const gpu::InventoryGpu*> Known(const std::string& node_name, const gpu::InventoryGpu& gpu) const {
    if (gpu.uuid.empty()) {
      return FailedPrecondition(owner_ + ": GPU " + std::to_string(gpu.index) + " of node " + QuotedName(node_name) +
                                " has no UUID observed, so no series can be matched to it");
    }
    return &gpu;
  }

  Result<const gpu::GpuModel*> Model(const std::string& node_name, const gpu::InventoryGpu& gpu) const {
    const gpu::GpuModel* model = catalog_.Find(gpu.model);
    if (model == nullptr) {
      return NotFound(owner_ + ": GPU " + std::to_string(gpu.index) + " of node " + QuotedName(node_name) +
                      " is of model " + QuotedName(gpu.model) + ", which the catalog lacks");
    }
    return model;
  }

  const std::string& owner() const { return owner_; }

 private:
  std::string owner_;
  const std::vector<gpu::InventoryNode>& nodes_;
  const gpu::Catalog& catalog_;
};

}  // namespace
}  // namespace held_capacity_internal

Result<std::vector<HeldEntity>> HeldEntities(const Reservation& reservation,
                                             const std::vector<gpu::InventoryNode>& nodes, const gpu::Catalog& catalog,
                                             const std::vector<MigInstanceId>& gi_ids, const TimeRange& held,
                                             const std::string& host_namespace) {
  using held_capacity_internal::QuotedName;
  const held_capacity_internal::Resolver resolve(reservation, nodes, catalog);
  const Holder holder{.tenant = reservation.tenant, .vcluster = reservation.vcluster, .tier = reservation.tier};
  std::vector<HeldEntity> out;
  const auto base = [&](HeldKind kind, const std::string& node, const gpu::InventoryGpu& gpu) {
    return HeldEntity{.holder = holder,
                      .kind = kind,
                      .node = node,
                      .gpu_uuid = gpu.uuid,
                      .gpu_index = gpu.index,
                      .gi_id = -1,
                      .mig_profile = "",
                      .milli_gpu = 0,
                      .weight = 0,
                      .reserved_memory_mib = 0,
                      .host_namespace = host_namespace,
                      .held = held,
                      .pods_running = std::nullopt};
  };
  const auto whole = [&](const std::string& node, const gpu::InventoryGpu& gpu) -> Status {
    SEPTA_ASSIGN_OR_RETURN(const gpu::GpuModel* model, resolve.Model(node, gpu));
    HeldEntity entity = base(HeldKind::kWholeGpu, node, gpu);
    entity.weight = 1;
    entity.reserved_memory_mib = model->memory_mib;
    out.push_back(std::move(entity));
    return Status::Ok();
  };

  for (const ReservedGpu& reserved : reservation.gpus) {
    SEPTA_ASSIGN_OR_RETURN(const gpu::InventoryGpu* gpu, resolve.Gpu(reserved.node, reserved.gpu));
    SEPTA_RETURN_IF_ERROR(whole(reserved.node, *gpu));
  }
  for (const std::string& node_name : reservation.nodes) {
    SEPTA_ASSIGN_OR_RETURN(const gpu::InventoryNode* node, resolve.Node(node_name));
    for (const auto& gpu : node->gpus) {
      SEPTA_ASSIGN_OR_RETURN(const gpu::InventoryGpu* known, resolve.Known(node_name, gpu));
      SEPTA_RETURN_IF_ERROR(whole(node_name, *known));
    }
  }
  for (const ReservedMig& instance : reservation.mig) {
    SEPTA_ASSIGN_OR_RETURN(const gpu::InventoryGpu* gpu, resolve.Gpu(instance.node, instance.gpu));
    SEPTA_ASSIGN_OR_RETURN(const gpu::GpuModel* model, resolve.Model(instance.node, *gpu));
    const gpu::MigProfile* profile = model->FindProfile(instance.profile);
    if (profile == nullptr || model->compute_slices <= 0) {
      return NotFound(resolve.owner() + ": " + QuotedName(gpu->model) + " has no MIG profile " +
                      QuotedName(instance.profile) + " in the catalog");
    }
    const auto id = std::find_if(gi_ids.begin(), gi_ids.end(), [&](const MigInstanceId& known) {
      return known.node == instance.node && known.gpu == instance.gpu && known.start == instance.start;
    });
    if (id == gi_ids.end() || id->gi_id < 0) {
      return FailedPrecondition(resolve.owner() + ": the " + instance.profile + " instance at slice " +
                                std::to_string(instance.start) + " of GPU " + std::to_string(instance.gpu) +
                                " of node " + QuotedName(instance.node) +
                                " has no GPU-instance id observed, so no series can be matched to it");
    }
    HeldEntity entity = base(HeldKind::kMigInstance, instance.node, *gpu);
    entity.gi_id = id->gi_id;
    entity.mig_profile = instance.profile;
    entity.weight = static_cast<double>(profile->compute_slices) / model->compute_slices;
    entity.reserved_memory_mib = profile->memory_mib;
    out.push_back(std::move(entity));
  }
  for (const ReservedShare& share : reservation.shares) {
    SEPTA_ASSIGN_OR_RETURN(const gpu::InventoryGpu* gpu, resolve.Gpu(share.node, share.gpu));
    SEPTA_ASSIGN_OR_RETURN(const gpu::GpuModel* model, resolve.Model(share.node, *gpu));
    HeldEntity entity = base(HeldKind::kShare, share.node, *gpu);
    entity.milli_gpu = share.milli_gpu;
    entity.weight = share.milli_gpu / 1000.0;
    entity.reserved_memory_mib =
        share.gpu_memory_mib > 0 ? static_cast<double>(share.gpu_memory_mib) : model->memory_mib * entity.weight;
    out.push_back(std::move(entity));
  }
  return out;
}

}  // namespace septa::tenancy::usage
