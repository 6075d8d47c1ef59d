#include "services/core/probes.h"

#include <utility>

namespace septa::core {

Probes::Probes(Store& store, std::function<Status()> liveness) : store_(store), liveness_(std::move(liveness)) {}

Status Probes::Live() const { return liveness_ ? liveness_() : Status::Ok(); }

Status Probes::Ready() const {
  const Status ready = store_.Ready();
  if (!ready.ok()) return Unavailable("not ready: " + ready.message());
  return Status::Ok();
}

}  // namespace septa::core
