#include "services/rest/person_sign_in_routes.h"

#include <spdlog/spdlog.h>

#include <boost/beast/http/field.hpp>
#include <chrono>
#include <nlohmann/json.hpp>

namespace septa::rest {

namespace {

namespace bh = boost::beast::http;

// The binding cookie outlives the sign-in under way a little (clock skew).
constexpr long long kBindingMaxAgeSeconds = 15 * 60;
constexpr char kSignInPage[] = "/sign-in";

std::string Query(const http::Target& target, const char* key) {
  const auto found = target.query.find(key);
  return found == target.query.end() ? std::string() : found->second;
}

http::Response SeeOther(const std::string& location) {
  http::Response r(http::HttpStatus::see_other, 11);
  r.set(bh::field::location, location);
  r.set(bh::field::cache_control, "no-store");
  return r;
}

// The portal's sign-in page, saying why a sign-in opened no session.
http::Response ToSignInPage(core::SignInFailure failure) {
  return SeeOther(std::string(kSignInPage) + "?sign_in_error=" + std::string(core::SignInFailureName(failure)));
}

std::string RedirectUri(const http::Request& request, const SessionCookie& cookie) {
  return OwnOrigin(request, cookie.tls) + kSignInCallbackPath;
}

}  // namespace

http::Response ListSignInProviders(const core::PersonSignIn* sign_in) {
  nlohmann::json providers = nlohmann::json::array();
  if (sign_in != nullptr) {
    for (const core::SignInProviderInfo& p : sign_in->Providers()) {
      providers.push_back(
          {{"issuer", p.issuer},
           {"name", p.name},
           {"sign_in_url", "/v1/sessions/oidc/start?issuer=" + http::PercentEncodePathSegment(p.issuer)}});
    }
  }
  http::Response r(http::HttpStatus::ok, 11);
  r.set(bh::field::content_type, "application/json");
  r.body() = nlohmann::json{{"providers", providers}}.dump() + "\n";
  return r;
}

Result<http::Response> StartSignIn(core::PersonSignIn* sign_in, const http::Request& request,
                                   const http::Target& target, const SessionCookie& cookie, const std::string& client,
                                   const std::string& request_id) {
  if (sign_in == nullptr) {
    return InvalidArgument(
        "no identity provider signs people in to the portal here (oidc_issuers has none with "
        "client_secret_file)");
  }
  std::string return_to = Query(target, "return_to");
  if (return_to.empty()) return_to = "/";
  auto begun = sign_in->Begin(Query(target, "issuer"), return_to, RedirectUri(request, cookie), client, request_id);
  if (begun.status().code() == Code::kUnavailable) {
    spdlog::warn("sign-in: request_id={} cannot begin: {}", request_id, begun.status().message());
    return ToSignInPage(core::SignInFailure::kProviderUnavailable);
  }
  SEPTA_RETURN_IF_ERROR(begun);
  http::Response r = SeeOther(begun->authorization_url);
  r.set(bh::field::set_cookie, cookie.SetBinding(begun->browser_binding, kBindingMaxAgeSeconds));
  return r;
}

http::Response FinishSignIn(core::PersonSignIn* sign_in, const http::Request& request, const http::Target& target,
                            const SessionCookie& cookie, const std::string& request_id) {
  core::SignInOutcome outcome;
  if (sign_in == nullptr) {
    outcome.failure = core::SignInFailure::kExpired;
    outcome.reason = "no identity provider signs people in to the portal here";
  } else {
    outcome = sign_in->Finish(
        core::SignInCallback{
            .state = Query(target, "state"), .code = Query(target, "code"), .error = Query(target, "error")},
        cookie.FindBinding(request), RedirectUri(request, cookie), request_id);
  }
  if (!outcome.opened) {
    spdlog::warn("sign-in: request_id={} refused ({}): {}", request_id, core::SignInFailureName(outcome.failure),
                 outcome.reason);
    http::Response r = ToSignInPage(outcome.failure);
    r.set(bh::field::set_cookie, cookie.SetBinding("", 0));
    return r;
  }
  const core::PersonSession& session = outcome.opened->session;
  spdlog::info("sign-in: request_id={} {} signed in at {} (session {})", request_id, session.user, session.issuer,
               session.id);
  const auto max_age =
      std::chrono::duration_cast<std::chrono::seconds>(session.expire_time - session.create_time).count();
  http::Response r = SeeOther(outcome.opened->return_to);
  r.insert(bh::field::set_cookie, cookie.SetBinding("", 0));
  r.insert(bh::field::set_cookie, cookie.SetCookie(outcome.opened->cookie_value, max_age));
  return r;
}

}  // namespace septa::rest
