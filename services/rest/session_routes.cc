#include "services/rest/session_routes.h"

#include <google/protobuf/util/time_util.h>
#include <boost/beast/http/field.hpp>
#include <nlohmann/json.hpp>

#include <chrono>

#include "common/documents.h"
#include "common/text.h"
#include "services/base/mac.h"

namespace septa::rest {

namespace {

namespace bh = boost::beast::http;
using http::View;

std::string Rfc3339(TimePoint at) {
  using google::protobuf::util::TimeUtil;
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(at.time_since_epoch()).count();
  return TimeUtil::ToString(TimeUtil::MicrosecondsToTimestamp(micros));
}

bool IsSafeMethod(bh::verb method) {
  return method == bh::verb::get || method == bh::verb::head || method == bh::verb::options;
}

// Origin, when sent, must be this server's own.
Status CheckOriginIfSent(const http::Request& request, bool tls) {
  const std::string_view origin = View(request[bh::field::origin]);
  if (origin.empty() || origin == OwnOrigin(request, tls)) return Status::Ok();
  return PermissionDenied("cross-site request refused: Origin is not this server's");
}

nlohmann::json SessionJson(const core::Principal& principal, TimePoint expire_time, std::string_view cookie_value) {
  return {{"kind", "token"},
          {"principal", principal.ToString()},
          {"tenant", principal.admin ? "" : principal.tenant},
          {"role", std::string(core::RoleName(principal.role))},
          {"expire_time", Rfc3339(expire_time)},
          {"csrf_token", core::SessionService::CsrfToken(cookie_value)}};
}

// A person's: who it is, and the principal it acts as when a request names
// no tenant (none: "" when it is a member of several, or of none).
nlohmann::json PersonSessionJson(const core::AuthenticatedSession& session, std::string_view cookie_value) {
  const core::Principal& principal = session.principal;
  const bool acts = principal.admin || !principal.tenant.empty();
  return {{"kind", "person"},
          {"principal", acts ? principal.ToString() : ""},
          {"tenant", principal.admin ? "" : principal.tenant},
          {"role", acts ? std::string(core::RoleName(principal.role)) : ""},
          {"person",
           {{"issuer", session.person->issuer}, {"user", session.person->user}, {"groups", session.person->groups}}},
          {"expire_time", Rfc3339(session.expire_time)},
          {"csrf_token", core::SessionService::CsrfToken(cookie_value)}};
}

http::Response JsonResponse(http::HttpStatus status, const nlohmann::json& body) {
  http::Response r(status, 11);
  r.set(bh::field::content_type, "application/json");
  r.set(bh::field::cache_control, "no-store");  // it carries the CSRF token
  r.body() = body.dump() + "\n";
  return r;
}

// What POST /v1/sessions signs in with.
struct SignInWith {
  enum class Kind { kToken, kSignInCode } kind = Kind::kToken;
  std::string text;
};

Result<SignInWith> ReadSignInWith(const http::Request& request) {
  const std::string_view bearer = core::BearerToken(View(request[bh::field::authorization]));
  if (request.body().empty()) {
    if (bearer.empty()) {
      return InvalidArgument("send {\"token\": \"<API token>\"} or {\"sign_in_code\": \"<code>\"} as JSON");
    }
    return SignInWith{SignInWith::Kind::kToken, std::string(bearer)};
  }
  std::string_view type = View(request[bh::field::content_type]);
  type = type.substr(0, type.find(';'));
  if (type != "application/json") return InvalidField("Content-Type", "must be application/json");
  // Through the one bounded reader of outside documents (depth, UTF-8).
  SEPTA_ASSIGN_OR_RETURN(const nlohmann::json body, ParseJson(request.body()));
  if (!body.is_object()) return InvalidArgument("the body must be a JSON object");
  std::optional<SignInWith> found;
  for (const auto& [key, value] : body.items()) {
    SignInWith::Kind kind;
    if (key == "token") {
      kind = SignInWith::Kind::kToken;
    } else if (key == "sign_in_code") {
      kind = SignInWith::Kind::kSignInCode;
    } else {
      return InvalidField(EscapeControlCharacters(key), "unknown field: send token or sign_in_code");
    }
    if (!value.is_string() || value.get_ref<const std::string&>().empty()) {
      return InvalidField(key, "must be a non-empty string");
    }
    if (found) return InvalidField(key, "send token or sign_in_code, not both");
    found = SignInWith{kind, value.get<std::string>()};
  }
  if (!found) return InvalidArgument("send {\"token\": \"<API token>\"} or {\"sign_in_code\": \"<code>\"} as JSON");
  if (!bearer.empty()) return InvalidField("Authorization", "send the token once: in the body or as the header");
  return *std::move(found);
}

}  // namespace

std::string OwnOrigin(const http::Request& request, bool tls) {
  return std::string(tls ? "https://" : "http://") + std::string(View(request[bh::field::host]));
}

namespace {
// A Set-Cookie value of an HttpOnly cookie for the whole site, Secure over TLS.
std::string SetCookieValue(std::string_view name, std::string_view value, long long max_age_seconds,
                           std::string_view same_site, bool tls) {
  std::string out(name);
  out += '=';
  out += value;
  out += "; Path=/; Max-Age=" + std::to_string(max_age_seconds) + "; HttpOnly; SameSite=" + std::string(same_site);
  if (tls) out += "; Secure";
  return out;
}
}  // namespace

std::string SessionCookie::SetCookie(std::string_view value, long long max_age_seconds) const {
  return SetCookieValue(name(), value, max_age_seconds, "Strict", tls);
}

namespace {
// The value of cookie `wanted` in the request's Cookie headers; empty when absent.
std::string_view FindCookie(const http::Request& request, std::string_view wanted) {
  for (auto it = request.find(bh::field::cookie); it != request.end() && it->name() == bh::field::cookie; ++it) {
    std::string_view rest = View(it->value());
    while (!rest.empty()) {
      const std::size_t semicolon = rest.find(';');
      std::string_view pair = rest.substr(0, semicolon);
      while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
      if (pair.size() > wanted.size() && pair.starts_with(wanted) && pair[wanted.size()] == '=') {
        return pair.substr(wanted.size() + 1);
      }
      if (semicolon == std::string_view::npos) break;
      rest.remove_prefix(semicolon + 1);
    }
  }
  return {};
}
}  // namespace

std::string_view SessionCookie::Find(const http::Request& request) const { return FindCookie(request, name()); }

std::string SessionCookie::SetBinding(std::string_view value, long long max_age_seconds) const {
  return SetCookieValue(binding_name(), value, max_age_seconds, "Lax", tls);
}

std::string_view SessionCookie::FindBinding(const http::Request& request) const {
  return FindCookie(request, binding_name());
}

Status CheckSameOrigin(const http::Request& request, bool tls, std::string_view cookie_value) {
  if (IsSafeMethod(request.method())) return Status::Ok();
  // Browsers send Origin with every request that may change state; a
  // request without one did not come from a page of this server.
  if (View(request[bh::field::origin]).empty()) {
    return PermissionDenied("cross-site request refused: a request signed in by the session cookie must send Origin");
  }
  SEPTA_RETURN_IF_ERROR(CheckOriginIfSent(request, tls));
  const std::string expected = core::SessionService::CsrfToken(cookie_value);
  const std::string_view sent = View(request[kCsrfHeader]);
  if (sent.empty() || !base::ConstantTimeEquals(sent, expected)) {
    return PermissionDenied(std::string("cross-site request refused: send the session's csrf_token as ") + kCsrfHeader);
  }
  return Status::Ok();
}

Result<http::Response> CreateSession(core::SessionService& sessions, const http::Request& request,
                                     const SessionCookie& cookie, const std::string& request_id) {
  // A page of another site must not sign its visitor in (login CSRF).
  SEPTA_RETURN_IF_ERROR(CheckOriginIfSent(request, cookie.tls));
  auto with = ReadSignInWith(request);
  SEPTA_RETURN_IF_ERROR(with);
  auto issued = with->kind == SignInWith::Kind::kToken ? sessions.SignIn(with->text, request_id)
                                                       : sessions.Redeem(with->text, request_id);
  SEPTA_RETURN_IF_ERROR(issued);
  auto principal = core::ParsePrincipal("principal", issued->token.principal, issued->token.role);
  if (!principal.ok()) return Internal("stored session has an invalid principal");
  const TimePoint expire = *issued->token.expire_time;
  const auto max_age = std::chrono::duration_cast<std::chrono::seconds>(expire - issued->token.create_time).count();
  http::Response r = JsonResponse(http::HttpStatus::created, SessionJson(*principal, expire, issued->cookie_value));
  r.set(bh::field::set_cookie, cookie.SetCookie(issued->cookie_value, max_age));
  return r;
}

http::Response CurrentSession(const core::AuthenticatedSession& session, std::string_view cookie_value) {
  if (session.person != nullptr) return JsonResponse(http::HttpStatus::ok, PersonSessionJson(session, cookie_value));
  return JsonResponse(http::HttpStatus::ok, SessionJson(session.principal, session.expire_time, cookie_value));
}

Result<http::Response> DeleteSession(core::SessionService& sessions, core::PersonSignIn* sign_in,
                                     const core::AuthenticatedSession& session, const core::RequestContext& ctx,
                                     const http::Request& request, const SessionCookie& cookie) {
  std::string end_session_url;
  if (session.person != nullptr && sign_in != nullptr) {
    SEPTA_ASSIGN_OR_RETURN(end_session_url, sign_in->SignOut(session.principal.token_id,
                                                             OwnOrigin(request, cookie.tls) + "/", ctx.request_id));
  } else {
    SEPTA_RETURN_IF_ERROR(sessions.SignOut(ctx));
  }
  http::Response r = end_session_url.empty()
                         ? http::Response(http::HttpStatus::no_content, 11)
                         : JsonResponse(http::HttpStatus::ok, {{"end_session_url", end_session_url}});
  r.set(bh::field::set_cookie, cookie.SetCookie("", 0));
  return r;
}

}  // namespace septa::rest
