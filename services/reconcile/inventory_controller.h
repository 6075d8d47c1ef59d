// The inventory controller: keeps the store's nodes and GPUs (core::
// InventoryRepository) as the host cluster's Node objects describe them
// (node_observation.h). Keys are node names. Triggers: an informer on the
// host's nodes (with its periodic resync) and the controller's resync, which
// lists the informer's nodes and the stored ones, so that nodes that
// vanished while septad was down are found too.
//
// Reconcile(name):
//  - the host has the node: observe it; when its MIG layout is not settled
//    (a re-layout under way), the GPUs keep the layout stored last; write it
//    only when it differs from the stored node (no write, no churn, when
//    nothing changed);
//  - the host no longer has it: delete it, or, while anything is reserved on
//    it, keep it marked gpu::NodeHealth::kGone and look again every
//    `gone_recheck` until the reservation is released.
// What the observation could not make of a node is logged when it is written.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "gpu/catalog.h"
#include "gpu/mig_parted.h"
#include "services/core/store.h"
#include "services/kube/client.h"
#include "services/kube/watch.h"
#include "services/reconcile/controller.h"
#include "services/reconcile/informer_trigger.h"

namespace septa::reconcile {

struct InventoryControllerOptions {
  int workers = 4;  // the first sync of 1,000 nodes is twice as fast with 4 as with 2 (docs/BENCHMARKS.md)
  std::chrono::milliseconds informer_resync{std::chrono::minutes(10)};
  std::chrono::milliseconds gone_recheck{std::chrono::seconds(30)};
  ShardLeases* shards = nullptr;  // as ControllerOptions::shards
};

class InventoryController final : public Reconciler<std::string> {
 public:
  InventoryController(InventoryControllerOptions options, core::Store& store, kube::Client& host,
                      const gpu::Catalog& catalog, const gpu::MigPartedConfig& mig_configs, const Clock& clock,
                      prometheus::Registry& metrics);
  ~InventoryController() override;  // Stop

  // Starts the informer, waits (at most `timeout`) for its first list, then
  // starts the controller, which reconciles every node. kDeadlineExceeded
  // when the host's nodes could not be listed in time.
  Status Start(std::chrono::milliseconds timeout);
  void Stop();
  // Every node known so far has been reconciled; false on timeout.
  bool AwaitIdle(std::chrono::milliseconds timeout) const { return nodes_.controller().AwaitIdle(timeout); }

  Outcome Reconcile(const std::string& name) override;

 private:
  Result<std::vector<std::string>> ListNames();
  Outcome Observed(const std::string& name, const nlohmann::json& object);
  Outcome Vanished(const std::string& name);

  const InventoryControllerOptions options_;
  core::Store& store_;
  const gpu::Catalog& catalog_;
  const gpu::MigPartedConfig& mig_configs_;
  const Clock& clock_;
  InformedController nodes_;
};

}  // namespace septa::reconcile
