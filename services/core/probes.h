// What septad's health probes answer, the same over every transport: REST's
// /healthz and /readyz, gRPC's grpc.health.v1.Health.
#pragma once

#include <chrono>
#include <functional>

#include "common/status.h"
#include "services/core/store.h"

namespace septa::core {

class Probes {
 public:
  // `liveness` (cheap, called on I/O threads) fails when something septad
  // owns is down and could not be brought back, e.g. the embedded
  // PostgreSQL; empty: nothing owned, always alive. Readiness waits on the
  // database at most `ready_timeout` (db_ready_timeout), so a stalled
  // database reads as not ready before a load balancer's probe gives up.
  Probes(Store& store, std::function<Status()> liveness, std::chrono::milliseconds ready_timeout);

  // Liveness: septad lives and what it owns runs or is being restarted. A
  // failure means restarting septad is the remedy.
  [[nodiscard]] Status Live() const;
  // Readiness: requests can be served now (the database answers and its
  // schema is migrated). A failure means: send traffic elsewhere for now.
  [[nodiscard]] Status Ready() const;

 private:
  Store& store_;
  std::function<Status()> liveness_;
  std::chrono::milliseconds ready_timeout_;
};

}  // namespace septa::core
