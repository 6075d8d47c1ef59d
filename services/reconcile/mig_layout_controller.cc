#include "services/reconcile/mig_layout_controller.h"

#include <spdlog/spdlog.h>

#include <map>
#include <set>

#include "gpu/mig_parted.h"
#include "services/core/virtual_cluster_write.h"
#include "services/kube/gpu_labels.h"
#include "services/kube/resources.h"
#include "services/reconcile/informer_trigger.h"
#include "tenancy/lifecycle.h"
#include "tenancy/mig_relayout.h"

namespace septa::reconcile {

namespace {

using nlohmann::json;
using tenancy::MigLayoutTarget;

using kube::kConfigMaps;
using kube::kNodes;
constexpr char kConfigKey[] = "config.yaml";
// Who the audit log names for what this controller writes.
constexpr char kMigLayoutPrincipal[] = "system:mig-layout";
// The configs this controller names (tenancy::MigConfigName); others in the
// ConfigMap are left alone.
constexpr std::string_view kOwnConfigPrefix = "septa-";

std::vector<MigLayoutTarget> TargetsOf(const std::vector<MigLayoutTarget>& all, const std::string& node) {
  std::vector<MigLayoutTarget> out;
  for (const MigLayoutTarget& t : all) {
    if (t.node == node) out.push_back(t);
  }
  return out;
}

bool OnTargets(const tenancy::Reservation& r, const std::string& node, const std::set<int>& gpus) {
  for (const tenancy::ReservedMig& m : r.mig) {
    if (m.node == node && gpus.count(m.gpu)) return true;
  }
  return false;
}

}  // namespace

MigLayoutController::MigLayoutController(MigLayoutControllerOptions options, core::Store& store, kube::Client& host,
                                         const gpu::Catalog& catalog, const Clock& clock, prometheus::Registry& metrics)
    : options_(std::move(options)),
      store_(store),
      host_(host),
      catalog_(catalog),
      clock_(clock),
      nodes_({.name = "mig-layout",
              .workers = options_.workers,
              .list_keys = [this] { return NodesWithTargets(); },
              .shards = options_.shards},
             *this, clock, metrics, host, kNodes, options_.informer_resync) {}

MigLayoutController::~MigLayoutController() { Stop(); }

Status MigLayoutController::Start(std::chrono::milliseconds timeout) { return nodes_.Start(timeout); }

void MigLayoutController::Stop() { nodes_.Stop(); }

Result<std::vector<std::string>> MigLayoutController::NodesWithTargets() {
  std::set<std::string> nodes;
  Status st = store_.Transact(core::TxMode::kReadOnly, [&](core::Tx& tx) -> Status {
    nodes.clear();
    auto targets = tx.Inventory().ListLayoutTargets();
    SEPTA_RETURN_IF_ERROR(targets);
    for (const MigLayoutTarget& t : *targets) nodes.insert(t.node);
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return std::vector<std::string>(nodes.begin(), nodes.end());
}

Outcome MigLayoutController::Reconcile(const std::string& name) {
  std::vector<MigLayoutTarget> targets;
  std::optional<gpu::InventoryNode> node;
  Status read = store_.Transact(core::TxMode::kReadOnly, [&](core::Tx& tx) -> Status {
    node.reset();
    auto all = tx.Inventory().ListLayoutTargets();
    SEPTA_RETURN_IF_ERROR(all);
    targets = TargetsOf(*all, name);
    if (targets.empty()) return Status::Ok();
    auto stored = tx.Inventory().GetNode(name);
    SEPTA_RETURN_IF_ERROR(stored);
    node = *std::move(stored);
    return Status::Ok();
  });
  if (!read.ok()) return Outcome::Error(read);
  if (targets.empty()) return Outcome::Done();
  const std::string& config = targets.front().mig_config;

  if (node->mig_config == config) {
    if (node->mig_config_state == "success" && tenancy::LayoutTargetsReached(*node, targets)) {
      Status settled = Settle(name, config, true);
      if (!settled.ok()) return Outcome::Error(settled);
      spdlog::info("mig-layout: node {} has config {}: {} re-laid out", name, config,
                   tenancy::DescribeTargets(targets));
      return Outcome::Done();
    }
    if (node->mig_config_state == "failed") {
      Status settled = Settle(name, config, false);
      if (!settled.ok()) return Outcome::Error(settled);
      spdlog::warn("mig-layout: node {} failed to apply config {}: the reservations on {} were released", name, config,
                   tenancy::DescribeTargets(targets));
      return Outcome::Done();
    }
    return Outcome::RequeueAfter(options_.poll);
  }
  // Asked of the node unless the host shows the label already (the
  // inventory rows follow the host a little later).
  std::optional<json> object = nodes_.informer().Get("", name);
  if (!object) return Outcome::RequeueAfter(options_.poll);  // not on the host (yet): the informer will tell
  const json labels = (*object)["metadata"].value("labels", json::object());
  if (labels.value(kube::kMigConfigLabel, "") != config) {
    if (Status applied = ApplyConfig(*node, targets); !applied.ok()) return Outcome::Error(applied);
    if (Status labelled = Label(name, config); !labelled.ok()) return Outcome::Error(labelled);
    spdlog::info("mig-layout: node {} asked for config {} ({})", name, config, tenancy::DescribeTargets(targets));
  }
  return Outcome::RequeueAfter(options_.poll);
}

Status MigLayoutController::ApplyConfig(const gpu::InventoryNode& node, const std::vector<MigLayoutTarget>& targets) {
  auto groups = tenancy::NodeMigConfig(catalog_, node, targets);
  SEPTA_RETURN_IF_ERROR(groups);
  const std::string& name = targets.front().mig_config;
  // What is still named: pending targets' configs and nodes' labels.
  std::set<std::string> named;
  Status read = store_.Transact(core::TxMode::kReadOnly, [&](core::Tx& tx) -> Status {
    named.clear();
    auto all = tx.Inventory().ListLayoutTargets();
    SEPTA_RETURN_IF_ERROR(all);
    for (const MigLayoutTarget& t : *all) named.insert(t.mig_config);
    auto nodes = tx.Inventory().ListNodes();
    SEPTA_RETURN_IF_ERROR(nodes);
    for (const gpu::InventoryNode& n : *nodes) named.insert(n.mig_config);
    return Status::Ok();
  });
  SEPTA_RETURN_IF_ERROR(read);

  auto current = host_.Get(kConfigMaps, options_.config_namespace, options_.config_name);
  if (!current.ok() && current.status().code() != Code::kNotFound) return current.status();
  gpu::MigPartedConfig config;
  if (current.ok()) {
    const std::string text = (*current).value("data", json::object()).value(kConfigKey, "");
    auto parsed = gpu::ParseMigParted(text, options_.config_name);
    // A document this controller cannot read is replaced by one it wrote.
    if (parsed.ok()) config = *std::move(parsed);
  }
  const gpu::MigPartedConfig before = config;
  std::erase_if(config.configs, [&](const auto& entry) {
    return entry.first.starts_with(kOwnConfigPrefix) && !named.count(entry.first);
  });
  config.configs[name] = *groups;
  if (current.ok() && config == before) return Status::Ok();
  json object = {{"apiVersion", "v1"},
                 {"kind", "ConfigMap"},
                 {"metadata", {{"name", options_.config_name}, {"namespace", options_.config_namespace}}},
                 {"data", {{kConfigKey, gpu::RenderMigParted(config)}}}};
  if (!current.ok()) return host_.Create(kConfigMaps, options_.config_namespace, object).status();
  // Conditional on what was read: a concurrent writer makes this one try again.
  object["metadata"]["resourceVersion"] = (*current)["metadata"].value("resourceVersion", "");
  return host_.Update(kConfigMaps, options_.config_namespace, object).status();
}

Status MigLayoutController::Label(const std::string& node, const std::string& config) {
  const json patch = {{"metadata", {{"labels", {{kube::kMigConfigLabel, config}}}}}};
  return host_.Patch(kNodes, "", node, kube::PatchType::kMerge, patch.dump()).status();
}

Status MigLayoutController::Settle(const std::string& node, const std::string& config, bool applied) {
  return store_.Transact(core::TxMode::kReadWrite, [&](core::Tx& tx) -> Status {
    const TimePoint now = clock_.Now();
    auto all = tx.Inventory().ListLayoutTargets();
    SEPTA_RETURN_IF_ERROR(all);
    const std::vector<MigLayoutTarget> targets = TargetsOf(*all, node);
    // Another re-layout of the node came meanwhile: it is the one to settle.
    if (targets.empty() || targets.front().mig_config != config) return Status::Ok();
    std::set<int> gpus;
    for (const MigLayoutTarget& t : targets) gpus.insert(t.gpu);
    SEPTA_RETURN_IF_ERROR(tx.Inventory().DeleteLayoutTargets(node));
    std::set<std::pair<std::string, int>> still_pending;  // GPUs of other nodes' targets
    for (const MigLayoutTarget& t : *all) {
      if (t.node != node) still_pending.insert({t.node, t.gpu});
    }
    auto reservations = tx.Reservations().List();
    SEPTA_RETURN_IF_ERROR(reservations);
    for (const tenancy::Reservation& r : *reservations) {
      if (!OnTargets(r, node, gpus)) continue;
      auto vc = tx.VirtualClusters().Get(r.tenant, r.vcluster);
      SEPTA_RETURN_IF_ERROR(vc);
      tenancy::VirtualCluster next = *vc;
      if (applied) {
        bool waits = false;
        for (const tenancy::ReservedMig& m : r.mig) waits = waits || still_pending.count({m.node, m.gpu});
        if (waits) continue;
        tenancy::SetCondition(next.conditions, tenancy::CapacityReadyCondition({}, next.generation), now);
      } else {
        SEPTA_RETURN_IF_ERROR(tx.Reservations().Delete(r.tenant, r.vcluster));
        if (tenancy::CheckTransition(next.state, tenancy::VirtualClusterState::kFailed).ok()) {
          next.state = tenancy::VirtualClusterState::kFailed;
        }
        tenancy::SetCondition(next.conditions,
                              {tenancy::kCapacityReady,
                               tenancy::ConditionStatus::kFalse,
                               "MigRelayoutFailed",
                               "the GPU operator could not apply MIG config " + config + " on " + node +
                                   " (nvidia.com/mig.config.state=failed); the reservation was released",
                               {},
                               next.generation},
                              now);
      }
      // A failed re-layout releases the reservation: audited as every release is.
      const core::VirtualClusterChange release{
          .principal = kMigLayoutPrincipal, .action = "vcluster.relayout_release", .request_id = ""};
      SEPTA_RETURN_IF_ERROR(core::WriteVirtualCluster(tx, *vc, next, now, applied ? nullptr : &release));
    }
    return Status::Ok();
  });
}

}  // namespace septa::reconcile
