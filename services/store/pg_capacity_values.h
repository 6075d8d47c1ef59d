// Conversions between the capacity records (tenancy/, gpu/) and the text
// and JSON that migrations/0003_capacity.sql stores them as.
#pragma once

#include <string>
#include <vector>

#include "gpu/inventory.h"
#include "tenancy/condition.h"
#include "tenancy/virtual_cluster.h"

namespace septa::store {

// Enum values from the names their Name functions give; the CHECK
// constraints admit no other text.
gpu::Tier TierOf(const std::string& text);
gpu::NodeHealth HealthOf(const std::string& text);
tenancy::VirtualClusterState VirtualClusterStateOf(const std::string& text);

// Everything of a Capacity but its tier (a column of its own).
std::string CapacityJson(const tenancy::Capacity& capacity);
tenancy::Capacity CapacityOf(gpu::Tier tier, const std::string& json);

std::string ConditionsJson(const std::vector<tenancy::Condition>& conditions);
std::vector<tenancy::Condition> ConditionsOf(const std::string& json);

std::string TaintsJson(const std::vector<gpu::Taint>& taints);
std::vector<gpu::Taint> TaintsOf(const std::string& json);

}  // namespace septa::store
