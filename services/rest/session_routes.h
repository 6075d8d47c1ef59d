// The portal's sessions on the REST transport (services/core/session_service.h
// holds the rules): the cookie that carries one, the checks that keep another
// site from using it, and the three routes of /v1/sessions. These are REST's
// own (a cookie is HTTP's), so they are not RPCs of the protos; api/openapi.yaml
// describes them beside the RPCs (services/apiv1/openapi.cc).
//
//   POST   /v1/sessions          {"token": "<API token>"} or {"sign_in_code": "<code>"}
//                                (or the token as Authorization: Bearer): 201, the
//                                session as JSON and its cookie
//   GET    /v1/sessions/current  the session of the cookie (with its CSRF token)
//   DELETE /v1/sessions/current  signs out: the session is revoked, the cookie cleared
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "services/core/auth.h"
#include "services/core/people.h"
#include "services/core/person_sign_in.h"
#include "services/core/session_service.h"
#include "services/http/server.h"

namespace septa::rest {

// The header every state-changing request authenticated by the cookie carries.
inline constexpr char kCsrfHeader[] = "X-Septa-CSRF";

// How the cookie is named and flagged: over TLS `__Host-` prefixed and
// `Secure` (the browser then keeps it to this origin's host, path /); over
// plain HTTP (loopback) neither, as a browser would not send it back.
struct SessionCookie {
  bool tls = false;
  std::string_view name() const { return tls ? "__Host-septa_session" : "septa_session"; }
  // The Set-Cookie value: `value` for `max_age_seconds` (0 clears it).
  std::string SetCookie(std::string_view value, long long max_age_seconds) const;
  // The cookie's value in the request's Cookie headers; empty when absent.
  std::string_view Find(const http::Request& request) const;

  // The cookie that binds a person's sign-in under way to the browser that
  // began it (person_sign_in_routes.h): SameSite=Lax, as it must come back
  // on the provider's redirect, a cross-site top-level navigation.
  std::string_view binding_name() const { return tls ? "__Host-septa_sign_in" : "septa_sign_in"; }
  std::string SetBinding(std::string_view value, long long max_age_seconds) const;
  std::string_view FindBinding(const http::Request& request) const;
};

// This server's origin as the request names it (scheme and Host): where
// the portal is, for the provider's redirects.
std::string OwnOrigin(const http::Request& request, bool tls);

// For a request authenticated by the cookie: a method that changes state
// must come from this origin (Origin equal to the request's own scheme and
// Host) and carry the session's CSRF token. kPermissionDenied otherwise.
Status CheckSameOrigin(const http::Request& request, bool tls, std::string_view cookie_value);

// The session routes' answers.
Result<http::Response> CreateSession(core::SessionService& sessions, const http::Request& request,
                                     const SessionCookie& cookie, const std::string& request_id);
http::Response CurrentSession(const core::AuthenticatedSession& session, std::string_view cookie_value);
// A person's session (`session.person`) is ended by `sign_in`: 200 with the
// provider's logout URL for the browser to visit, or 204 when it has none.
Result<http::Response> DeleteSession(core::SessionService& sessions, core::PersonSignIn* sign_in,
                                     const core::AuthenticatedSession& session, const core::RequestContext& ctx,
                                     const http::Request& request, const SessionCookie& cookie);

}  // namespace septa::rest
