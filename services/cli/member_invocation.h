// septactl tenant member list|add|set-role|remove: their words and flags
// while CLI11 parses (invocation.cc defines the rest of the command line).
#pragma once

#include <optional>

#include "services/cli/invocation.h"

namespace CLI {
class App;
class Validator;
}  // namespace CLI

namespace septa::cli {

struct MemberCommands {
  MemberList list{};
  MemberAdd add{};
  MemberSetRole set_role{};
  MemberRemove remove{};
  CLI::App* list_command = nullptr;
  CLI::App* add_command = nullptr;
  CLI::App* set_role_command = nullptr;
  CLI::App* remove_command = nullptr;
};

// `tenant member ...` under `tenant`; `etag` checks --etag.
void DefineMemberCommands(CLI::App& tenant, MemberCommands& m, const CLI::Validator& etag);
// The member command that was parsed, if one was.
std::optional<Command> SelectedMemberCommand(MemberCommands& m);

}  // namespace septa::cli
