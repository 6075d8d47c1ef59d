#include "services/core/probes.h"

#include <utility>

#include "services/core/deadline.h"

namespace septa::core {

Probes::Probes(Store& store, std::function<Status()> liveness, std::chrono::milliseconds ready_timeout)
    : store_(store), liveness_(std::move(liveness)), ready_timeout_(ready_timeout) {}

Status Probes::Live() const { return liveness_ ? liveness_() : Status::Ok(); }

Status Probes::Ready() const {
  DeadlineScope deadline(ready_timeout_);
  const Status ready = store_.Ready();
  if (!ready.ok()) return Unavailable("not ready: " + ready.message());
  return Status::Ok();
}

}  // namespace septa::core
