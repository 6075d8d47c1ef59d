#include "services/store/restart_backoff.h"

#include <algorithm>

namespace septa::store {

void RestartBackoff::ServerExited(TimePoint now) {
  if (!down_since_) down_since_ = now;
}

std::chrono::milliseconds RestartBackoff::AttemptFailed() {
  next_delay_ = next_delay_.count() == 0 ? options_.first_delay : std::min(next_delay_ * 2, options_.max_delay);
  return next_delay_;
}

void RestartBackoff::ServerRunning() {
  down_since_.reset();
  next_delay_ = std::chrono::milliseconds(0);
}

bool RestartBackoff::GaveUp(TimePoint now) const { return down_since_ && now - *down_since_ >= options_.give_up_after; }

}  // namespace septa::store
