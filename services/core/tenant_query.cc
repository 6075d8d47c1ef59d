#include "services/core/tenant_query.h"

#include "services/base/base64.h"
#include "services/core/validation.h"

namespace septa::core {

namespace {

constexpr std::string_view kTenantPageTokenPrefix = "after:";
constexpr std::size_t kMaxFilter = 4096;

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

std::string_view Unquote(std::string_view s) {
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') return s.substr(1, s.size() - 2);
  return s;
}

Status ParseTerm(std::string_view term, TenantQuery& query) {
  std::size_t eq = term.find('=');
  if (eq == std::string_view::npos) {
    return InvalidField("filter", "term \"" + std::string(term) + "\" is not of the form <field>=<value>");
  }
  std::string_view key = Trim(term.substr(0, eq));
  std::string value(Unquote(Trim(term.substr(eq + 1))));
  if (key == "trust_tier") {
    if (query.trust_tier) return InvalidField("filter", "trust_tier is given twice");
    query.trust_tier = value;
    return Status::Ok();
  }
  constexpr std::string_view kLabels = "labels.";
  if (key.starts_with(kLabels) && key.size() > kLabels.size()) {
    std::string label(key.substr(kLabels.size()));
    query.labels[label] = value;
    return Status::Ok();
  }
  return InvalidField("filter", "unknown field \"" + std::string(key) + "\"; filter on trust_tier or labels.<key>");
}

}  // namespace

Status ParseTenantFilter(std::string_view filter, TenantQuery& query) {
  SEPTA_RETURN_IF_ERROR(ValidateText("filter", filter, kMaxFilter));
  filter = Trim(filter);
  if (filter.empty()) return Status::Ok();
  constexpr std::string_view kAnd = " AND ";
  while (true) {
    std::size_t at = filter.find(kAnd);
    SEPTA_RETURN_IF_ERROR(ParseTerm(Trim(filter.substr(0, at)), query));
    if (at == std::string_view::npos) break;
    filter = filter.substr(at + kAnd.size());
  }
  return Status::Ok();
}

std::string EncodePageToken(std::string_view last_name) {
  std::string plain(kTenantPageTokenPrefix);
  plain += last_name;
  return base::Base64UrlEncode(plain);
}

std::string EncodeKeyPageToken(std::string_view kind, std::string_view last_key) {
  return base::Base64UrlEncode(std::string(kind) + std::string(last_key));
}

Result<std::string> DecodeKeyPageToken(std::string_view kind, std::string_view token) {
  std::optional<std::string> plain = base::Base64UrlDecode(token);
  if (!plain || !plain->starts_with(kind)) {
    return InvalidField("page_token", "is not a token returned by a previous list");
  }
  return plain->substr(kind.size());
}

Result<std::string> DecodePageToken(std::string_view token) {
  std::optional<std::string> plain = base::Base64UrlDecode(token);
  if (!plain || !plain->starts_with(kTenantPageTokenPrefix) ||
      !IsDns1123Label(std::string_view(*plain).substr(kTenantPageTokenPrefix.size()))) {
    return InvalidField("page_token", "is not a token returned by a previous list");
  }
  return plain->substr(kTenantPageTokenPrefix.size());
}

}  // namespace septa::core
