#include "tenancy/usage/node_accounting.h"

#include <algorithm>
#include <map>

#include "tenancy/usage/idle_run.h"

namespace septa::tenancy::usage {

UsageEntityKey EntityKeyOf(const HeldEntity& entity) {
  return {.tenant = entity.holder.tenant,
          .vcluster = entity.holder.vcluster,
          .node = entity.node,
          .gpu_uuid = entity.gpu_uuid,
          .gi_id = entity.kind == HeldKind::kMigInstance ? entity.gi_id : -1};
}

double HourlyRateOf(const std::vector<GpuPrice>& prices, const std::string& model, gpu::Tier tier,
                    const std::string& mig_profile, double weight, TimePoint at) {
  const GpuPrice* own = nullptr;     // the profile's row: per instance-hour
  const GpuPrice* shared = nullptr;  // the model's and tier's: per GPU-hour, times the weight
  for (const GpuPrice& price : prices) {
    if (price.model != model || price.tier != tier || price.valid_from > at) continue;
    const GpuPrice*& slot = price.mig_profile.empty() ? shared : own;
    if (!price.mig_profile.empty() && price.mig_profile != mig_profile) continue;
    if (slot == nullptr || slot->valid_from < price.valid_from) slot = &price;
  }
  if (own != nullptr) return own->per_gpu_hour;
  return shared != nullptr ? shared->per_gpu_hour * weight : 0;
}

namespace {

const AccountedGpu* FindGpu(const std::vector<AccountedGpu>& gpus, const std::string& uuid) {
  const auto it = std::find_if(gpus.begin(), gpus.end(), [&](const AccountedGpu& g) { return g.uuid == uuid; });
  return it == gpus.end() ? nullptr : &*it;
}

}  // namespace

Result<NodeAccounting> AccountNode(const NodeAccountingInput& input, const NodeAccountingSettings& settings) {
  NodeAccounting out;
  TimePoint from = input.at - settings.usage.scrape_interval;
  if (input.cursor) {
    from = std::max(*input.cursor, input.at - settings.max_gap);
    if (*input.cursor < from) {
      out.skipped = std::chrono::duration_cast<std::chrono::milliseconds>(from - *input.cursor);
    }
  }
  if (from >= input.at) return out;
  out.accounted = {.start = from, .end = input.at};

  UsageInput usage{.window = out.accounted};
  for (const AccountedGpu& gpu : input.gpus) {
    usage.gpus.push_back({.node = input.node, .uuid = gpu.uuid, .present = out.accounted});
  }
  usage.held = input.held;
  for (HeldEntity& entity : usage.held) entity.held = out.accounted;
  if (input.scrape) usage.scrapes.push_back(*input.scrape);
  SEPTA_ASSIGN_OR_RETURN(const UsageReport report, ComputeUsage(usage, settings.usage));

  for (const MinuteRollup& rollup : report.minutes) {
    const HeldEntity& entity = usage.held[rollup.held];
    const AccountedGpu* gpu = FindGpu(input.gpus, entity.gpu_uuid);
    const std::string model = gpu != nullptr ? gpu->model : "";
    const double rate =
        HourlyRateOf(input.prices, model, entity.holder.tier, entity.mig_profile, entity.weight, rollup.minute);
    // Allocated GPU-seconds are w × seconds held: the hours held are those over w.
    const double held_hours = entity.weight > 0 ? rollup.allocated_gpu_seconds / entity.weight / 3600.0 : 0;
    out.minutes.push_back({.entity = EntityKeyOf(entity),
                           .minute = rollup.minute,
                           .tier = entity.holder.tier,
                           .model = model,
                           .mig_profile = entity.mig_profile,
                           .weight = entity.weight,
                           .allocated_gpu_seconds = rollup.allocated_gpu_seconds,
                           .measured_gpu_seconds = rollup.measured_gpu_seconds,
                           .used_gpu_seconds = rollup.used_gpu_seconds,
                           .waste_gpu_seconds = std::max(0.0, rollup.measured_gpu_seconds - rollup.used_gpu_seconds),
                           .cost = rate * held_hours,
                           .activity_max = rollup.activity_max,
                           .reserved_memory_mib = entity.reserved_memory_mib,
                           .used_memory_mib = rollup.fb_max_mib,
                           .samples = rollup.samples});
  }
  for (const DeviceUsage& device : report.devices) {
    const AccountedGpu* gpu = FindGpu(input.gpus, device.uuid);
    for (const DeviceMinute& minute : device.minutes) {
      out.pool.push_back({.minute = minute.minute,
                          .node = device.node,
                          .gpu_uuid = device.uuid,
                          .model = gpu != nullptr ? gpu->model : "",
                          .capacity_gpu_seconds = minute.capacity_gpu_seconds,
                          .reserved_gpu_seconds = minute.reserved_gpu_seconds,
                          .used_gpu_seconds = minute.used_gpu_seconds});
    }
  }
  std::map<UsageEntityKey, const UsageIdleState*> carried;
  for (const UsageIdleState& state : input.idle) carried[state.entity] = &state;
  std::map<UsageEntityKey, UsageIdleState> idle;
  for (const EntityUsage& entity_usage : report.entities) {
    const HeldEntity& entity = usage.held[entity_usage.held];
    const UsageEntityKey key = EntityKeyOf(entity);
    const auto previous = carried.find(key);
    std::optional<UsageIdleState> before;
    if (previous != carried.end()) before = *previous->second;
    UsageIdleState state = AdvanceIdleRun(before, entity_usage.windows, settings.usage, input.at);
    state.entity = key;
    state.tier = entity.holder.tier;
    idle[key] = std::move(state);
  }
  for (auto& [key, state] : idle) out.idle.push_back(std::move(state));
  out.unknown_gpu_samples = report.unknown_gpu_samples;
  out.unheld_activity_samples = report.unheld_activity_samples;
  out.attribution_conflicts = report.attribution_conflicts;
  return out;
}

}  // namespace septa::tenancy::usage
