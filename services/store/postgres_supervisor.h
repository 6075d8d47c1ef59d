// Keeps septad's embedded PostgreSQL running. When its postmaster exits while
// septad owns it (killed, crashed, out of memory), the supervisor starts it
// again, with growing pauses between failed attempts (RestartBackoff), so
// that septad becomes ready again by itself. PostgreSQL's crash recovery
// replays its WAL: nothing committed is lost.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <mutex>
#include <thread>

#include "common/clock.h"
#include "common/status.h"
#include "services/store/restart_backoff.h"
#include "services/store/subprocess.h"

namespace septa::store {

class EmbeddedPostgres;

class PostgresSupervisor {
 public:
  // Watches `server` from a thread of its own; `server` and `clock` must
  // outlive this object, which must be destroyed before server.Stop().
  PostgresSupervisor(EmbeddedPostgres& server, const Clock& clock, RestartBackoffOptions options = {});
  ~PostgresSupervisor();  // stops watching (waits for a start in progress)
  PostgresSupervisor(const PostgresSupervisor&) = delete;
  PostgresSupervisor& operator=(const PostgresSupervisor&) = delete;

  // OK while the server runs or is being restarted; kUnavailable once it has
  // been down for options.give_up_after (septad's /healthz).
  Status Health() const;

 private:
  void Run();
  // Waits until `pid` exits; false when asked to stop first.
  bool WaitForExit(pid_t pid);
  // Waits `delay`; false when asked to stop first.
  bool Pause(std::chrono::milliseconds delay);

  EmbeddedPostgres& server_;
  const Clock& clock_;
  mutable std::mutex mu_;
  RestartBackoff backoff_;  // guarded by mu_
  UniqueFd stop_;           // an eventfd, written to stop
  std::thread thread_;
};

}  // namespace septa::store
