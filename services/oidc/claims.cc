#include "services/oidc/claims.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>

#include "common/text.h"
#include "common/time_point.h"

namespace septa::oidc {

using nlohmann::json;

namespace {

std::string ClaimName(std::string_view name) { return '"' + std::string(name) + '"'; }

// A NumericDate (RFC 7519 section 2: seconds since the epoch, integer or
// fraction) as a TimePoint. TimePoint counts nanoseconds in 64 bits (the
// years 1678 to 2261): a value outside is refused before any conversion,
// which would overflow.
Result<TimePoint> NumericDate(const json& claims, std::string_view name) {
  using std::chrono::seconds;
  const auto found = claims.find(std::string(name));
  if (found == claims.end()) return Unauthenticated(ClaimName(name) + " is missing");
  if (!found->is_number()) return Unauthenticated(ClaimName(name) + " is not a number");
  const std::int64_t first = std::chrono::ceil<seconds>(TimePoint::min().time_since_epoch()).count();
  const std::int64_t last =
      std::chrono::floor<seconds>(TimePoint::max().time_since_epoch()).count() - 1;  // room for a fraction
  const auto out_of_range = [&] {
    return Unauthenticated(ClaimName(name) + " is out of range (a date between the years 1678 and 2261)");
  };
  if (found->is_number_unsigned()) {
    const auto value = found->get<std::uint64_t>();
    if (value > static_cast<std::uint64_t>(last)) return out_of_range();
    return TimePoint(seconds(static_cast<std::int64_t>(value)));
  }
  if (found->is_number_integer()) {
    const auto value = found->get<std::int64_t>();
    if (value < first || value > last) return out_of_range();
    return TimePoint(seconds(value));
  }
  const double value = found->get<double>();
  if (!std::isfinite(value) || value < static_cast<double>(first) || value > static_cast<double>(last)) {
    return out_of_range();
  }
  const double whole = std::floor(value);
  const auto fraction = std::chrono::nanoseconds(std::llround((value - whole) * 1e9));
  return TimePoint(seconds(static_cast<std::int64_t>(whole))) +
         std::chrono::duration_cast<TimePoint::duration>(fraction);
}

// "<date> (now <now>, leeway <n>s)", for a date refused against the clock.
std::string AgainstNow(TimePoint date, const ClaimChecks& checks) {
  return FormatRfc3339(date) + " (now " + FormatRfc3339(checks.now) + ", leeway " +
         std::to_string(checks.leeway.count()) + "s)";
}

Status CheckIssuer(const json& claims, const std::string& issuer) {
  const auto iss = claims.find("iss");
  if (iss == claims.end()) return Unauthenticated("\"iss\" is missing");
  if (!iss->is_string()) return Unauthenticated("\"iss\" is not a string");
  if (iss->get_ref<const std::string&>() != issuer) {
    return Unauthenticated("\"iss\" is " + QuotedExcerpt(iss->get_ref<const std::string&>()) + ", not \"" + issuer +
                           "\"");
  }
  return Status::Ok();
}

Status CheckAudience(const json& claims, const std::string& audience) {
  const auto aud = claims.find("aud");
  if (aud == claims.end()) return Unauthenticated("\"aud\" is missing");
  const auto is_string = [](const json& value) { return value.is_string(); };
  if (!aud->is_string() && !(aud->is_array() && std::all_of(aud->begin(), aud->end(), is_string))) {
    return Unauthenticated("\"aud\" is not a string or an array of strings");
  }
  const bool contains =
      aud->is_string() ? *aud == audience : std::find(aud->begin(), aud->end(), audience) != aud->end();
  if (!contains) {
    return Unauthenticated("\"aud\" does not contain \"" + audience + "\"");
  }
  return Status::Ok();
}

// A name read from the token (a user, a group, the subject): `what` names it.
Status CheckName(std::string_view what, const std::string& name) {
  if (name.empty()) return Unauthenticated(std::string(what) + " is empty");
  const Status text = ValidateText(what, name, kMaxNameBytes);
  return text.ok() ? Status::Ok() : Unauthenticated(text.message());
}

Result<std::vector<std::string>> ReadGroups(const json& claims, std::string_view groups_claim) {
  std::vector<std::string> groups;
  const auto found = claims.find(std::string(groups_claim));
  if (groups_claim.empty() || found == claims.end()) return groups;
  const std::string what = "groups claim " + ClaimName(groups_claim);
  if (found->is_string()) {
    SEPTA_RETURN_IF_ERROR(CheckName(what, found->get_ref<const std::string&>()));
    groups.push_back(found->get<std::string>());
    return groups;
  }
  if (!found->is_array()) return Unauthenticated(what + " is not a string or an array of strings");
  if (found->size() > kMaxGroups) {
    return Unauthenticated(what + " holds " + std::to_string(found->size()) + " groups, more than " +
                           std::to_string(kMaxGroups));
  }
  groups.reserve(found->size());
  for (std::size_t i = 0; i < found->size(); ++i) {
    const json& group = (*found)[i];
    const std::string entry = what + "[" + std::to_string(i) + "]";
    if (!group.is_string()) return Unauthenticated(entry + " is not a string");
    SEPTA_RETURN_IF_ERROR(CheckName(entry, group.get_ref<const std::string&>()));
    groups.push_back(group.get<std::string>());
  }
  std::sort(groups.begin(), groups.end());
  groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
  return groups;
}

}  // namespace

Status CheckClaims(const json& claims, const ClaimChecks& checks) {
  if (!claims.is_object()) return Unauthenticated("token claims are not a JSON object");
  SEPTA_RETURN_IF_ERROR(CheckIssuer(claims, checks.issuer));
  SEPTA_RETURN_IF_ERROR(CheckAudience(claims, checks.audience));

  SEPTA_ASSIGN_OR_RETURN(const TimePoint expires, NumericDate(claims, "exp"));
  if (expires <= checks.now - checks.leeway) return Unauthenticated("token expired at " + AgainstNow(expires, checks));
  if (claims.contains("nbf")) {
    SEPTA_ASSIGN_OR_RETURN(const TimePoint not_before, NumericDate(claims, "nbf"));
    if (not_before > checks.now + checks.leeway) {
      return Unauthenticated("token is not valid before " + AgainstNow(not_before, checks));
    }
  }
  if (claims.contains("iat")) {
    SEPTA_ASSIGN_OR_RETURN(const TimePoint issued, NumericDate(claims, "iat"));
    if (issued > checks.now + checks.leeway) {
      return Unauthenticated("token issued in the future, at " + AgainstNow(issued, checks));
    }
  }

  if (checks.nonce) {
    const auto nonce = claims.find("nonce");
    if (nonce == claims.end()) return Unauthenticated("\"nonce\" is missing");
    // Neither value is logged: the nonce binds the token to one browser's sign-in.
    if (!nonce->is_string() || nonce->get_ref<const std::string&>() != *checks.nonce) {
      return Unauthenticated("\"nonce\" is not the one this sign-in sent");
    }
  }
  return Status::Ok();
}

TimePoint ExpireTime(const json& claims) {
  const Result<TimePoint> expires = NumericDate(claims, "exp");
  return expires.ok() ? *expires : TimePoint::min();  // unchecked claims: expired, not trusted
}

Result<Identity> ExtractIdentity(const json& claims, std::string_view username_claim, std::string_view groups_claim) {
  if (!claims.is_object()) return Unauthenticated("token claims are not a JSON object");
  Identity identity;
  if (const auto sub = claims.find("sub"); sub != claims.end()) {
    if (!sub->is_string()) return Unauthenticated("\"sub\" is not a string");
    identity.subject = sub->get<std::string>();
    // Absent or empty in some JWT access tokens; when present, a name like the others.
    if (!identity.subject.empty()) SEPTA_RETURN_IF_ERROR(CheckName("\"sub\"", identity.subject));
  }

  const std::string username_what = "username claim " + ClaimName(username_claim);
  const auto username = claims.find(std::string(username_claim));
  if (username == claims.end()) return Unauthenticated(username_what + " is missing");
  if (!username->is_string()) return Unauthenticated(username_what + " is not a string");
  SEPTA_RETURN_IF_ERROR(CheckName(username_what, username->get_ref<const std::string&>()));
  identity.username = username->get<std::string>();

  SEPTA_ASSIGN_OR_RETURN(identity.groups, ReadGroups(claims, groups_claim));
  return identity;
}

}  // namespace septa::oidc
