#include "services/cli/invocation.h"

#include <CLI/CLI.hpp>

#include <sstream>

namespace septa::cli {

namespace {

// --label k=v, repeated, into a map; a later value for the same key wins.
Result<std::map<std::string, std::string>> ParseLabels(const std::vector<std::string>& items) {
  std::map<std::string, std::string> labels;
  for (const auto& item : items) {
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) {
      return InvalidArgument("--label must be key=value, not \"" + item + "\"");
    }
    labels[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return labels;
}

// The flags' storage while CLI11 parses; turned into an Invocation after.
struct Flags {
  std::string server, token, config_path, ca_file, output = "table";
  bool tls = false;
  double timeout_ms = 10'000;
  TenantCreate tenant_create;
  std::vector<std::string> create_labels;
  TenantGet tenant_get;
  TenantList tenant_list;
  TenantUpdate tenant_update;
  std::string update_display_name, update_tier, update_state;
  std::vector<std::string> update_labels;
  TenantDelete tenant_delete;
  TierGet tier_get;
  TokenCreate token_create;
  TokenRevoke token_revoke;
};

// Sub-commands of one CLI11 parse, kept to find out which one ran.
struct Commands {
  CLI::App* tenant_create;
  CLI::App* tenant_get;
  CLI::App* tenant_list;
  CLI::App* tenant_update;
  CLI::Option* update_display_name;
  CLI::Option* update_labels;
  CLI::Option* update_tier;
  CLI::Option* update_state;
  CLI::App* tenant_delete;
  CLI::App* tier_list;
  CLI::App* tier_get;
  CLI::App* token_create;
  CLI::App* token_list;
  CLI::App* token_revoke;
  CLI::App* inventory;
};

const std::map<std::string, double> kMillisecondsPerUnit{{"ms", 1}, {"s", 1000}, {"m", 60'000}, {"h", 3'600'000}};
constexpr auto kUnitRequired = static_cast<CLI::AsNumberWithUnit::Options>(CLI::AsNumberWithUnit::CASE_SENSITIVE |
                                                                           CLI::AsNumberWithUnit::UNIT_REQUIRED);

Commands Define(CLI::App& app, Flags& f) {
  app.require_subcommand(1);
  // Global flags may also follow the command (septactl tenant list -o json);
  // sub-commands created after this inherit it.
  app.fallthrough();
  app.add_option("--server", f.server, "septad's gRPC address host:port (default: config file, else 127.0.0.1:9090)");
  app.add_option("--token", f.token, "bearer token (default: config file, else $SEPTA_TOKEN)");
  app.add_option("--config", f.config_path, "config file with server and token (default ~/.config/septa/config.yaml)");
  app.add_option("--ca-file", f.ca_file, "connect with TLS and check septad's certificate against this CA (PEM)");
  app.add_flag("--tls", f.tls, "connect with TLS, checking septad's certificate against the system's CAs");
  app.add_option("-o,--output", f.output, "output format")->check(CLI::IsMember({"table", "json", "yaml"}));
  app.add_option("--timeout", f.timeout_ms, "deadline of each call, e.g. 500ms, 10s, 2m")
      ->transform(CLI::AsNumberWithUnit(kMillisecondsPerUnit, kUnitRequired))
      ->check(CLI::PositiveNumber);

  Commands c{};
  auto* tenant = app.add_subcommand("tenant", "manage tenants")->require_subcommand(1);
  c.tenant_create = tenant->add_subcommand("create", "create a tenant");
  c.tenant_create->add_option("NAME", f.tenant_create.name, "tenant name (DNS label)")->required();
  c.tenant_create->add_option("--tier", f.tenant_create.tier, "trust tier (septactl tier list)")->required();
  c.tenant_create->add_option("--display-name", f.tenant_create.display_name, "human-readable name");
  c.tenant_create->add_option("--label", f.create_labels, "label key=value (repeatable)");
  c.tenant_create->add_option("--idempotency-key", f.tenant_create.idempotency_key,
                              "a retry with the same key returns the first result");

  c.tenant_get = tenant->add_subcommand("get", "show one tenant");
  c.tenant_get->add_option("NAME", f.tenant_get.name, "tenant name")->required();

  c.tenant_list = tenant->add_subcommand("list", "list tenants");
  c.tenant_list->add_option("--filter", f.tenant_list.filter, "e.g. 'trust_tier=shared AND labels.team=ml'");
  c.tenant_list->add_option("--page-size", f.tenant_list.page_size, "tenants per page (1-500)");
  c.tenant_list->add_option("--page-token", f.tenant_list.page_token, "continue a previous list");
  c.tenant_list->add_flag("--all", f.tenant_list.all_pages, "fetch every page");

  c.tenant_update = tenant->add_subcommand("update", "change the given fields of a tenant");
  c.tenant_update->add_option("NAME", f.tenant_update.name, "tenant name")->required();
  c.update_display_name = c.tenant_update->add_option("--display-name", f.update_display_name, "human-readable name");
  c.update_labels =
      c.tenant_update->add_option("--label", f.update_labels, "label key=value (repeatable; replaces all)");
  c.update_tier = c.tenant_update->add_option("--tier", f.update_tier, "trust tier");
  c.update_state = c.tenant_update->add_option("--state", f.update_state, "ACTIVE or SUSPENDED")
                       ->check(CLI::IsMember({"ACTIVE", "SUSPENDED"}));
  c.tenant_update->add_option("--etag", f.tenant_update.etag, "only update if the tenant still has this etag");

  c.tenant_delete = tenant->add_subcommand("delete", "delete a tenant");
  c.tenant_delete->add_option("NAME", f.tenant_delete.name, "tenant name")->required();
  c.tenant_delete->add_option("--etag", f.tenant_delete.etag, "only delete if the tenant still has this etag");

  auto* tier = app.add_subcommand("tier", "show trust tiers")->require_subcommand(1);
  c.tier_list = tier->add_subcommand("list", "list trust tiers");
  c.tier_get = tier->add_subcommand("get", "show one trust tier");
  c.tier_get->add_option("NAME", f.tier_get.name, "tier name")->required();

  auto* token = app.add_subcommand("token", "manage API tokens")->require_subcommand(1);
  c.token_create = token->add_subcommand("create", "issue a token (the secret is printed once)");
  c.token_create->add_option("--principal", f.token_create.principal, "admin or tenant:NAME")->required();
  c.token_create->add_option("--role", f.token_create.role, "owner or viewer")
      ->required()
      ->check(CLI::IsMember({"owner", "viewer"}));
  f.token_create.ttl = "24h";
  c.token_create
      ->add_option("--ttl", f.token_create.ttl, "lifetime, e.g. 90m, 24h, 1h30m (capped by the tenant's tier)")
      ->capture_default_str();
  c.token_create->add_option("--description", f.token_create.description, "what the token is for");
  c.token_list = token->add_subcommand("list", "list tokens");
  c.token_revoke = token->add_subcommand("revoke", "revoke a token");
  c.token_revoke->add_option("ID", f.token_revoke.id, "token id")->required();

  c.inventory = app.add_subcommand("inventory", "list the host cluster's nodes and GPUs and who holds what (admin)");
  return c;
}

Result<Command> SelectedCommand(const Commands& c, Flags& f) {
  if (c.tenant_create->parsed()) {
    auto labels = ParseLabels(f.create_labels);
    SEPTA_RETURN_IF_ERROR(labels);
    f.tenant_create.labels = std::move(*labels);
    return Command(std::move(f.tenant_create));
  }
  if (c.tenant_get->parsed()) return Command(std::move(f.tenant_get));
  if (c.tenant_list->parsed()) return Command(std::move(f.tenant_list));
  if (c.tenant_update->parsed()) {
    TenantUpdate& u = f.tenant_update;
    if (c.update_display_name->count() > 0) u.display_name = f.update_display_name;
    if (c.update_tier->count() > 0) u.tier = f.update_tier;
    if (c.update_state->count() > 0) u.state = f.update_state;
    if (c.update_labels->count() > 0) {
      auto labels = ParseLabels(f.update_labels);
      SEPTA_RETURN_IF_ERROR(labels);
      u.labels = std::move(*labels);
    }
    if (!u.display_name && !u.tier && !u.state && !u.labels) {
      return InvalidArgument("nothing to update: give --display-name, --label, --tier or --state");
    }
    return Command(std::move(u));
  }
  if (c.tenant_delete->parsed()) return Command(std::move(f.tenant_delete));
  if (c.tier_list->parsed()) return Command(TierList{});
  if (c.tier_get->parsed()) return Command(std::move(f.tier_get));
  if (c.token_create->parsed()) return Command(std::move(f.token_create));
  if (c.token_list->parsed()) return Command(TokenList{});
  if (c.inventory->parsed()) return Command(InventoryList{});
  return Command(std::move(f.token_revoke));
}

}  // namespace

Result<ParsedCommandLine> ParseCommandLine(const std::vector<std::string>& args) {
  CLI::App app{"septactl: administer Septa over its gRPC API", "septactl"};
  Flags flags;
  const Commands commands = Define(app, flags);
  // CLI11 takes the arguments last first.
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    std::ostringstream help, unused;
    app.exit(e, help, unused);
    return ParsedCommandLine(help.str());
  } catch (const CLI::CallForAllHelp& e) {
    std::ostringstream help, unused;
    app.exit(e, help, unused);
    return ParsedCommandLine(help.str());
  } catch (const CLI::ParseError& e) {
    return InvalidArgument(std::string(e.what()) + " (see septactl --help)");
  }

  Invocation invocation;
  GlobalOptions& options = invocation.options;
  if (!flags.server.empty()) options.server = flags.server;
  if (app.get_option("--token")->count() > 0) options.token = flags.token;
  if (!flags.config_path.empty()) options.config_path = flags.config_path;
  if (!flags.ca_file.empty()) options.ca_file = flags.ca_file;
  options.tls = flags.tls;
  auto output = ParseOutputFormat(flags.output);
  SEPTA_RETURN_IF_ERROR(output);
  options.output = *output;
  options.timeout = std::chrono::milliseconds(static_cast<std::int64_t>(flags.timeout_ms));
  auto command = SelectedCommand(commands, flags);
  SEPTA_RETURN_IF_ERROR(command);
  invocation.command = std::move(*command);
  return ParsedCommandLine(std::move(invocation));
}

}  // namespace septa::cli
