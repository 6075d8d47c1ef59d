#include "services/store/pg_capacity_values.h"

#include <nlohmann/json.hpp>

#include "services/store/pg_values.h"

namespace septa::store {
namespace {

using nlohmann::json;

// The value whose name is `text`, or the first one.
template <typename E, typename NameOf>
E EnumOf(const std::string& text, std::initializer_list<E> values, NameOf name_of) {
  for (E value : values) {
    if (name_of(value) == text) return value;
  }
  return *values.begin();
}

tenancy::ConditionStatus ConditionStatusOf(const std::string& text) {
  using tenancy::ConditionStatus;
  return EnumOf(text, {ConditionStatus::kUnknown, ConditionStatus::kTrue, ConditionStatus::kFalse},
                tenancy::ConditionStatusName);
}

}  // namespace

gpu::Tier TierOf(const std::string& text) {
  using gpu::Tier;
  return EnumOf(text, {Tier::kShared, Tier::kIsolated, Tier::kDedicated, Tier::kExclusive}, gpu::TierName);
}

gpu::NodeHealth HealthOf(const std::string& text) {
  using gpu::NodeHealth;
  return EnumOf(text, {NodeHealth::kReady, NodeHealth::kNotReady, NodeHealth::kGone}, gpu::NodeHealthName);
}

tenancy::VirtualClusterState VirtualClusterStateOf(const std::string& text) {
  using tenancy::VirtualClusterState;
  return EnumOf(text,
                {VirtualClusterState::kProvisioning, VirtualClusterState::kReady, VirtualClusterState::kSleeping,
                 VirtualClusterState::kDeleting, VirtualClusterState::kFailed},
                tenancy::VirtualClusterStateName);
}

std::string CapacityJson(const tenancy::Capacity& c) {
  json mig = json::array();
  for (const auto& m : c.mig) mig.push_back({{"profile", m.profile}, {"count", m.count}, {"model", m.model}});
  return json{{"milli_gpu", c.milli_gpu},
              {"gpu_memory_mib", c.gpu_memory_mib},
              {"mig", std::move(mig)},
              {"model", c.model},
              {"count", c.count}}
      .dump();
}

tenancy::Capacity CapacityOf(gpu::Tier tier, const std::string& text) {
  const json j = json::parse(text);
  tenancy::Capacity c;
  c.tier = tier;
  c.milli_gpu = j.value("milli_gpu", 0);
  c.gpu_memory_mib = j.value("gpu_memory_mib", std::int64_t{0});
  for (const auto& m : j.value("mig", json::array())) {
    c.mig.push_back({m.value("profile", ""), m.value("count", 0), m.value("model", "")});
  }
  c.model = j.value("model", "");
  c.count = j.value("count", 0);
  return c;
}

std::string ConditionsJson(const std::vector<tenancy::Condition>& conditions) {
  json array = json::array();
  for (const auto& c : conditions) {
    array.push_back({{"type", c.type},
                     {"status", tenancy::ConditionStatusName(c.status)},
                     {"reason", c.reason},
                     {"message", c.message},
                     {"last_transition_time", Micros(c.last_transition_time)},
                     {"observed_generation", c.observed_generation}});
  }
  return array.dump();
}

std::vector<tenancy::Condition> ConditionsOf(const std::string& text) {
  std::vector<tenancy::Condition> conditions;
  for (const auto& c : json::parse(text)) {
    conditions.push_back({c.value("type", ""), ConditionStatusOf(c.value("status", "")), c.value("reason", ""),
                          c.value("message", ""), FromMicros(c.value("last_transition_time", std::int64_t{0})),
                          c.value("observed_generation", std::int64_t{0})});
  }
  return conditions;
}

std::string TaintsJson(const std::vector<gpu::Taint>& taints) {
  json array = json::array();
  for (const auto& t : taints) array.push_back({{"key", t.key}, {"value", t.value}, {"effect", t.effect}});
  return array.dump();
}

std::vector<gpu::Taint> TaintsOf(const std::string& text) {
  std::vector<gpu::Taint> taints;
  for (const auto& t : json::parse(text)) {
    taints.push_back({t.value("key", ""), t.value("value", ""), t.value("effect", "")});
  }
  return taints;
}

}  // namespace septa::store
