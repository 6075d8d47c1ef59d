// septactl login / logout / auth token: their flags while CLI11 parses
// (invocation.cc defines the rest of the command line).
#pragma once

#include <optional>

#include "services/cli/invocation.h"

namespace CLI {
class App;
}  // namespace CLI

namespace septa::cli {

// What the device flow asks for unless --scope says otherwise: an ID token
// (openid) with the person's name, email and groups, and a refresh token
// (offline_access).
inline constexpr char kDefaultLoginScope[] = "openid offline_access profile email groups";

struct LoginCommands {
  LoginCommand login{};
  double max_wait_ms = 900'000;
  CLI::App* login_command = nullptr;
  CLI::App* logout_command = nullptr;
  CLI::App* token_command = nullptr;
};

void DefineLoginCommands(CLI::App& app, LoginCommands& l);
// The login command that was parsed, if one was.
std::optional<Result<Command>> SelectedLoginCommand(LoginCommands& l);

}  // namespace septa::cli
