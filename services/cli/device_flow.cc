#include "services/cli/device_flow.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/documents.h"
#include "common/http_url.h"
#include "common/text.h"
#include "services/oidc/claims.h"
#include "services/oidc/jws.h"

namespace septa::cli {

namespace {

constexpr char kDeviceCodeGrant[] = "urn:ietf:params:oauth:grant-type:device_code";
constexpr std::chrono::seconds kSlowDownStep{5};  // RFC 8628 3.5
constexpr int kMaxFailedPolls = 3;
// A user code is a few characters (RFC 8628 6.1: 8 of BCDFGHJKLMNPQRSTVWXZ).
constexpr std::size_t kMaxUserCodeBytes = 64;

// The string member `name` of `object`, or empty.
std::string Member(const nlohmann::json& object, const char* name) {
  const auto it = object.find(name);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// A positive whole number of seconds, or `fallback` when absent or not one.
std::chrono::seconds Seconds(const nlohmann::json& object, const char* name, std::chrono::seconds fallback) {
  const auto it = object.find(name);
  if (it == object.end() || !it->is_number_integer()) return fallback;
  const auto value = it->get<std::int64_t>();
  return value > 0 && value <= 24 * 3600 ? std::chrono::seconds(value) : fallback;
}

// The provider's answer as a JSON object; `what` names the endpoint.
Result<nlohmann::json> JsonObject(const ProviderReply& reply, const std::string& what) {
  auto json = ParseJson(reply.body);
  if (!json.ok() || !json->is_object()) {
    return Unavailable(what + " answered HTTP " + std::to_string(reply.status) + " without a JSON object" +
                       (reply.body.empty() ? "" : ": " + QuotedExcerpt(reply.body)));
  }
  return *std::move(json);
}

// An OAuth error answer (RFC 6749 5.2) as one line: "invalid_grant: why".
std::string OauthError(const nlohmann::json& answer) {
  const std::string error = Member(answer, "error");
  const std::string description = Member(answer, "error_description");
  return QuotedExcerpt(error) + (description.empty() ? "" : " (" + EscapeControlCharacters(description) + ")");
}

// The token endpoint's successful answer: an ID token (checked), and the
// refresh token if any.
Result<Tokens> TokensFrom(const nlohmann::json& answer, const ProviderEndpoints& provider, const std::string& client_id,
                          TimePoint now) {
  const std::string id_token = Member(answer, "id_token");
  if (id_token.empty()) {
    return Unauthenticated("the token endpoint gave no id_token: does the scope include openid?");
  }
  SEPTA_ASSIGN_OR_RETURN(Tokens tokens, ReadIdToken(id_token, provider.issuer, client_id, now));
  tokens.refresh_token = Member(answer, "refresh_token");
  return tokens;
}

}  // namespace

std::string FormEncode(const std::vector<std::pair<std::string, std::string>>& fields) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const auto& [name, value] : fields) {
    if (!out.empty()) out += '&';
    for (const std::string* part : {&name, &value}) {
      for (const char c : *part) {
        const auto u = static_cast<unsigned char>(c);
        if (std::isalnum(u) || c == '-' || c == '.' || c == '_' || c == '~') {
          out += c;
        } else if (c == ' ') {
          out += '+';
        } else {
          out += '%';
          out += kHex[u >> 4];
          out += kHex[u & 15];
        }
      }
      if (part == &name) out += '=';
    }
  }
  return out;
}

Status CheckProviderUrl(std::string_view url, std::string_view what) {
  const std::optional<HttpUrl> parts = ParseHttpUrl(url);
  if (!parts || parts->authority.empty()) {
    return InvalidArgument(std::string(what) + " is not an http(s) URL: " + QuotedExcerpt(url));
  }
  if (!parts->https && !IsLoopbackAuthority(parts->authority)) {
    return InvalidArgument(std::string(what) + " must be https (http only on a loopback host): " + QuotedExcerpt(url));
  }
  return Status::Ok();
}

Result<ProviderEndpoints> Discover(ProviderHttp& http, const std::string& issuer) {
  SEPTA_RETURN_IF_ERROR(CheckProviderUrl(issuer, "the issuer"));
  std::string base = issuer;
  while (base.ends_with('/')) base.pop_back();
  const std::string url = base + "/.well-known/openid-configuration";
  SEPTA_ASSIGN_OR_RETURN(const ProviderReply reply, http.Get(url));
  if (reply.status != 200) return Unavailable("discovery at " + url + " answered HTTP " + std::to_string(reply.status));
  SEPTA_ASSIGN_OR_RETURN(const nlohmann::json document, JsonObject(reply, "discovery at " + url));
  ProviderEndpoints endpoints;
  endpoints.issuer = Member(document, "issuer");
  if (endpoints.issuer != issuer) {
    return FailedPrecondition("the discovery document at " + url + " names the issuer " +
                              QuotedExcerpt(endpoints.issuer) + ", not " + QuotedExcerpt(issuer) +
                              " (give --issuer exactly as the provider spells it)");
  }
  endpoints.device_authorization_endpoint = Member(document, "device_authorization_endpoint");
  endpoints.token_endpoint = Member(document, "token_endpoint");
  endpoints.revocation_endpoint = Member(document, "revocation_endpoint");
  if (endpoints.token_endpoint.empty()) return FailedPrecondition("the provider names no token_endpoint");
  for (const auto& [value, what] :
       {std::pair{&endpoints.device_authorization_endpoint, "device_authorization_endpoint"},
        std::pair{&endpoints.token_endpoint, "token_endpoint"},
        std::pair{&endpoints.revocation_endpoint, "revocation_endpoint"}}) {
    if (!value->empty()) SEPTA_RETURN_IF_ERROR(CheckProviderUrl(*value, std::string("the provider's ") + what));
  }
  return endpoints;
}

Result<DeviceAuthorization> StartDeviceAuthorization(ProviderHttp& http, const ProviderEndpoints& provider,
                                                     const std::string& client_id, const std::string& scope) {
  if (provider.device_authorization_endpoint.empty()) {
    return FailedPrecondition("the provider " + provider.issuer +
                              " offers no device flow (its discovery document names no "
                              "device_authorization_endpoint)");
  }
  const std::string what = "the device authorization endpoint";
  SEPTA_ASSIGN_OR_RETURN(
      const ProviderReply reply,
      http.PostForm(provider.device_authorization_endpoint, FormEncode({{"client_id", client_id}, {"scope", scope}})));
  SEPTA_ASSIGN_OR_RETURN(const nlohmann::json answer, JsonObject(reply, what));
  if (reply.status != 200) {
    return FailedPrecondition(what + " refused the client " + QuotedExcerpt(client_id) + ": " + OauthError(answer));
  }
  DeviceAuthorization authorization;
  authorization.device_code = Member(answer, "device_code");
  authorization.user_code = Member(answer, "user_code");
  authorization.verification_uri = Member(answer, "verification_uri");
  authorization.verification_uri_complete = Member(answer, "verification_uri_complete");
  authorization.expires_in = Seconds(answer, "expires_in", std::chrono::seconds(0));
  authorization.interval = Seconds(answer, "interval", std::chrono::seconds(5));
  if (authorization.device_code.empty() || authorization.user_code.empty() || authorization.verification_uri.empty()) {
    return Unavailable(what + " answered without device_code, user_code or verification_uri");
  }
  // The code and the addresses are printed for the person: one short line
  // of printable text, and addresses a browser may be sent to.
  const std::string& code = authorization.user_code;
  if (code.size() > kMaxUserCodeBytes ||
      !std::all_of(code.begin(), code.end(), [](char c) { return c > 0x20 && c < 0x7f; })) {
    return Unavailable(what +
                       " answered a user_code that is not a short word of printable ASCII: " + QuotedExcerpt(code));
  }
  SEPTA_RETURN_IF_ERROR(CheckProviderUrl(authorization.verification_uri, "the verification_uri"));
  if (!authorization.verification_uri_complete.empty()) {
    SEPTA_RETURN_IF_ERROR(CheckProviderUrl(authorization.verification_uri_complete, "the verification_uri_complete"));
  }
  return authorization;
}

Result<Tokens> PollForTokens(ProviderHttp& http, const ProviderEndpoints& provider, const std::string& client_id,
                             const DeviceAuthorization& authorization, const Clock& clock, const PollOptions& options) {
  const TimePoint start = clock.Now();
  const bool code_expires = authorization.expires_in.count() > 0 && authorization.expires_in < options.max_wait;
  const TimePoint deadline = start + (code_expires ? authorization.expires_in : options.max_wait);
  const std::string form = FormEncode(
      {{"grant_type", kDeviceCodeGrant}, {"device_code", authorization.device_code}, {"client_id", client_id}});
  std::chrono::seconds interval = authorization.interval;
  int failed = 0;
  std::string last_failure;
  for (;;) {
    const TimePoint next = clock.Now() + interval;
    if (next > deadline) {
      return DeadlineExceeded(code_expires ? "the code expired before it was approved: run septactl login again"
                                           : "gave up waiting for the approval after " +
                                                 std::to_string(options.max_wait.count()) + " s");
    }
    if (!clock.SleepUntil(next, options.stop)) {
      return Status(Code::kCancelled, "interrupted: nothing was signed in");
    }
    auto reply = http.PostForm(provider.token_endpoint, form);
    const bool answered = reply.ok() && reply->status < 500;
    if (!answered) {
      last_failure = reply.ok() ? "HTTP " + std::to_string(reply->status) : reply.status().message();
      if (++failed >= kMaxFailedPolls) {
        return Unavailable("the token endpoint failed " + std::to_string(failed) + " polls in a row: " + last_failure);
      }
      if (options.note) options.note("the token endpoint did not answer (" + last_failure + "); polling on");
      continue;
    }
    failed = 0;
    SEPTA_ASSIGN_OR_RETURN(const nlohmann::json answer, JsonObject(*reply, "the token endpoint"));
    if (reply->status == 200) return TokensFrom(answer, provider, client_id, clock.Now());
    const std::string error = Member(answer, "error");
    if (error == "authorization_pending") continue;
    if (error == "slow_down") {
      interval += kSlowDownStep;
      if (options.note)
        options.note("the provider asked to poll more slowly: every " + std::to_string(interval.count()) + " s");
      continue;
    }
    if (error == "access_denied") return PermissionDenied("the sign-in was denied at the identity provider");
    if (error == "expired_token") {
      return DeadlineExceeded("the code expired before it was approved: run septactl login again");
    }
    return Unauthenticated("the token endpoint answered HTTP " + std::to_string(reply->status) + " " +
                           OauthError(answer));
  }
}

Result<Tokens> Refresh(ProviderHttp& http, const ProviderEndpoints& provider, const std::string& client_id,
                       const std::string& refresh_token, const Clock& clock) {
  SEPTA_ASSIGN_OR_RETURN(
      const ProviderReply reply,
      http.PostForm(
          provider.token_endpoint,
          FormEncode({{"grant_type", "refresh_token"}, {"refresh_token", refresh_token}, {"client_id", client_id}})));
  if (reply.status >= 500) {
    return Unavailable("the token endpoint answered HTTP " + std::to_string(reply.status) + " to the refresh");
  }
  SEPTA_ASSIGN_OR_RETURN(const nlohmann::json answer, JsonObject(reply, "the token endpoint"));
  if (reply.status != 200) {
    const std::string error = Member(answer, "error");
    if (error == "invalid_grant") {
      return Unauthenticated("the sign-in at " + provider.issuer +
                             " has expired or was revoked (the refresh token was refused: " + OauthError(answer) +
                             "): run septactl login again");
    }
    return Unauthenticated("the token endpoint refused the refresh: HTTP " + std::to_string(reply.status) + " " +
                           OauthError(answer));
  }
  SEPTA_ASSIGN_OR_RETURN(Tokens tokens, TokensFrom(answer, provider, client_id, clock.Now()));
  if (tokens.refresh_token.empty()) tokens.refresh_token = refresh_token;  // not rotated
  return tokens;
}

Status RevokeRefreshToken(ProviderHttp& http, const ProviderEndpoints& provider, const std::string& client_id,
                          const std::string& refresh_token) {
  if (provider.revocation_endpoint.empty()) {
    return FailedPrecondition("the provider has no revocation_endpoint");
  }
  SEPTA_ASSIGN_OR_RETURN(
      const ProviderReply reply,
      http.PostForm(
          provider.revocation_endpoint,
          FormEncode({{"token", refresh_token}, {"token_type_hint", "refresh_token"}, {"client_id", client_id}})));
  // RFC 7009 2.2: 200 whether or not the token was valid.
  if (reply.status == 200) return Status::Ok();
  auto answer = ParseJson(reply.body);
  return Unavailable("the revocation endpoint answered HTTP " + std::to_string(reply.status) +
                     (answer.ok() && answer->is_object() ? " " + OauthError(*answer) : ""));
}

Result<Tokens> ReadIdToken(const std::string& id_token, const std::string& issuer, const std::string& client_id,
                           TimePoint now) {
  auto jws = oidc::ParseJws(id_token);
  if (!jws.ok()) return Unauthenticated("the provider's ID token: " + jws.status().message());
  oidc::ClaimChecks checks;
  checks.issuer = issuer;
  checks.audience = client_id;
  checks.now = now;
  const Status claims = oidc::CheckClaims(jws->claims, checks);
  if (!claims.ok()) return Unauthenticated("the provider's ID token: " + claims.message());
  Tokens tokens;
  tokens.id_token = id_token;
  tokens.id_token_expiry = oidc::ExpireTime(jws->claims);
  tokens.subject = Member(jws->claims, "email");
  if (tokens.subject.empty()) tokens.subject = Member(jws->claims, "sub");
  tokens.subject = EscapeControlCharacters(tokens.subject);
  return tokens;
}

}  // namespace septa::cli

namespace septa::cli {

std::optional<TimePoint> IdTokenExpiry(const std::string& id_token) {
  auto jws = oidc::ParseJws(id_token);
  if (!jws.ok()) return std::nullopt;
  const auto exp = jws->claims.find("exp");
  if (exp == jws->claims.end() || !exp->is_number()) return std::nullopt;
  const double seconds = exp->get<double>();
  if (!(seconds > 0 && seconds < 1e11)) return std::nullopt;
  return TimePoint(std::chrono::duration_cast<TimePoint::duration>(std::chrono::duration<double>(seconds)));
}

}  // namespace septa::cli
