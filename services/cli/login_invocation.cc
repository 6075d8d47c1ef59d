#include "services/cli/login_invocation.h"

#include <CLI/CLI.hpp>

#include <algorithm>

namespace septa::cli {

namespace {
const std::map<std::string, double> kLoginMillisecondsPerUnit{{"s", 1000}, {"m", 60'000}, {"h", 3'600'000}};
}  // namespace

void DefineLoginCommands(CLI::App& app, LoginCommands& l) {
  l.login.scope = kDefaultLoginScope;
  l.login_command = app.add_subcommand(
      "login",
      "sign in with your company's OpenID provider (device flow): the session goes to the config file (mode 0600) "
      "and its ID token is sent to septad when no --token, token:, $SEPTA_TOKEN or --oidc-token-env is given");
  l.login_command->add_option("--issuer", l.login.issuer, "the provider's issuer URL, exactly as its tokens' iss")
      ->required();
  l.login_command
      ->add_option("--client-id", l.login.client_id,
                   "septactl's client id at the provider (a public "
                   "client allowed the device code grant)")
      ->required();
  l.login_command->add_option("--scope", l.login.scope, "the scopes asked for")->capture_default_str();
  l.login_command->add_option("--max-wait", l.max_wait_ms, "the longest wait for the approval, e.g. 5m (default 15m)")
      ->transform(CLI::AsNumberWithUnit(kLoginMillisecondsPerUnit, CLI::AsNumberWithUnit::UNIT_REQUIRED))
      ->check(CLI::PositiveNumber);
  l.logout_command = app.add_subcommand(
      "logout", "revoke the login's refresh token at the provider (best effort) and remove it from the config file");
  auto* auth = app.add_subcommand("auth", "the login's credentials")->require_subcommand(1);
  l.token_command = auth->add_subcommand(
      "token", "print the login's ID token, refreshed first when it expires within 30 s (for scripts)");
}

std::optional<Result<Command>> SelectedLoginCommand(LoginCommands& l) {
  if (l.login_command->parsed()) {
    const std::vector<std::string> scopes = CLI::detail::split(l.login.scope, ' ');
    if (std::find(scopes.begin(), scopes.end(), "openid") == scopes.end()) {
      return Result<Command>(InvalidArgument("--scope must include openid: septad takes the ID token"));
    }
    l.login.max_wait = std::chrono::seconds(static_cast<std::int64_t>(l.max_wait_ms / 1000));
    if (l.login.max_wait.count() < 1) return Result<Command>(InvalidArgument("--max-wait must be at least 1s"));
    return Result<Command>(Command(std::move(l.login)));
  }
  if (l.logout_command->parsed()) return Result<Command>(Command(LogoutCommand{}));
  if (l.token_command->parsed()) return Result<Command>(Command(AuthTokenCommand{}));
  return std::nullopt;
}

}  // namespace septa::cli
