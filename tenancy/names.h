// Names and display names of tenants and virtual clusters.
#pragma once

#include <cstddef>
#include <string_view>

#include "common/status.h"

namespace septa::tenancy {

// Tenant and virtual cluster names are DNS-1123 labels of 1-40 characters:
// the host namespace "<tenant>-<vcluster>" and the labels derived from them
// must stay within Kubernetes' 63-character label limit.
inline constexpr std::size_t kMaxNameLength = 40;
inline constexpr std::size_t kMaxDisplayNameBytes = 200;

Status ValidateTenantName(std::string_view field, std::string_view name);
Status ValidateVirtualClusterName(std::string_view field, std::string_view name);
// Trust tier names follow tenant names' rules (a tenant names its tier).
Status ValidateTrustTierName(std::string_view field, std::string_view name);
// One line of printable text (common/text.h ValidateText), at most 200 bytes; may be empty.
Status ValidateDisplayName(std::string_view field, std::string_view display_name);

}  // namespace septa::tenancy
