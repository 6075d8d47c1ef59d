// People's sign-in to the portal on the REST transport (the rules:
// services/core/person_sign_in.h). The browser navigates through these
// (they answer redirects, not JSON, but for refusals of what the portal
// never sends); api/openapi.yaml describes them beside the RPCs.
//
//   GET /v1/sessions/providers         {"providers":[{"issuer","name","sign_in_url"}]}
//   GET /v1/sessions/oidc/start?issuer=<issuer>&return_to=<path>
//       303 to the provider's sign-in, a cookie binding the flow to this
//       browser set; 400 for an unknown issuer or a return_to that is no
//       path of the portal
//   GET /v1/sessions/oidc/callback?code=..&state=..   (the provider's redirect)
//       303 to return_to with the session's cookie, or to
//       /sign-in?sign_in_error=<expired|browser_mismatch|denied|
//       provider_unavailable|refused>
#pragma once

#include <string>

#include "common/status.h"
#include "services/core/person_sign_in.h"
#include "services/http/server.h"
#include "services/http/target.h"
#include "services/rest/session_routes.h"

namespace septa::rest {

inline constexpr char kSignInCallbackPath[] = "/v1/sessions/oidc/callback";

// `sign_in` null: no provider signs people in to the portal.
http::Response ListSignInProviders(const core::PersonSignIn* sign_in);
// `client`: the address the request came from.
Result<http::Response> StartSignIn(core::PersonSignIn* sign_in, const http::Request& request,
                                   const http::Target& target, const SessionCookie& cookie, const std::string& client,
                                   const std::string& request_id);
http::Response FinishSignIn(core::PersonSignIn* sign_in, const http::Request& request, const http::Target& target,
                            const SessionCookie& cookie, const std::string& request_id);

}  // namespace septa::rest
