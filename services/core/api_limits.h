// The API limits that apply to a virtual cluster (tenancy/api_limits.h):
// its trust tier's defaults with an admin's overrides, read in one
// transaction. septad asks it whenever a virtual control plane's listener
// takes a virtual cluster into memory and when the virtual cluster changes
// (services/vcp).
#pragma once

#include <string>

#include "common/status.h"
#include "services/core/store.h"
#include "tenancy/api_limits.h"

namespace septa::core {

// kNotFound when the virtual cluster (or its tenant) does not exist.
Result<tenancy::ApiLimits> EffectiveApiLimitsOf(Store& store, const std::string& tenant, const std::string& vcluster);

}  // namespace septa::core
