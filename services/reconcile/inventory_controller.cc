#include "services/reconcile/inventory_controller.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

#include "services/kube/resources.h"
#include "services/reconcile/informer_trigger.h"
#include "services/reconcile/node_observation.h"

namespace septa::reconcile {

namespace {

using kube::kNodes;

bool SameGpu(const gpu::InventoryGpu& a, const gpu::InventoryGpu& b) {
  return a.model == b.model && a.index == b.index && a.uuid == b.uuid && a.mig_enabled == b.mig_enabled &&
         a.mig_layout == b.mig_layout && a.mig_gi_ids == b.mig_gi_ids;
}

bool SameNode(const gpu::InventoryNode& a, const gpu::InventoryNode& b) {
  return a.name == b.name && a.cpu_milli == b.cpu_milli && a.memory_mib == b.memory_mib && a.labels == b.labels &&
         a.taints == b.taints && a.mig_config == b.mig_config && a.mig_config_state == b.mig_config_state &&
         a.health == b.health && std::ranges::equal(a.gpus, b.gpus, SameGpu);
}

// The store keeps GPUs by index and MIG instances by start slice.
void Canonicalize(gpu::InventoryNode& node) {
  std::ranges::sort(node.gpus, {}, &gpu::InventoryGpu::index);
  for (auto& g : node.gpus) std::ranges::sort(g.mig_layout, {}, &gpu::MigInstance::start);
}

// While a re-layout is under way the GPUs' layout is the one stored last.
void KeepStoredLayouts(gpu::InventoryNode& node, const gpu::InventoryNode* stored) {
  if (!stored) return;
  for (auto& g : node.gpus) {
    auto it = std::ranges::find(stored->gpus, g.index, &gpu::InventoryGpu::index);
    if (it == stored->gpus.end() || it->model != g.model) continue;
    g.mig_enabled = it->mig_enabled;
    g.mig_layout = it->mig_layout;
    g.mig_gi_ids = it->mig_gi_ids;
  }
}

}  // namespace

InventoryController::InventoryController(InventoryControllerOptions options, core::Store& store, kube::Client& host,
                                         const gpu::Catalog& catalog, const gpu::MigPartedConfig& mig_configs,
                                         const Clock& clock, prometheus::Registry& metrics)
    : options_(options),
      store_(store),
      catalog_(catalog),
      mig_configs_(mig_configs),
      clock_(clock),
      nodes_({.name = "inventory",
              .workers = options.workers,
              .list_keys = [this] { return ListNames(); },
              .shards = options.shards},
             *this, clock, metrics, host, kNodes, options.informer_resync) {}

InventoryController::~InventoryController() { Stop(); }

Status InventoryController::Start(std::chrono::milliseconds timeout) { return nodes_.Start(timeout); }

void InventoryController::Stop() { nodes_.Stop(); }

Result<std::vector<std::string>> InventoryController::ListNames() {
  std::set<std::string> names;
  for (const auto& node : nodes_.informer().List()) {
    if (auto name = ObjectKey(node)) names.insert(*std::move(name));
  }
  Status st = store_.Transact(core::TxMode::kReadOnly, [&](core::Tx& tx) -> Status {
    auto stored = tx.Inventory().ListNodes();
    SEPTA_RETURN_IF_ERROR(stored);
    for (const auto& node : *stored) names.insert(node.name);
    return Status::Ok();
  });
  if (!st.ok()) return st;
  names.erase("");
  return std::vector<std::string>(names.begin(), names.end());
}

Outcome InventoryController::Reconcile(const std::string& name) {
  std::optional<nlohmann::json> object = nodes_.informer().Get("", name);
  return object ? Observed(name, *object) : Vanished(name);
}

Outcome InventoryController::Observed(const std::string& name, const nlohmann::json& object) {
  auto observed = ObserveNode(object, catalog_, mig_configs_);
  if (!observed.ok()) {
    // The object changes before it can be read differently: its next event triggers again.
    spdlog::warn("inventory: node {} cannot be observed: {}", name, observed.status().message());
    return Outcome::Done();
  }
  gpu::InventoryNode node = std::move(observed->node);
  bool written = false;
  Status st = store_.Transact(core::TxMode::kReadWrite, [&](core::Tx& tx) -> Status {
    written = false;
    auto stored = tx.Inventory().GetNode(name);
    if (!stored.ok() && stored.status().code() != Code::kNotFound) return stored.status();
    gpu::InventoryNode wanted = node;
    if (!observed->layout_settled) KeepStoredLayouts(wanted, stored.ok() ? &*stored : nullptr);
    Canonicalize(wanted);
    if (stored.ok() && SameNode(*stored, wanted)) return Status::Ok();
    written = true;
    return tx.Inventory().PutNode(wanted, clock_.Now());
  });
  if (!st.ok()) return Outcome::Error(st);
  if (written) {
    spdlog::info("inventory: node {} stored ({}, {} GPUs)", name, gpu::NodeHealthName(node.health), node.gpus.size());
    for (const auto& issue : observed->issues) {
      spdlog::warn("inventory: node {}: {}: {}", name, issue.reason, issue.message);
    }
  }
  return Outcome::Done();
}

Outcome InventoryController::Vanished(const std::string& name) {
  Status deleted = store_.Transact(core::TxMode::kReadWrite,
                                   [&](core::Tx& tx) -> Status { return tx.Inventory().DeleteNode(name); });
  if (deleted.ok()) {
    spdlog::info("inventory: node {} left the host cluster: removed", name);
    return Outcome::Done();
  }
  if (IsNotFound(deleted)) return Outcome::Done();
  if (deleted.code() != Code::kFailedPrecondition) return Outcome::Error(deleted);
  // Something is reserved on it: it stays, marked, until the reservation is released.
  bool marked = false;
  Status st = store_.Transact(core::TxMode::kReadWrite, [&](core::Tx& tx) -> Status {
    marked = false;
    auto stored = tx.Inventory().GetNode(name);
    SEPTA_RETURN_IF_ERROR(stored);
    if (stored->health == gpu::NodeHealth::kGone) return Status::Ok();
    stored->health = gpu::NodeHealth::kGone;
    marked = true;
    return tx.Inventory().PutNode(*stored, clock_.Now());
  });
  if (!st.ok() && st.code() != Code::kNotFound) return Outcome::Error(st);
  if (marked) spdlog::warn("inventory: node {} left the host cluster while reserved: kept as Gone", name);
  return Outcome::RequeueAfter(options_.gone_recheck);
}

}  // namespace septa::reconcile
