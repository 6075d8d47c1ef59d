#include "tenancy/names.h"

#include <string>

#include "common/text.h"

namespace septa::tenancy {

namespace {

Status ValidateLabelName(std::string_view field, std::string_view name) {
  if (name.empty()) return InvalidField(std::string(field), "is required");
  if (name.size() > kMaxNameLength) {
    return InvalidField(std::string(field), "must be at most " + std::to_string(kMaxNameLength) + " characters, got " +
                                                std::to_string(name.size()));
  }
  if (!IsDns1123Label(name, kMaxNameLength)) {
    return InvalidField(std::string(field),
                        "must be a DNS-1123 label: lower-case letters, digits and '-', "
                        "starting and ending with a letter or digit");
  }
  return Status::Ok();
}

}  // namespace

Status ValidateTenantName(std::string_view field, std::string_view name) { return ValidateLabelName(field, name); }

Status ValidateVirtualClusterName(std::string_view field, std::string_view name) {
  return ValidateLabelName(field, name);
}

Status ValidateTrustTierName(std::string_view field, std::string_view name) { return ValidateLabelName(field, name); }

Status ValidateDisplayName(std::string_view field, std::string_view display_name) {
  return ValidateText(field, display_name, kMaxDisplayNameBytes);
}

}  // namespace septa::tenancy
