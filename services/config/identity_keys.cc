#include "services/config/identity_keys.h"

#include <algorithm>
#include <set>

#include "common/documents.h"
#include "common/http_url.h"
#include "common/text.h"
#include "services/base/yaml_json.h"

namespace septa::config::identity {

namespace {

using Json = nlohmann::json;

constexpr std::size_t kMaxIssuers = 16;
constexpr std::size_t kMaxAdminGroups = 64;
constexpr std::size_t kMaxScopes = 32;  // of the portal's sign-in
constexpr std::size_t kMaxRules = 256;
constexpr std::size_t kMaxRuleClaims = 16;
constexpr std::size_t kMaxRuleApplySets = 16;  // core::kMaxScopedApplySets (config does not depend on core)
constexpr std::size_t kMaxValueBytes = 512;

// `where` ("oidc_issuers (septa.yaml)") with `path` ("[1].audience") after
// the key, before its source: "oidc_issuers[1].audience (septa.yaml)".
std::string At(const std::string& where, const std::string& path) {
  const std::size_t source = where.find(" (");
  if (source == std::string::npos) return where + path;
  return where.substr(0, source) + path + where.substr(source);
}

// The key's value as a JSON array of objects (YAML flow or block text
// reads the same; JSON is YAML).
Result<Json> ListOfMappings(const std::string& text, const std::string& where) {
  auto node = ParseYaml(text);
  if (!node.ok()) return InvalidField(where, node.status().message());
  Json list = base::YamlToJson(*node);
  if (list.is_null()) return Json::array();
  if (!list.is_array()) return InvalidField(where, "must be a list of mappings");
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_object()) return InvalidField(At(where, "[" + std::to_string(i) + "]"), "must be a mapping");
  }
  return list;
}

// Reads the string fields of one item, refusing a field it does not know.
class Item {
 public:
  // `where`: the key and its source; `index`: the item's place in the list.
  Item(const Json& json, std::string where, std::size_t index)
      : json_(json), where_(std::move(where)), index_("[" + std::to_string(index) + "]") {}

  std::string Field(const std::string& name) const { return At(where_, index_ + "." + name); }
  std::string Self() const { return At(where_, index_); }

  Status CheckKnown(std::initializer_list<const char*> known) const {
    for (const auto& entry : json_.items()) {
      if (std::none_of(known.begin(), known.end(), [&](const char* k) { return entry.key() == k; })) {
        return InvalidField(Field(EscapeControlCharacters(entry.key())), "is not a known field");
      }
    }
    return Status::Ok();
  }

  // The field's text; `fallback` when absent; an error when required and absent.
  Result<std::string> String(const std::string& name, bool required, std::string fallback = {}) const {
    const auto found = json_.find(name);
    if (found == json_.end() || found->is_null()) {
      if (required) return InvalidField(Field(name), "is required");
      return fallback;
    }
    if (!found->is_string()) return InvalidField(Field(name), "must be a string");
    const std::string value = found->get<std::string>();
    SEPTA_RETURN_IF_ERROR(ValidateText(Field(name), value, kMaxValueBytes));
    if (required && value.empty()) return InvalidField(Field(name), "must not be empty");
    return value;
  }

  // The field's list of non-empty strings, at most `max` of them; empty
  // when absent.
  Result<std::vector<std::string>> Strings(const std::string& name, std::size_t max) const {
    std::vector<std::string> out;
    const auto found = json_.find(name);
    if (found == json_.end() || found->is_null()) return out;
    if (!found->is_array() || found->size() > max) {
      return InvalidField(Field(name), "must be a list of at most " + std::to_string(max) + " strings");
    }
    for (std::size_t i = 0; i < found->size(); ++i) {
      const std::string field = Field(name + "[" + std::to_string(i) + "]");
      const Json& value = (*found)[i];
      if (!value.is_string() || value.get<std::string>().empty())
        return InvalidField(field, "must be a non-empty string");
      SEPTA_RETURN_IF_ERROR(ValidateText(field, value.get<std::string>(), kMaxValueBytes));
      out.push_back(value.get<std::string>());
    }
    return out;
  }

  const Json& json() const { return json_; }

 private:
  const Json& json_;
  std::string where_;
  std::string index_;
};

// An issuer identifier (OpenID Connect Discovery §2): https, no query or
// fragment; plain http only for a loopback host (tests, a local provider).
Status CheckIssuerUrl(const std::string& url, const std::string& field) {
  const std::optional<HttpUrl> parts = ParseHttpUrl(url);
  if (!parts) return InvalidField(field, QuotedExcerpt(url) + " is not an https URL");
  if (url.find_first_of("?#") != std::string::npos) return InvalidField(field, "must have no query or fragment");
  if (parts->authority.empty()) return InvalidField(field, QuotedExcerpt(url) + " names no host");
  if (!parts->https && !IsLoopbackAuthority(parts->authority)) {
    return InvalidField(field, "must be https (plain http is accepted only for a loopback host)");
  }
  return Status::Ok();
}

// "90s", "15m", "1h": a token's lifetime.
Result<std::chrono::seconds> ParseTtl(const std::string& text, const std::string& field) {
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  const std::string unit = text.substr(digits);
  if (digits == 0 || digits > 6 || (unit != "s" && unit != "m" && unit != "h")) {
    return InvalidField(field, QuotedExcerpt(text) + " is not a duration such as 90s, 15m or 1h");
  }
  const long long n = std::stoll(text.substr(0, digits));
  const long long seconds = unit == "s" ? n : unit == "m" ? n * 60 : n * 3600;
  if (seconds < 60 || seconds > 24 * 3600) return InvalidField(field, "must be from 1m to 24h");
  return std::chrono::seconds(seconds);
}

Status CheckPrincipal(const std::string& principal, const std::string& field) {
  if (principal == "admin") return Status::Ok();
  if (principal.starts_with("tenant:") && IsDns1123Label(principal.substr(7))) return Status::Ok();
  return InvalidField(field, QuotedExcerpt(principal) + " is not admin or tenant:<name>");
}

Result<OidcIssuer> ParseIssuer(const Json& json, const std::string& where, std::size_t index) {
  const Item item(json, where, index);
  SEPTA_RETURN_IF_ERROR(
      item.CheckKnown({"issuer", "audience", "client_id", "cli_client_id", "client_secret_file", "name", "scopes",
                       "username_claim", "groups_claim", "admin_groups", "ca_file"}));
  OidcIssuer out;
  SEPTA_ASSIGN_OR_RETURN(out.issuer, item.String("issuer", true));
  SEPTA_RETURN_IF_ERROR(CheckIssuerUrl(out.issuer, item.Field("issuer")));
  SEPTA_ASSIGN_OR_RETURN(out.audience, item.String("audience", true));
  SEPTA_ASSIGN_OR_RETURN(out.client_id, item.String("client_id", false));
  SEPTA_ASSIGN_OR_RETURN(out.cli_client_id, item.String("cli_client_id", false));
  SEPTA_ASSIGN_OR_RETURN(out.client_secret_file, item.String("client_secret_file", false));
  SEPTA_ASSIGN_OR_RETURN(out.username_claim, item.String("username_claim", false, out.username_claim));
  SEPTA_ASSIGN_OR_RETURN(out.groups_claim, item.String("groups_claim", false, out.groups_claim));
  SEPTA_ASSIGN_OR_RETURN(out.ca_file, item.String("ca_file", false));
  SEPTA_ASSIGN_OR_RETURN(out.admin_groups, item.Strings("admin_groups", kMaxAdminGroups));
  SEPTA_ASSIGN_OR_RETURN(out.name, item.String("name", false));
  if (out.name.size() > 64 ||
      !std::all_of(out.name.begin(), out.name.end(), [](char c) { return c >= 0x20 && c != 0x7f; })) {
    return InvalidField(item.Field("name"), "must be at most 64 characters without control characters");
  }
  if (json.contains("scopes")) {
    SEPTA_ASSIGN_OR_RETURN(out.scopes, item.Strings("scopes", kMaxScopes));
    if (std::find(out.scopes.begin(), out.scopes.end(), "openid") == out.scopes.end()) {
      return InvalidField(item.Field("scopes"), "must include openid (the sign-in's ID token)");
    }
    for (const std::string& scope : out.scopes) {
      // RFC 6749 3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
      if (scope.empty() || !std::all_of(scope.begin(), scope.end(),
                                        [](char c) { return c > 0x20 && c < 0x7f && c != '"' && c != '\\'; })) {
        return InvalidField(item.Field("scopes"), QuotedExcerpt(scope) + " is not a scope (RFC 6749 3.3)");
      }
    }
  }
  if (out.username_claim.empty()) return InvalidField(item.Field("username_claim"), "must not be empty");
  // People sign in only through a client of Septa's: without one, the
  // issuer's tokens are exchanged (token_exchange_rules), never a person.
  if (out.client_id.empty() && !out.cli_client_id.empty()) {
    return InvalidField(item.Field("cli_client_id"), "needs client_id (the portal's sign-in client) beside it");
  }
  if (out.client_id.empty() && !out.client_secret_file.empty()) {
    return InvalidField(item.Field("client_secret_file"), "needs client_id (the portal's sign-in client) beside it");
  }
  if (out.client_id.empty() && !out.admin_groups.empty()) {
    return InvalidField(item.Field("admin_groups"),
                        "needs client_id: only an issuer with a sign-in client signs people in");
  }
  return out;
}

Result<TokenExchangeRule> ParseRule(const Json& json, const std::string& where, std::size_t index) {
  const Item item(json, where, index);
  SEPTA_RETURN_IF_ERROR(item.CheckKnown({"issuer", "claims", "principal", "role", "ttl", "apply_sets"}));
  TokenExchangeRule out;
  SEPTA_ASSIGN_OR_RETURN(out.issuer, item.String("issuer", true));
  SEPTA_ASSIGN_OR_RETURN(out.principal, item.String("principal", true));
  SEPTA_RETURN_IF_ERROR(CheckPrincipal(out.principal, item.Field("principal")));
  SEPTA_ASSIGN_OR_RETURN(out.role, item.String("role", true));
  if (out.role != "owner" && out.role != "viewer") {
    return InvalidField(item.Field("role"), QuotedExcerpt(out.role) + " is not owner or viewer");
  }
  SEPTA_ASSIGN_OR_RETURN(const std::string ttl, item.String("ttl", false, "15m"));
  SEPTA_ASSIGN_OR_RETURN(out.ttl, ParseTtl(ttl, item.Field("ttl")));
  if (const auto sets = json.find("apply_sets"); sets != json.end() && !sets->is_null()) {
    if (!sets->is_array() || sets->size() > kMaxRuleApplySets) {
      return InvalidField(item.Field("apply_sets"),
                          "must be a list of at most " + std::to_string(kMaxRuleApplySets) + " apply set names");
    }
    for (std::size_t i = 0; i < sets->size(); ++i) {
      const Json& set = (*sets)[i];
      if (!set.is_string() || !IsDns1123Label(set.get<std::string>())) {
        return InvalidField(item.Field("apply_sets[" + std::to_string(i) + "]"),
                            "must be an apply set name (a DNS-1123 label)");
      }
      out.apply_sets.push_back(set.get<std::string>());
    }
  }
  const auto claims = json.find("claims");
  // A rule without claims would admit every token of its issuer: on a
  // shared issuer such as GitHub's, every repository in the world.
  if (claims == json.end() || !claims->is_object() || claims->empty()) {
    return InvalidField(item.Field("claims"),
                        "must be a mapping of at least one claim to its value (a rule without claims would admit "
                        "every token of its issuer)");
  }
  if (claims->size() > kMaxRuleClaims) {
    return InvalidField(item.Field("claims"), "has more than " + std::to_string(kMaxRuleClaims) + " claims");
  }
  for (const auto& claim : claims->items()) {
    const std::string field = item.Field("claims." + EscapeControlCharacters(claim.key()));
    SEPTA_RETURN_IF_ERROR(ValidateText(field, claim.key(), kMaxValueBytes));
    if (claim.key().empty()) return InvalidField(item.Field("claims"), "has a claim with an empty name");
    if (!claim.value().is_string()) {
      return InvalidField(field, "must be a string (claims are matched as exact strings; quote numbers and booleans)");
    }
    const std::string value = claim.value().get<std::string>();
    SEPTA_RETURN_IF_ERROR(ValidateText(field, value, kMaxValueBytes));
    out.claims[claim.key()] = value;
  }
  return out;
}

}  // namespace

Status ParseOidcIssuers(const std::string& text, const std::string& where, std::vector<OidcIssuer>& out) {
  SEPTA_ASSIGN_OR_RETURN(const Json list, ListOfMappings(text, where));
  if (list.size() > kMaxIssuers)
    return InvalidField(where, "has more than " + std::to_string(kMaxIssuers) + " issuers");
  std::vector<OidcIssuer> issuers;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < list.size(); ++i) {
    SEPTA_ASSIGN_OR_RETURN(OidcIssuer issuer, ParseIssuer(list[i], where, i));
    if (!seen.insert(issuer.issuer).second) {
      return InvalidField(At(where, "[" + std::to_string(i) + "].issuer"),
                          QuotedExcerpt(issuer.issuer) + " is listed twice");
    }
    issuers.push_back(std::move(issuer));
  }
  out = std::move(issuers);
  return Status::Ok();
}

Status ParseTokenExchangeRules(const std::string& text, const std::string& where, std::vector<TokenExchangeRule>& out) {
  SEPTA_ASSIGN_OR_RETURN(const Json list, ListOfMappings(text, where));
  if (list.size() > kMaxRules) return InvalidField(where, "has more than " + std::to_string(kMaxRules) + " rules");
  std::vector<TokenExchangeRule> rules;
  for (std::size_t i = 0; i < list.size(); ++i) {
    SEPTA_ASSIGN_OR_RETURN(TokenExchangeRule rule, ParseRule(list[i], where, i));
    rules.push_back(std::move(rule));
  }
  out = std::move(rules);
  return Status::Ok();
}

Status CheckIdentityKeys(const Config& config) {
  for (std::size_t i = 0; i < config.token_exchange_rules.size(); ++i) {
    const std::string& issuer = config.token_exchange_rules[i].issuer;
    if (std::none_of(config.oidc_issuers.begin(), config.oidc_issuers.end(),
                     [&](const OidcIssuer& o) { return o.issuer == issuer; })) {
      return InvalidField("token_exchange_rules[" + std::to_string(i) + "].issuer",
                          QuotedExcerpt(issuer) + " is not one of oidc_issuers");
    }
  }
  return Status::Ok();
}

}  // namespace septa::config::identity
