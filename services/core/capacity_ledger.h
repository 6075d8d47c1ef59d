// The placement engine of one septad, kept as a cache of the GPU inventory
// and reservation rows (the database is the only record). A reserving use
// case runs its transaction through Transact with a Session: the session
// holds the ledger's lock (reservations in one process are placed one at a time),
// brings the engine to the capacity epoch the transaction sees — rebuilding
// it from the rows when another replica or the inventory controller moved
// it — and, once the transaction has committed, records the epoch the
// engine now matches. A transaction that did not commit leaves the engine
// stale, so the next session rebuilds it: a placement never outlives the
// rows that record it.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/status.h"
#include "gpu/catalog.h"
#include "gpu/engine.h"
#include "services/core/store.h"
#include "tenancy/capacity_placement.h"
#include "tenancy/mig_relayout.h"

namespace septa::core {

// A mutex that hands itself over in arrival order. Reservations queue on
// the ledger for a whole transaction each; std::mutex lets the thread that
// just released it take it again, and under load a few callers waited
// hundreds of milliseconds while others went round many times (p99 232 ms
// with eight callers). No standard or Boost mutex promises FIFO, so this
// ticket lock does.
class FifoMutex {
 public:
  void lock();
  void unlock();

 private:
  std::mutex mu_;
  std::condition_variable turn_;
  std::uint64_t next_ticket_ = 0;
  std::uint64_t serving_ = 0;
};

// Whether MIG instances that no current layout offers are made by
// re-laying out MIG GPUs that run nothing (tenancy/mig_relayout.h), or only
// named in the refusal.
enum class MigRelayoutPolicy { kAuto, kOff };

class CapacityLedger {
 public:
  explicit CapacityLedger(const gpu::Catalog& catalog, std::string policy = "septa",
                          MigRelayoutPolicy mig_relayout = MigRelayoutPolicy::kAuto);

  // A placement: the reservation, and the MIG layout targets written for it
  // (empty when the current layouts had room).
  struct Placed {
    tenancy::Reservation reservation;
    std::vector<tenancy::MigLayoutTarget> relayout;
  };

  class Session {
   public:
    ~Session();
    Session(Session&&) = delete;
    Session& operator=(Session&&) = delete;

    // Within the reserving transaction, before placing: the engine as of the
    // rows `tx` sees. Safe to call again in a retried attempt.
    Result<gpu::PlacementEngine*> Engine(Tx& tx);
    // Places `capacity` for the virtual cluster, all or nothing. MIG
    // instances that only a re-layout makes are placed on layout targets
    // written in `tx` (policy auto); otherwise the refusal says what a
    // re-layout would free.
    Result<Placed> Place(Tx& tx, const std::string& tenant, const std::string& vcluster,
                         const tenancy::Capacity& capacity, TimePoint now);
    // Gives back what the virtual cluster holds in the engine (none: nothing).
    void Release(const std::string& tenant, const std::string& vcluster);

   private:
    friend class CapacityLedger;
    explicit Session(CapacityLedger& ledger) : ledger_(ledger), lock_(ledger.mu_) {}
    // Writes `targets` with their nodes' config names (every pending
    // target of a node is renamed to the node's new config).
    Result<std::vector<tenancy::MigLayoutTarget>> WriteLayoutTargets(Tx& tx,
                                                                     std::vector<tenancy::MigLayoutTarget> targets,
                                                                     TimePoint now);
    // First in each attempt: what an earlier, failed attempt checked says
    // nothing about the rows this one sees.
    void BeginAttempt();
    // Last in the attempt's body, after its writes: the epoch they made
    // (without it, a session that moved the engine leaves it stale). Only
    // an attempt that compared the engine with the rows (Engine) seals:
    // one that reserves nothing leaves the engine to be checked by the next
    // session, or it would mark as current an engine that never saw what
    // other replicas and the provisioner changed meanwhile.
    Status Seal(Tx& tx);
    // After the transaction committed.
    void Committed();

    CapacityLedger& ledger_;
    std::unique_lock<FifoMutex> lock_;
    bool changed_ = false;  // the engine moved in this session
    bool checked_ = false;  // Engine(tx) compared it with the rows in this attempt
    bool current_ = false;  // ... and it holds them, this attempt's own writes included
    std::optional<std::int64_t> sealed_epoch_;
    bool committed_ = false;
  };

  // A ledger of the same catalog and policies with an engine of its own
  // (built at its first session). validate_only runs on one: a check moves
  // its engine without committing, which costs the next session a rebuild
  // from the rows (docs/BENCHMARKS.md); on a twin that cost and the lock's
  // wait stay among checks, and real writes never pay for them.
  std::unique_ptr<CapacityLedger> Twin() const;

  // Runs `body` in one transaction of `store` with a session of this
  // ledger (reservations in one process are placed one at a time): every
  // attempt starts unchecked, is sealed after the body's writes, and the
  // engine is current once the transaction commits.
  Status Transact(Store& store, TxMode mode, const std::function<Status(Tx&, Session&)>& body);

 private:
  using Key = std::pair<std::string, std::string>;  // (tenant, vcluster)
  Status Rebuild(Tx& tx, std::int64_t epoch);

  const gpu::Catalog& catalog_;
  const std::string policy_;
  const MigRelayoutPolicy mig_relayout_;
  FifoMutex mu_;
  std::unique_ptr<gpu::PlacementEngine> engine_;
  std::optional<std::int64_t> epoch_;  // of the rows engine_ matches; empty: stale
  std::map<Key, std::vector<std::uint64_t>> held_;
  std::vector<gpu::Taint> tolerations_;  // host taints a reservation may ignore
};

// A read-write (or dry-run) CapacityLedger::Transact for a body that
// returns a value (a Result<T>): the value of the attempt that committed,
// or the error.
template <typename Body>
auto TransactFor(CapacityLedger& ledger, Store& store, Body&& body, TxMode mode = TxMode::kReadWrite)
    -> std::invoke_result_t<Body&, Tx&, CapacityLedger::Session&> {
  std::optional<std::invoke_result_t<Body&, Tx&, CapacityLedger::Session&>> out;
  const Status st = ledger.Transact(store, mode, [&](Tx& tx, CapacityLedger::Session& session) -> Status {
    out.emplace(body(tx, session));
    return ToStatus(*out);
  });
  if (!st.ok()) return st;
  return *std::move(out);
}

}  // namespace septa::core
