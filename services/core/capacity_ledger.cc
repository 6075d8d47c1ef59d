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

CapacityLedger::CapacityLedger(const gpu::Catalog& catalog, std::string policy)
    : catalog_(catalog), policy_(std::move(policy)) {}

Status CapacityLedger::Rebuild(Tx& tx, std::int64_t epoch) {
  auto nodes = tx.Inventory().ListNodes();
  SEPTA_RETURN_IF_ERROR(nodes);
  auto reservations = tx.Reservations().List();
  SEPTA_RETURN_IF_ERROR(reservations);
  auto engine = gpu::PlacementEngine::Create(*nodes, catalog_, policy_);
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
  auto epoch = tx.Reservations().Epoch();
  SEPTA_RETURN_IF_ERROR(epoch);
  if (changed_) ledger_.epoch_.reset();  // a retried attempt: what the last one placed never committed
  changed_ = false;
  if (!ledger_.engine_ || ledger_.epoch_ != *epoch) SEPTA_RETURN_IF_ERROR(ledger_.Rebuild(tx, *epoch));
  return ledger_.engine_.get();
}

Result<tenancy::Reservation> CapacityLedger::Session::Place(const std::string& tenant, const std::string& vcluster,
                                                            const tenancy::Capacity& capacity) {
  if (!ledger_.engine_) return FailedPrecondition("Engine(tx) must come first");
  auto placed = tenancy::PlaceCapacity(*ledger_.engine_, tenant, vcluster, capacity, ledger_.tolerations_);
  SEPTA_RETURN_IF_ERROR(placed);
  changed_ = true;
  ledger_.held_[{tenant, vcluster}] = placed->allocations;
  return placed->reservation;
}

void CapacityLedger::Session::Release(const std::string& tenant, const std::string& vcluster) {
  auto it = ledger_.held_.find({tenant, vcluster});
  if (it == ledger_.held_.end() || !ledger_.engine_) return;
  tenancy::ReleaseAllocations(*ledger_.engine_, it->second);
  ledger_.held_.erase(it);
  changed_ = true;
}

Status CapacityLedger::Session::Seal(Tx& tx) {
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

}  // namespace septa::core
