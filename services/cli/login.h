// septactl login / logout / auth token: a person's session at the
// company's OpenID provider, signed in by the device flow (device_flow.h)
// and kept in the config file's `login:` block (config_file.h, mode 0600);
// its ID token is the bearer septactl sends to septad when no other
// credential is given (--token, the file's token:, $SEPTA_TOKEN and
// --oidc-token-env all win over it), refreshed when it has expired or
// expires within 30 s. docs/identity.md, "septactl login".
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <ostream>
#include <stop_token>
#include <string>

#include "common/clock.h"
#include "common/status.h"
#include "services/cli/config_file.h"
#include "services/cli/invocation.h"
#include "services/oidc/provider_http.h"

namespace septa::cli {

// An ID token this close to its expiry is refreshed before it is sent.
inline constexpr std::chrono::seconds kRefreshMargin{30};

// Where the login lives and what it talks with.
struct LoginEnvironment {
  std::filesystem::path config_path{};
  bool config_named = false;  // --config: logout and auth token want it to exist
  oidc::ProviderHttp* http = nullptr;
  const Clock* clock = nullptr;
  // From the call on, Ctrl-C requests a stop of the returned token (the
  // wait for the approval ends) instead of ending the process; null: none.
  std::function<std::stop_token()> catch_interrupt{};
  // --token, the file's token: or $SEPTA_TOKEN is set: it wins over a login.
  bool other_credential = false;
};

int RunLogin(const LoginCommand& command, const LoginEnvironment& env, std::ostream& out, std::ostream& err);
int RunLogout(const LoginEnvironment& env, std::ostream& out, std::ostream& err);
// Prints the login's current ID token (refreshed first when due) alone on a
// line, for scripts: curl -H "Authorization: Bearer $(septactl auth token)".
int RunAuthToken(const LoginEnvironment& env, std::ostream& out, std::ostream& err);

// The ID token of `login` (as read from `config_path`) to send to septad:
// as it is while it is valid for more than kRefreshMargin, else refreshed
// (refresh_token grant) and written back with the rotated refresh token,
// under a lock on `<config_path>.lock` so that two septactl processes never
// spend one refresh token twice (a provider takes a reused refresh token for
// a stolen one and revokes the whole sign-in). UNAUTHENTICATED when the
// sign-in has ended (run septactl login), UNAVAILABLE when the provider
// cannot be reached.
Result<std::string> LoginBearer(const std::filesystem::path& config_path, const LoginSession& login,
                                oidc::ProviderHttp& http, const Clock& clock);

}  // namespace septa::cli
