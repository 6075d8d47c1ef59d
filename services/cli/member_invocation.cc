#include "services/cli/member_invocation.h"

#include <CLI/CLI.hpp>

namespace septa::cli {

namespace {
constexpr char kMemberHelp[] = "user:NAME or group:NAME, the name as the identity provider's claim gives it";
const std::vector<std::string> kMemberRoles = {"owner", "editor", "viewer"};
}  // namespace

void DefineMemberCommands(CLI::App& tenant, MemberCommands& m, const CLI::Validator& etag) {
  auto* member = tenant
                     .add_subcommand("member",
                                     "manage a tenant's members: users and groups of the identity providers (they "
                                     "grant access only once people sign in)")
                     ->require_subcommand(1);
  m.list_command = member->add_subcommand("list", "list a tenant's members");
  m.list_command->add_option("TENANT", m.list.tenant, "tenant name")->required();

  m.add_command = member->add_subcommand("add", "add a member to a tenant");
  m.add_command->add_option("TENANT", m.add.tenant, "tenant name")->required();
  m.add_command->add_option("MEMBER", m.add.member, kMemberHelp)->required();
  m.add_command->add_option("--role", m.add.role, "owner, editor or viewer")
      ->required()
      ->check(CLI::IsMember(kMemberRoles));

  m.set_role_command = member->add_subcommand("set-role", "change a member's role");
  m.set_role_command->add_option("TENANT", m.set_role.tenant, "tenant name")->required();
  m.set_role_command->add_option("MEMBER", m.set_role.member, kMemberHelp)->required();
  m.set_role_command->add_option("ROLE", m.set_role.role, "owner, editor or viewer")
      ->required()
      ->check(CLI::IsMember(kMemberRoles));
  m.set_role_command->add_option("--etag", m.set_role.etag, "only change it if the member still has this etag")
      ->check(etag);

  m.remove_command = member->add_subcommand("remove", "remove a member from a tenant");
  m.remove_command->add_option("TENANT", m.remove.tenant, "tenant name")->required();
  m.remove_command->add_option("MEMBER", m.remove.member, kMemberHelp)->required();
  m.remove_command->add_option("--etag", m.remove.etag, "only remove it if the member still has this etag")
      ->check(etag);
}

std::optional<Command> SelectedMemberCommand(MemberCommands& m) {
  if (m.list_command->parsed()) return Command(std::move(m.list));
  if (m.add_command->parsed()) return Command(std::move(m.add));
  if (m.set_role_command->parsed()) return Command(std::move(m.set_role));
  if (m.remove_command->parsed()) return Command(std::move(m.remove));
  return std::nullopt;
}

}  // namespace septa::cli
