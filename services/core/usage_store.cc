#include "services/core/usage_store.h"

#include <algorithm>
#include <set>
#include <tuple>

namespace septa::core {
namespace {

bool OnUsageGrid(TimePoint t, std::chrono::seconds grid) { return t.time_since_epoch() % grid == grid.zero(); }

std::chrono::seconds ResolutionLength(UsageResolution resolution) {
  switch (resolution) {
    case UsageResolution::kMinute: return std::chrono::minutes(1);
    case UsageResolution::kHour: return std::chrono::hours(1);
    case UsageResolution::kDay: return std::chrono::days(1);
  }
  return std::chrono::days(1);
}

std::string ResolutionGrid(UsageResolution resolution) {
  switch (resolution) {
    case UsageResolution::kMinute: return "must be a whole minute";
    case UsageResolution::kHour: return "must be a whole hour in UTC";
    case UsageResolution::kDay: return "must be a midnight in UTC";
  }
  return "must be a midnight in UTC";
}

Status CheckBatchNode(const std::string& field, const std::string& node, const UsageScrapeBatch& batch) {
  if (node != batch.node) return InvalidField(field, "must be the batch's node \"" + batch.node + "\"");
  return Status::Ok();
}

}  // namespace

Status CheckUsageBatch(const UsageScrapeBatch& batch) {
  if (batch.node.empty()) return InvalidField("node", "must not be empty");
  const std::chrono::seconds minute = std::chrono::minutes(1);
  std::set<std::pair<TimePoint, UsageEntityKey>> entity_minutes;
  for (const UsageMinuteRow& row : batch.minutes) {
    SEPTA_RETURN_IF_ERROR(CheckBatchNode("minutes.entity.node", row.entity.node, batch));
    if (!OnUsageGrid(row.minute, minute))
      return InvalidField("minutes.minute", ResolutionGrid(UsageResolution::kMinute));
    if (!entity_minutes.emplace(row.minute, row.entity).second) {
      return InvalidField("minutes", "holds entity " + row.entity.tenant + "/" + row.entity.vcluster + " on " +
                                         row.entity.gpu_uuid + " twice in minute " + FormatRfc3339(row.minute));
    }
  }
  std::set<std::tuple<TimePoint, std::string>> gpu_minutes;
  for (const UsagePoolMinuteRow& row : batch.pool) {
    SEPTA_RETURN_IF_ERROR(CheckBatchNode("pool.node", row.node, batch));
    if (!OnUsageGrid(row.minute, minute)) return InvalidField("pool.minute", ResolutionGrid(UsageResolution::kMinute));
    if (!gpu_minutes.emplace(row.minute, row.gpu_uuid).second) {
      return InvalidField("pool", "holds GPU " + row.gpu_uuid + " twice in minute " + FormatRfc3339(row.minute));
    }
  }
  std::set<UsageEntityKey> idle_entities;
  for (const UsageIdleState& state : batch.idle) {
    SEPTA_RETURN_IF_ERROR(CheckBatchNode("idle.entity.node", state.entity.node, batch));
    if (!idle_entities.insert(state.entity).second) {
      return InvalidField("idle", "holds entity " + state.entity.tenant + "/" + state.entity.vcluster + " on " +
                                      state.entity.gpu_uuid + " twice");
    }
  }
  return Status::Ok();
}

Status CheckUsageWindow(TimePoint start, TimePoint end, UsageResolution resolution, std::chrono::seconds step) {
  const std::chrono::seconds grid = ResolutionLength(resolution);
  if (!OnUsageGrid(start, grid)) return InvalidField("start", ResolutionGrid(resolution));
  if (!OnUsageGrid(end, grid)) return InvalidField("end", ResolutionGrid(resolution));
  if (end <= start) return InvalidField("end", "must be after start");
  if (step < step.zero() || step % grid != step.zero()) {
    return InvalidField("step", "must be 0 (one bucket) or a positive multiple of " + std::to_string(grid.count()) +
                                    " seconds, the resolution");
  }
  return Status::Ok();
}

TimePoint::duration UsageBucketStride(TimePoint start, TimePoint end, std::chrono::seconds step) {
  if (step == step.zero()) return end - start;
  return step;
}

TimePoint UsageBucketEnd(TimePoint bucket, TimePoint start, TimePoint end, std::chrono::seconds step) {
  return std::min(end, bucket + UsageBucketStride(start, end, step));
}

}  // namespace septa::core
