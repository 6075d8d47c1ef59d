// A bounded pool of libpqxx connections. Connections open lazily up to
// max_size; Acquire blocks up to a timeout when all are leased; a connection
// found broken is discarded and replaced by a fresh one on demand, and so are
// the idle ones (the server probably restarted: they are broken too).
// A connection leased for longer than lease_limit is cut (its socket shut
// down) under its user, whose call then fails as a broken connection: a
// server that stopped answering altogether (SIGSTOP, a host gone without a
// reset) cannot enforce its own statement_timeout.
// Inside a request's core::DeadlineScope every wait also ends by its
// deadline: for a free connection, for connecting (the connect then goes on
// off the caller's thread and a late connection joins the idle ones), and
// for the lease, which is cut at the deadline.
// Internal to services/store.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <thread>

#include "common/status.h"
#include "services/store/pg_errors.h"
#include "services/store/pool_stats.h"

namespace septa::store {

class ConnectionPool {
 public:
  // Runs on every new connection (to prepare statements), may throw.
  using Setup = std::function<void(pqxx::connection&)>;

  // lease_limit 0: leases are never cut.
  ConnectionPool(std::string url, int max_size, std::chrono::milliseconds acquire_timeout,
                 std::chrono::milliseconds lease_limit, Setup setup);
  // The pool every store uses: connecting gives up after about
  // `statement_timeout` (WithConnectTimeout), each session runs with that
  // statement_timeout, a lease is cut after twice it, then `prepare` runs.
  static std::unique_ptr<ConnectionPool> WithStatementTimeout(const std::string& url, int max_size,
                                                              std::chrono::milliseconds acquire_timeout,
                                                              std::chrono::milliseconds statement_timeout,
                                                              Setup prepare);
  ~ConnectionPool();
  ConnectionPool(const ConnectionPool&) = delete;
  ConnectionPool& operator=(const ConnectionPool&) = delete;

  // One connection, returned to the pool when the lease ends.
  class Lease {
   public:
    Lease(Lease&& other) noexcept;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    pqxx::connection& connection() { return *connection_; }
    // The connection is broken or in an unknown state: close it, don't reuse it.
    void Discard() { discard_ = true; }

   private:
    friend class ConnectionPool;
    Lease(ConnectionPool* pool, std::unique_ptr<pqxx::connection> connection)
        : pool_(pool), connection_(std::move(connection)) {}
    ConnectionPool* pool_;
    std::unique_ptr<pqxx::connection> connection_;
    bool discard_ = false;
  };

  // kUnavailable when no connection can be opened, or none frees up in
  // time, or the calling thread's deadline (core::CurrentDeadline) passed.
  Result<Lease> Acquire();
  PoolStats Stats() const;

 private:
  using Deadline = std::chrono::steady_clock::time_point;
  struct PendingConnect;
  void Return(std::unique_ptr<pqxx::connection> connection, bool discard);
  // Connects in the slot the caller reserved (open_), which a failure gives
  // back; by `deadline` when set, the connect going on without the caller.
  Result<std::unique_ptr<pqxx::connection>> Open(std::optional<Deadline> deadline);
  Result<std::unique_ptr<pqxx::connection>> Connect();  // blocking, bounded by libpq's connect_timeout
  // With mu_ held; cut at lease_limit or `deadline`, whichever comes first.
  Lease Lend(std::unique_ptr<pqxx::connection> connection, std::optional<Deadline> deadline);
  void CutOverdueLeases();  // the watchdog thread

  const std::string url_;
  const int max_size_;
  const std::chrono::milliseconds acquire_timeout_;
  const std::chrono::milliseconds lease_limit_;
  const Setup setup_;

  mutable std::mutex mu_;
  std::condition_variable returned_;
  std::deque<std::unique_ptr<pqxx::connection>> idle_;
  int open_ = 0;  // leased + idle + being opened
  PoolStats counters_;
  struct Leased {
    int socket;
    std::chrono::steady_clock::time_point deadline;
  };
  std::map<const pqxx::connection*, Leased> leased_;  // those with a cut time
  std::condition_variable leased_changed_;
  int connecting_ = 0;  // connects their callers stopped waiting for, still going
  std::condition_variable connected_;
  bool stopping_ = false;
  std::thread watchdog_;
};

// Runs `work` (given a pooled connection) and turns a database exception
// into a Status; when the connection turns out broken — as every pooled one
// does after the server restarted — it is replaced and `work` runs once
// more, so `work` must be safe to repeat.
template <typename T, typename F>
Result<T> OnPooledConnection(ConnectionPool& pool, F&& work) {
  Status last;
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto lease = pool.Acquire();
    if (!lease.ok()) return lease.status();
    try {
      return work(lease->connection());
    } catch (const std::exception& e) {
      TranslatedError error = TranslateDatabaseError(e);
      if (!error.connection_broken) return error.status;
      lease->Discard();
      last = error.status;
    }
  }
  return last;
}

}  // namespace septa::store
