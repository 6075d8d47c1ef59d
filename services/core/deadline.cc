#include "services/core/deadline.h"

#include <algorithm>

namespace septa::core {
namespace {
thread_local std::optional<DeadlineClock::time_point> current_deadline;
}  // namespace

DeadlineScope::DeadlineScope(std::chrono::milliseconds budget) : enclosing_(current_deadline) {
  const DeadlineClock::time_point mine = DeadlineClock::now() + budget;
  current_deadline = enclosing_ ? std::min(*enclosing_, mine) : mine;
}

DeadlineScope::~DeadlineScope() { current_deadline = enclosing_; }

std::optional<DeadlineClock::time_point> CurrentDeadline() { return current_deadline; }

}  // namespace septa::core
