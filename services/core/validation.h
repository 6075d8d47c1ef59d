// Field validation shared by the use cases. Every failure names the field.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "common/status.h"

namespace septa::core {

// RFC 1123 label: lower-case alphanumerics and '-', starting and ending
// alphanumeric, `max_len` characters at most.
bool IsDns1123Label(std::string_view s, std::size_t max_len = 63);

Status ValidateTenantName(std::string_view field, std::string_view name);
Status ValidateDisplayName(std::string_view field, std::string_view display_name);
// Kubernetes label rules: key = optional DNS-1123 subdomain prefix + '/' +
// name of 1-63 [A-Za-z0-9._-] starting and ending alphanumeric; value the
// same shape or empty. At most 64 labels.
Status ValidateLabels(std::string_view field, const std::map<std::string, std::string>& labels);

}  // namespace septa::core
