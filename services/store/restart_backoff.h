// When to try starting a crashed server again, and when to give up on it
// being back soon. Pure: time is passed in (tests use FakeClock's values).
//
//   backoff.ServerExited(now);                 // it died: down since now
//   if (!Start().ok()) wait(backoff.AttemptFailed());
//   else backoff.ServerRunning();
//   backoff.GaveUp(now)                        // down longer than give_up_after
#pragma once

#include <chrono>
#include <optional>

#include "common/clock.h"

namespace septa::store {

struct RestartBackoffOptions {
  std::chrono::milliseconds first_delay{200};  // after the first failed attempt
  std::chrono::milliseconds max_delay{5'000};  // the delay doubles up to this
  std::chrono::milliseconds give_up_after{60'000};
};

class RestartBackoff {
 public:
  explicit RestartBackoff(RestartBackoffOptions options = {}) : options_(options) {}

  // The server was found not running at `now` (the first call of a streak counts).
  void ServerExited(TimePoint now);
  // An attempt to start it failed: how long to wait before the next one.
  std::chrono::milliseconds AttemptFailed();
  // It runs again: the next failure starts from first_delay.
  void ServerRunning();

  bool Down() const { return down_since_.has_value(); }
  // Down for give_up_after or longer at `now`: restarting in place is not
  // working, someone must look (or restart the whole process).
  bool GaveUp(TimePoint now) const;

 private:
  RestartBackoffOptions options_;
  std::optional<TimePoint> down_since_;
  std::chrono::milliseconds next_delay_{0};
};

}  // namespace septa::store
