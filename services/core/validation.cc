#include "services/core/validation.h"

#include <string>

#include "common/text.h"

namespace septa::core {

namespace {

constexpr std::size_t kMaxLabels = 64;
constexpr std::size_t kMaxLabelName = 63;

bool IsAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

// Label names and values: [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?
bool IsLabelToken(std::string_view s) {
  if (s.empty() || s.size() > kMaxLabelName) return false;
  if (!IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

std::string Field(std::string_view base, std::string_view sub) {
  std::string f(base);
  f += '.';
  f += sub;
  return f;
}

}  // namespace

bool CanNameTenantOrTier(std::string_view name) { return IsDns1123Label(name, tenancy::kMaxNameLength); }

bool CanNameToken(std::string_view id) {
  if (id.size() < 8 || id.size() > 64) return false;
  for (char c : id) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

Status ValidateLabels(std::string_view field, const std::map<std::string, std::string>& labels) {
  if (labels.size() > kMaxLabels) {
    return InvalidField(std::string(field), "at most 64 labels are allowed");
  }
  for (const auto& [key, value] : labels) {
    std::string_view name = key;
    std::size_t slash = name.find('/');
    if (slash != std::string_view::npos) {
      if (!IsDns1123Subdomain(name.substr(0, slash))) {
        return InvalidField(Field(field, EscapeControlCharacters(key)),
                            "label key prefix must be a DNS-1123 subdomain");
      }
      name = name.substr(slash + 1);
    }
    if (!IsLabelToken(name)) {
      return InvalidField(Field(field, EscapeControlCharacters(key)),
                          "label key must be 1-63 characters of [A-Za-z0-9._-], "
                          "starting and ending with a letter or digit");
    }
    if (!value.empty() && !IsLabelToken(value)) {
      return InvalidField(Field(field, EscapeControlCharacters(key)),
                          "label value must be empty or 1-63 characters of [A-Za-z0-9._-], "
                          "starting and ending with a letter or digit");
    }
  }
  return Status::Ok();
}

}  // namespace septa::core
