#include "services/cli/device_flow.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "common/text.h"

namespace septa::cli {

using oidc::CheckProviderUrl;
using oidc::FormEncode;
using oidc::JsonObject;
using oidc::Member;
using oidc::OauthError;
using oidc::ProviderReply;
using oidc::TokensFrom;

namespace {

constexpr char kDeviceCodeGrant[] = "urn:ietf:params:oauth:grant-type:device_code";
constexpr std::chrono::seconds kSlowDownStep{5};  // RFC 8628 3.5
constexpr int kMaxFailedPolls = 3;
// A user code is a few characters (RFC 8628 6.1: 8 of BCDFGHJKLMNPQRSTVWXZ).
constexpr std::size_t kMaxUserCodeBytes = 64;

// A positive whole number of seconds, or `fallback` when absent or not one.
std::chrono::seconds Seconds(const nlohmann::json& object, const char* name, std::chrono::seconds fallback) {
  const auto it = object.find(name);
  if (it == object.end() || !it->is_number_integer()) return fallback;
  const auto value = it->get<std::int64_t>();
  return value > 0 && value <= 24 * 3600 ? std::chrono::seconds(value) : fallback;
}

}  // namespace

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

}  // namespace septa::cli
