// Makes sure no two live septads act as the same replica. A replica's
// identity (config replica_id) is the holder name of its shard leases, so a
// replica restarted after a crash takes its own leases back at once instead
// of waiting out their TTL. Two live processes with one identity would both
// believe they hold the same leases; so the identity itself is locked: a
// PostgreSQL session-level advisory lock on a hash of it, held on a
// connection of its own for as long as the replica runs.
//
// PostgreSQL releases the lock when the session ends: at once when the
// process dies (the kernel closes its socket, even after SIGKILL), and
// within about 11 s when its whole host dies (server-side TCP keepalives
// are set on the session). Acquire therefore waits a while for a lock held
// by a session that is going away, then refuses.
//
// A background thread checks the session every `check_every`; when the
// connection was lost (the database restarted), it reconnects and takes
// the lock again; if another session took it meanwhile, `on_lost` is
// called once: the replica must stop.
//
//   auto lock = ReplicaLock::Acquire({.database_url = url, .replica_id = "r1", .on_lost = stop});
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>

#include "common/status.h"

namespace septa::store {

struct ReplicaLockOptions {
  std::string database_url;
  std::string replica_id;
  // How long Acquire waits for a lock another session holds.
  std::chrono::milliseconds wait{20'000};
  std::chrono::milliseconds check_every{2'000};
  std::function<void(const Status&)> on_lost;  // may be empty
};

class ReplicaLock {
 public:
  // FailedPrecondition naming replica_id (and who holds it) when another
  // live session kept the lock for all of `wait`; Unavailable when the
  // database cannot be reached.
  [[nodiscard]] static Result<std::unique_ptr<ReplicaLock>> Acquire(ReplicaLockOptions options);
  ~ReplicaLock();  // stops checking and closes the session: the lock is free
  ReplicaLock(const ReplicaLock&) = delete;
  ReplicaLock& operator=(const ReplicaLock&) = delete;

  // The PostgreSQL backend PID of the session holding the lock (tests end
  // it to stand for a lost connection).
  int backend_pid() const;

 private:
  explicit ReplicaLock(ReplicaLockOptions options);
  void Run(std::stop_token stop);

  const ReplicaLockOptions options_;
  mutable std::mutex mu_;
  struct Session;                     // the PostgreSQL connection holding the lock
  std::unique_ptr<Session> session_;  // guarded by mu_; null while lost
  std::condition_variable_any wake_;
  std::jthread thread_;
};

}  // namespace septa::store
