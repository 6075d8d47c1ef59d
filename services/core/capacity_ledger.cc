#include "services/core/capacity_ledger.h"

#include <set>
#include <tuple>

namespace septa::core {

namespace {

// Reservations are made on behalf of the tenant's future pods, which the
// syncer gives the tolerations they need; host taints therefore do not stop
// a reservation, except those that say a node takes no new work: a cordon
// (observed as Kubernetes' own unschedulable taint) and NoExecute taints.
std::vector<gpu::Taint> ReservableTaints(const std::vector<gpu::InventoryNode>& nodes) {
  std::set<std::tuple<std::string, std::string, std::string>> seen;
  std::vector<gpu::Taint> tolerations;
  for (const auto& node : nodes) {
    for (const auto& t : node.taints) {
      if (t.effect == "NoExecute" || t.key == "node.kubernetes.io/unschedulable") continue;
      if (seen.insert({t.key, t.value, t.effect}).second) tolerations.push_back(t);
    }
  }
  return tolerations;
}

}  // namespace

void FifoMutex::lock() {
  std::unique_lock lock(mu_);
  const std::uint64_t ticket = next_ticket_++;
  turn_.wait(lock, [&] { return serving_ == ticket; });
}

void FifoMutex::unlock() {
  {
    std::lock_guard lock(mu_);
    ++serving_;
  }
  turn_.notify_all();
}

CapacityLedger::CapacityLedger(const gpu::Catalog& catalog, std::string policy, MigRelayoutPolicy mig_relayout)
    : catalog_(catalog), policy_(std::move(policy)), mig_relayout_(mig_relayout) {}

std::unique_ptr<CapacityLedger> CapacityLedger::Twin() const {
  return std::make_unique<CapacityLedger>(catalog_, policy_, mig_relayout_);
}

Status CapacityLedger::Rebuild(Tx& tx, std::int64_t epoch) {
  auto nodes = tx.Inventory().ListNodes();
  SEPTA_RETURN_IF_ERROR(nodes);
  auto reservations = tx.Reservations().List();
  SEPTA_RETURN_IF_ERROR(reservations);
  auto targets = tx.Inventory().ListLayoutTargets();
  SEPTA_RETURN_IF_ERROR(targets);
  // A GPU being re-laid out is placed on as it will be: the reservations of
  // its new instances hold them.
  auto engine = gpu::PlacementEngine::Create(tenancy::WithLayoutTargets(*nodes, *targets), catalog_, policy_);
  if (!engine.ok()) return Internal("the GPU inventory cannot be placed on: " + engine.status().message());
  std::map<Key, std::vector<std::uint64_t>> held;
  for (const tenancy::Reservation& r : *reservations) {
    auto allocations = tenancy::HoldReservation(**engine, r);
    // Rows the database accepted always fit together; one that does not
    // match the inventory any more (a MIG layout changed under it) is left
    // out of the cache and still refuses double booking in the database.
    if (allocations.ok()) held[{r.tenant, r.vcluster}] = *std::move(allocations);
  }
  engine_ = std::move(engine).value();
  held_ = std::move(held);
  tolerations_ = ReservableTaints(*nodes);
  epoch_ = epoch;
  return Status::Ok();
}

CapacityLedger::Session::~Session() {
  // An engine moved by a transaction that did not commit no longer matches
  // the rows: the next session rebuilds it.
  if (changed_ && !committed_) ledger_.epoch_.reset();
}

Result<gpu::PlacementEngine*> CapacityLedger::Session::Engine(Tx& tx) {
  // Checked in this attempt already: its snapshot cannot move but by its own
  // writes, which Place and Release mirror in the engine. Without this, each
  // reservation of a many-object transaction (an apply) would rebuild the
  // engine from every row: quadratic.
  if (current_) return ledger_.engine_.get();
  auto epoch = tx.Reservations().Epoch();
  SEPTA_RETURN_IF_ERROR(epoch);
  if (changed_) ledger_.epoch_.reset();  // a retried attempt: what the last one placed never committed
  changed_ = false;
  if (!ledger_.engine_ || ledger_.epoch_ != *epoch) SEPTA_RETURN_IF_ERROR(ledger_.Rebuild(tx, *epoch));
  checked_ = true;
  current_ = true;
  return ledger_.engine_.get();
}

Result<CapacityLedger::Placed> CapacityLedger::Session::Place(Tx& tx, const std::string& tenant,
                                                              const std::string& vcluster,
                                                              const tenancy::Capacity& capacity, TimePoint now) {
  if (!ledger_.engine_) return FailedPrecondition("Engine(tx) must come first");
  auto placed = tenancy::PlaceCapacity(*ledger_.engine_, tenant, vcluster, capacity, ledger_.tolerations_);
  std::vector<tenancy::MigLayoutTarget> relayout;
  if (!placed.ok()) {
    if (placed.status().code() != Code::kResourceExhausted) return placed.status();
    auto plan = tenancy::PlanMigRelayout(*ledger_.engine_, ledger_.catalog_, capacity);
    SEPTA_RETURN_IF_ERROR(plan);
    const Status refused = tenancy::WithRelayoutHint(placed.status(), *plan);
    if (ledger_.mig_relayout_ == MigRelayoutPolicy::kOff || !plan->meets) return refused;
    auto written = WriteLayoutTargets(tx, plan->targets, now);
    SEPTA_RETURN_IF_ERROR(written);
    relayout = *std::move(written);
    current_ = false;                   // the targets are rows the engine does not mirror:
    SEPTA_RETURN_IF_ERROR(Engine(tx));  // rebuilt with them (the epoch moved)
    Release(tenant, vcluster);          // a resize: the rebuild holds the old capacity again
    changed_ = true;                    // from rows this transaction has not committed
    placed = tenancy::PlaceCapacity(*ledger_.engine_, tenant, vcluster, capacity, ledger_.tolerations_);
    if (!placed.ok()) return refused;
  }
  changed_ = true;
  ledger_.held_[{tenant, vcluster}] = placed->allocations;
  return Placed{std::move(placed->reservation), std::move(relayout)};
}

Result<std::vector<tenancy::MigLayoutTarget>> CapacityLedger::Session::WriteLayoutTargets(
    Tx& tx, std::vector<tenancy::MigLayoutTarget> targets, TimePoint now) {
  auto pending = tx.Inventory().ListLayoutTargets();
  SEPTA_RETURN_IF_ERROR(pending);
  std::map<std::string, std::map<int, tenancy::MigLayoutTarget>> by_node;
  for (tenancy::MigLayoutTarget& t : *pending) by_node[t.node][t.gpu] = std::move(t);
  std::map<std::string, std::string> configs;  // of the nodes re-laid out
  for (tenancy::MigLayoutTarget& t : targets) {
    t.requested_at = now;
    configs[t.node];
    by_node[t.node][t.gpu] = t;
  }
  for (auto& [name, config] : configs) {
    auto node = tx.Inventory().GetNode(name);
    SEPTA_RETURN_IF_ERROR(node);
    std::vector<tenancy::MigLayoutTarget> of_node;
    for (auto& [gpu, t] : by_node[name]) of_node.push_back(t);
    auto groups = tenancy::NodeMigConfig(ledger_.catalog_, *node, of_node);
    SEPTA_RETURN_IF_ERROR(groups);
    config = tenancy::MigConfigName(name, *groups, now);
    for (tenancy::MigLayoutTarget& t : of_node) {
      t.mig_config = config;
      SEPTA_RETURN_IF_ERROR(tx.Inventory().PutLayoutTarget(t));
    }
  }
  for (tenancy::MigLayoutTarget& t : targets) t.mig_config = configs[t.node];
  return targets;
}

void CapacityLedger::Session::Release(const std::string& tenant, const std::string& vcluster) {
  auto it = ledger_.held_.find({tenant, vcluster});
  if (it == ledger_.held_.end() || !ledger_.engine_) return;
  tenancy::ReleaseAllocations(*ledger_.engine_, it->second);
  ledger_.held_.erase(it);
  changed_ = true;
}

void CapacityLedger::Session::BeginAttempt() {
  checked_ = false;
  current_ = false;
  sealed_epoch_.reset();
}

Status CapacityLedger::Session::Seal(Tx& tx) {
  if (!checked_) return Status::Ok();
  auto epoch = tx.Reservations().Epoch();
  SEPTA_RETURN_IF_ERROR(epoch);
  sealed_epoch_ = *epoch;
  return Status::Ok();
}

void CapacityLedger::Session::Committed() {
  committed_ = true;
  // Sealed after its writes, in a transaction that read the epoch and then
  // committed: the rows at that epoch are what the engine holds.
  if (sealed_epoch_) {
    ledger_.epoch_ = *sealed_epoch_;
  } else if (changed_) {
    ledger_.epoch_.reset();
  }
}

Status CapacityLedger::Transact(Store& store, TxMode mode, const std::function<Status(Tx&, Session&)>& body) {
  Session session(*this);
  Status st = store.Transact(mode, [&](Tx& tx) -> Status {
    session.BeginAttempt();
    SEPTA_RETURN_IF_ERROR(body(tx, session));
    return session.Seal(tx);
  });
  // A dry run's placement is not kept: the session's end marks the engine
  // stale and the next one rebuilds it from the rows.
  if (st.ok() && mode != TxMode::kDryRun) session.Committed();
  return st;
}

}  // namespace septa::core
