// MIG re-layouts for isolated capacity. When no configured MIG instance of a
// requested profile is free, GPUs that run nothing may be given another
// layout (GPU-FACTS.md "Reconfiguration"): gpu::PlanMigLayouts chooses them
// (fewest GPUs reconfigured, never one whose instances are held; the slices
// the request leaves get the largest instances that fit, so the next request
// for them needs no re-layout), and each chosen GPU gets a layout target — a row written in the same transaction
// as the reservation of the new instances. While a target is pending the
// placement engine sees the GPU with its target layout, so the reservation
// is valid and a rebuild holds it; the MIG layout controller
// (services/reconcile) applies the targets through the GPU operator's
// `nvidia.com/mig.config` label.
//
// Only GPUs already in MIG mode are re-laid out: enabling MIG on a GPU in
// whole-GPU mode would change the node's mode mix (whole-GPU tenants share a
// node only with whole-GPU tenants), which the planner does not weigh.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/time_point.h"
#include "gpu/catalog.h"
#include "gpu/engine.h"
#include "gpu/mig_parted.h"
#include "tenancy/capacity.h"
#include "tenancy/condition.h"

namespace septa::tenancy {

// A GPU being re-laid out: the layout it is to have, and the name of its
// node's mig-parted config that gives it (the `nvidia.com/mig.config` value;
// every pending target of one node carries the same name).
struct MigLayoutTarget {
  std::string node;
  int gpu = 0;
  gpu::MigLayout layout;  // in creation order
  std::string mig_config;
  TimePoint requested_at{};
  bool operator==(const MigLayoutTarget&) const = default;
};

// What re-laying out free MIG GPUs would do for a MIG request.
struct MigRelayout {
  std::vector<MigLayoutTarget> targets;  // the GPUs to reconfigure (mig_config and time left empty)
  bool meets = false;                    // with them the whole request would fit
  std::vector<int> more_free;            // per request entry: instances of its profile it would add
};

// For an isolated request that PlaceCapacity refused on `engine`: the
// re-layout of MIG GPUs (of the request's models, on Ready nodes holding no
// whole GPU or node) that serves the request together with what is held
// already. An empty plan when nothing can be gained.
Result<MigRelayout> PlanMigRelayout(const gpu::PlacementEngine& engine, const gpu::Catalog& catalog,
                                    const Capacity& capacity);

// The shortfall of PlaceCapacity with each `capacity.mig[i]` violation told
// what the re-layout would add: "...; 3 more would be free after re-laying
// out h100-3 GPU 2 and 5, which run nothing".
Status WithRelayoutHint(const Status& shortfall, const MigRelayout& relayout);

// "h100-3 GPU 2 and 5, h100-4 GPU 1"
std::string DescribeTargets(const std::vector<MigLayoutTarget>& targets);

// The virtual cluster's CapacityReady condition once its capacity is
// reserved: True, or False (reason MigRelayout) while `relayout` is applied.
Condition CapacityReadyCondition(const std::vector<MigLayoutTarget>& relayout, std::int64_t generation);

// The nodes with each targeted GPU's layout replaced by its target, whose
// GPU-instance ids are not known until the GPU has it (none kept).
std::vector<gpu::InventoryNode> WithLayoutTargets(std::vector<gpu::InventoryNode> nodes,
                                                  const std::vector<MigLayoutTarget>& targets);

// The mig-parted config of `node` (as observed) once `targets` (the node's)
// are applied: one device group per layout of the node's MIG GPUs, GPUs not
// targeted keeping theirs. InvalidArgument for an unknown model.
Result<std::vector<gpu::MigDeviceGroup>> NodeMigConfig(const gpu::Catalog& catalog, const gpu::InventoryNode& node,
                                                       const std::vector<MigLayoutTarget>& targets);

// A label-safe name for the config, derived from the node, its content and
// when it was asked for: every re-layout gets a new name, which is what makes
// the GPU operator act (it reacts to a change of the label).
std::string MigConfigName(const std::string& node, const std::vector<gpu::MigDeviceGroup>& groups,
                          TimePoint requested_at);

// Whether the node's observed layouts are the targets' (order aside).
bool LayoutTargetsReached(const gpu::InventoryNode& node, const std::vector<MigLayoutTarget>& targets);

}  // namespace septa::tenancy
