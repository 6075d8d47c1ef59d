// Field validation shared by the use cases. Every failure names the field.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "common/status.h"
#include "common/text.h"
#include "tenancy/names.h"

namespace septa::core {

// The text and name rules live in the pure libraries (common/text.h,
// tenancy/names.h); the use cases call them by these names.
using ::septa::EscapeControlCharacters;
using ::septa::IsDns1123Label;
using ::septa::IsValidUtf8;
using ::septa::ValidateText;
using tenancy::ValidateDisplayName;
using tenancy::ValidateTenantName;

// Kubernetes label rules: key = optional DNS-1123 subdomain prefix + '/' +
// name of 1-63 [A-Za-z0-9._-] starting and ending alphanumeric; value the
// same shape or empty. At most 64 labels.
Status ValidateLabels(std::string_view field, const std::map<std::string, std::string>& labels);

// Names that are looked up rather than created: whether `name` could name a
// tenant, trust tier or API token at all. A path such as /v1/tenants/%ff
// names nothing, so it is not found without asking the database.
bool CanNameTenantOrTier(std::string_view name);
bool CanNameToken(std::string_view id);

}  // namespace septa::core
