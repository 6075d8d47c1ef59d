#include "services/core/validation.h"

#include <string>

namespace septa::core {

namespace {

constexpr std::size_t kMaxTenantName = 40;
constexpr std::size_t kMaxDisplayName = 200;
constexpr std::size_t kMaxLabels = 64;
constexpr std::size_t kMaxLabelName = 63;
constexpr std::size_t kMaxLabelPrefix = 253;

bool IsAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }
bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// Label names and values: [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?
bool IsLabelToken(std::string_view s) {
  if (s.empty() || s.size() > kMaxLabelName) return false;
  if (!IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

bool IsDns1123Subdomain(std::string_view s) {
  if (s.empty() || s.size() > kMaxLabelPrefix) return false;
  std::size_t start = 0;
  while (start <= s.size()) {
    std::size_t dot = s.find('.', start);
    if (dot == std::string_view::npos) dot = s.size();
    if (!IsDns1123Label(s.substr(start, dot - start))) return false;
    start = dot + 1;
  }
  return true;
}

bool IsValidUtf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    int extra = c < 0x80 ? 0 : (c >> 5) == 0x6 ? 1 : (c >> 4) == 0xe ? 2 : (c >> 3) == 0x1e ? 3 : -1;
    if (extra < 0 || i + extra >= s.size()) return false;  // truncated sequence
    for (int k = 1; k <= extra; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 0x2) return false;
    }
    i += extra + 1;
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

bool IsDns1123Label(std::string_view s, std::size_t max_len) {
  if (s.empty() || s.size() > max_len) return false;
  if (!IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsLowerAlnum(c) && c != '-') return false;
  }
  return true;
}

Status ValidateTenantName(std::string_view field, std::string_view name) {
  if (name.empty()) return InvalidField(std::string(field), "is required");
  if (name.size() > kMaxTenantName) {
    return InvalidField(std::string(field), "must be at most 40 characters, got " + std::to_string(name.size()));
  }
  if (!IsDns1123Label(name, kMaxTenantName)) {
    return InvalidField(std::string(field),
                        "must be a DNS-1123 label: lower-case letters, digits and '-', "
                        "starting and ending with a letter or digit");
  }
  return Status::Ok();
}

Status ValidateDisplayName(std::string_view field, std::string_view display_name) {
  if (display_name.size() > kMaxDisplayName) {
    return InvalidField(std::string(field), "must be at most 200 bytes");
  }
  if (!IsValidUtf8(display_name)) return InvalidField(std::string(field), "must be valid UTF-8");
  for (char c : display_name) {
    if (static_cast<unsigned char>(c) < 0x20) {
      return InvalidField(std::string(field), "must not contain control characters");
    }
  }
  return Status::Ok();
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
        return InvalidField(Field(field, key), "label key prefix must be a DNS-1123 subdomain");
      }
      name = name.substr(slash + 1);
    }
    if (!IsLabelToken(name)) {
      return InvalidField(Field(field, key),
                          "label key must be 1-63 characters of [A-Za-z0-9._-], "
                          "starting and ending with a letter or digit");
    }
    if (!value.empty() && !IsLabelToken(value)) {
      return InvalidField(Field(field, key),
                          "label value must be empty or 1-63 characters of [A-Za-z0-9._-], "
                          "starting and ending with a letter or digit");
    }
  }
  return Status::Ok();
}

}  // namespace septa::core
