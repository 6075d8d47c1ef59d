// The MIG layout controller: applies the MIG layout targets
// (tenancy/mig_relayout.h, written with the reservations that need them) the
// way the GPU operator expects, and settles the virtual clusters waiting on
// them. Keys are node names. Triggers: an informer on the host's nodes, the
// NOTIFY of a target change (Enqueue, wired by septad) and, while a re-layout
// is under way, a look every `poll` (the inventory rows it waits for send no
// event of their own).
//
// Reconcile(node), level-based from the rows and the host's state, so a
// crash anywhere is picked up where it left off:
//  - no pending target: done;
//  - the node is not yet labelled with the targets' config name: put the
//    node's config (the targets, and the other MIG GPUs' layouts unchanged)
//    into the GPU operator's custom mig-parted ConfigMap (`config_name` in
//    `config_namespace`, key config.yaml; configs of this controller that no
//    target or node names any more are dropped), then set the node's
//    `nvidia.com/mig.config` label to it;
//  - the inventory (as the inventory controller stores it) reports that
//    config with `nvidia.com/mig.config.state=success` and the targets'
//    layouts: delete the targets and mark the virtual clusters whose MIG
//    instances are on them CapacityReady=True, in one transaction;
//  - it reports `failed`: release the reservations on the targeted GPUs,
//    mark their virtual clusters FAILED with CapacityReady=False
//    (MigRelayoutFailed), and delete the targets, in one transaction.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "common/clock.h"
#include "gpu/catalog.h"
#include "services/core/store.h"
#include "services/kube/client.h"
#include "services/kube/watch.h"
#include "services/reconcile/controller.h"
#include "services/reconcile/informer_trigger.h"

namespace septa::reconcile {

struct MigLayoutControllerOptions {
  int workers = 1;
  std::chrono::milliseconds poll{std::chrono::seconds(2)};
  std::chrono::milliseconds informer_resync{std::chrono::minutes(10)};
  std::string config_namespace = "gpu-operator";
  std::string config_name = "septa-mig-parted-config";
  ShardLeases* shards = nullptr;  // as ControllerOptions::shards
};

class MigLayoutController final : public Reconciler<std::string> {
 public:
  MigLayoutController(MigLayoutControllerOptions options, core::Store& store, kube::Client& host,
                      const gpu::Catalog& catalog, const Clock& clock, prometheus::Registry& metrics);
  ~MigLayoutController() override;  // Stop

  // Starts the informer, waits (at most `timeout`) for its first list, then
  // the controller, which looks at every node with a pending target.
  Status Start(std::chrono::milliseconds timeout);
  void Stop();
  // A node's targets changed (the NOTIFY payload); a payload that names no
  // node ("") looks at every node.
  void Enqueue(const std::string& node) {
    if (auto key = DecodeKey<std::string>(node)) {
      nodes_.controller().Enqueue(*key);
    } else {
      Resync();
    }
  }
  void Resync() { nodes_.controller().Resync(); }
  bool AwaitIdle(std::chrono::milliseconds timeout) const { return nodes_.controller().AwaitIdle(timeout); }

  Outcome Reconcile(const std::string& node) override;

 private:
  Result<std::vector<std::string>> NodesWithTargets();
  // Puts the node's config into the ConfigMap, unless it is there already.
  Status ApplyConfig(const gpu::InventoryNode& node, const std::vector<tenancy::MigLayoutTarget>& targets);
  Status Label(const std::string& node, const std::string& config);
  // `applied`: the targets were applied (else the node failed to apply them).
  Status Settle(const std::string& node, const std::string& config, bool applied);

  const MigLayoutControllerOptions options_;
  core::Store& store_;
  kube::Client& host_;
  const gpu::Catalog& catalog_;
  const Clock& clock_;
  InformedController nodes_;
};

}  // namespace septa::reconcile
