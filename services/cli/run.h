// septactl as a function: argv in, text out, an exit code back. The main
// and the tests call this; nothing here touches the process environment.
#pragma once

#include <functional>
#include <istream>
#include <optional>
#include <ostream>
#include <stop_token>
#include <string>
#include <vector>

#include "common/clock.h"

namespace septa::oidc {
class ProviderHttp;
}

namespace septa::cli {

// The parts of the process environment septactl reads.
struct Environment {
  std::string home;                        // for ~/.config/septa/config.yaml
  std::optional<std::string> septa_token;  // $SEPTA_TOKEN
  const Clock* clock = nullptr;            // for --wait and login; null: the system clock
  std::istream* in = nullptr;              // for diff and apply -f -; null: no standard input
  // The value of an environment variable (--oidc-token-env names one);
  // null: none is set.
  std::function<std::optional<std::string>(const std::string&)> variable{};
  // HTTP to OpenID providers (login, logout, refreshing a login's ID
  // token); null: the real one (services/oidc/provider_http.h).
  oidc::ProviderHttp* provider_http = nullptr;
  // septactl login's wait for the approval: from the call on, Ctrl-C
  // requests a stop of the returned token instead of ending the process;
  // null: Ctrl-C ends it as always.
  std::function<std::stop_token()> catch_interrupt{};
};

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;      // the call failed, or no server
inline constexpr int kExitUsage = 2;        // bad command line or config file
inline constexpr int kExitWaitTimeout = 3;  // --wait gave up: the call worked, the state did not settle
// diff and apply have exit codes of their own (services/cli/apply_command.h).

// `args` without the program name. Results go to `out`; an error is one
// line on `err`.
int RunSeptactl(const std::vector<std::string>& args, const Environment& env, std::ostream& out, std::ostream& err);

}  // namespace septa::cli
