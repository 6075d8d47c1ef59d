#include "tests/support/fake_work.h"

#include <regex>

namespace septa::core {

namespace {
constexpr int kMaxListLimit = 1000;
}

Status FakeWork::CheckWritable() const {
  if (mode == TxMode::kReadOnly) return FailedPrecondition("write in a read-only transaction");
  return Status::Ok();
}

TimePoint Truncated(TimePoint t) {
  return TimePoint(std::chrono::duration_cast<TimePoint::duration>(
      std::chrono::floor<std::chrono::microseconds>(t.time_since_epoch())));
}

std::optional<TimePoint> Truncated(const std::optional<TimePoint>& t) {
  return t ? std::optional<TimePoint>(Truncated(*t)) : std::nullopt;
}

Status CheckLimit(int limit) {
  if (limit < 1 || limit > kMaxListLimit) {
    return InvalidField("limit", "must be between 1 and " + std::to_string(kMaxListLimit));
  }
  return Status::Ok();
}

bool IsDnsLabel(const std::string& name, size_t max_length) {
  static const std::regex kLabel("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$");
  return name.size() <= max_length && std::regex_match(name, kLabel);
}

}  // namespace septa::core
