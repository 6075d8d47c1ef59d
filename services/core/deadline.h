// How long a request may wait on the database altogether. The transports
// open a DeadlineScope around each API request (db_request_timeout) and
// core::Probes one around readiness (db_ready_timeout); PgStore and its
// connection pool read the calling thread's deadline and end every wait by
// it (for a pooled connection, for connecting, for a statement: the pool cuts
// the connection, between retries of a lost race), then fail UNAVAILABLE.
// A scope of the thread rather than a parameter of every use case: each
// store call a request makes (authentication, every transaction of its use
// case) runs on the thread that serves it, while controllers, which open no
// scope, keep the store's own bounds.
#pragma once

#include <chrono>
#include <optional>

namespace septa::core {

using DeadlineClock = std::chrono::steady_clock;

class DeadlineScope {
 public:
  // The calling thread's deadline becomes now + `budget`, or stays the
  // enclosing scope's when that is sooner; the enclosing one is back at exit.
  explicit DeadlineScope(std::chrono::milliseconds budget);
  ~DeadlineScope();
  DeadlineScope(const DeadlineScope&) = delete;
  DeadlineScope& operator=(const DeadlineScope&) = delete;

 private:
  std::optional<DeadlineClock::time_point> enclosing_;
};

// The calling thread's deadline; nullopt outside every scope.
std::optional<DeadlineClock::time_point> CurrentDeadline();

}  // namespace septa::core
