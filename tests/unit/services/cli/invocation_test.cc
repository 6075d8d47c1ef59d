#include "services/cli/invocation.h"

#include <gtest/gtest.h>

namespace septa::cli {
namespace {

Invocation Parse(const std::vector<std::string>& args) {
  auto parsed = ParseCommandLine(args);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
  if (!parsed.ok() || !std::holds_alternative<Invocation>(*parsed)) return {};
  return std::get<Invocation>(*parsed);
}

std::string UsageError(const std::vector<std::string>& args) {
  auto parsed = ParseCommandLine(args);
  if (parsed.ok()) return "(parsed)";
  EXPECT_EQ(parsed.status().code(), Code::kInvalidArgument);
  return parsed.status().message();
}

TEST(Invocation, GlobalDefaults) {
  const auto inv = Parse({"tier", "list"});
  EXPECT_FALSE(inv.options.server.has_value());
  EXPECT_FALSE(inv.options.token.has_value());
  EXPECT_FALSE(inv.options.config_path.has_value());
  EXPECT_FALSE(inv.options.ca_file.has_value());
  EXPECT_FALSE(inv.options.tls);
  EXPECT_EQ(inv.options.output, OutputFormat::kTable);
  EXPECT_EQ(inv.options.timeout, std::chrono::seconds(10));
  EXPECT_TRUE(std::holds_alternative<TierList>(inv.command));
}

TEST(Invocation, GlobalFlags) {
  const auto inv = Parse(
      {"--server", "h:7", "--token", "t", "--config", "/c.yaml", "-o", "yaml", "--timeout", "500ms", "token", "list"});
  EXPECT_EQ(inv.options.server, "h:7");
  EXPECT_EQ(inv.options.token, "t");
  EXPECT_EQ(inv.options.config_path, "/c.yaml");
  EXPECT_EQ(inv.options.output, OutputFormat::kYaml);
  EXPECT_EQ(inv.options.timeout, std::chrono::milliseconds(500));
  EXPECT_TRUE(std::holds_alternative<TokenList>(inv.command));
  EXPECT_EQ(Parse({"--timeout", "2m", "tier", "list"}).options.timeout, std::chrono::minutes(2));
  EXPECT_EQ(Parse({"--output", "json", "tier", "list"}).options.output, OutputFormat::kJson);
  EXPECT_EQ(Parse({"--ca-file", "/ca.pem", "tier", "list"}).options.ca_file, "/ca.pem");
  EXPECT_TRUE(Parse({"--tls", "tier", "list"}).options.tls);
}

TEST(Invocation, GlobalFlagsMayFollowTheCommand) {
  const auto inv = Parse({"tenant", "list", "-o", "json", "--server", "h:7", "--all"});
  EXPECT_EQ(inv.options.output, OutputFormat::kJson);
  EXPECT_EQ(inv.options.server, "h:7");
  EXPECT_TRUE(std::get<TenantList>(inv.command).all_pages);
}

TEST(Invocation, TenantCreate) {
  const auto inv = Parse({"tenant", "create", "acme", "--tier", "shared", "--display-name", "Acme", "--label",
                          "team=ml", "--label", "env=a=b", "--idempotency-key", "k1"});
  const auto& c = std::get<TenantCreate>(inv.command);
  EXPECT_EQ(c.name, "acme");
  EXPECT_EQ(c.tier, "shared");
  EXPECT_EQ(c.display_name, "Acme");
  EXPECT_EQ(c.labels, (std::map<std::string, std::string>{{"team", "ml"}, {"env", "a=b"}}));
  EXPECT_EQ(c.idempotency_key, "k1");
}

TEST(Invocation, TenantUpdateKeepsOnlyTheGivenFields) {
  const auto inv = Parse({"tenant", "update", "acme", "--state", "SUSPENDED", "--etag", "e7"});
  const auto& u = std::get<TenantUpdate>(inv.command);
  EXPECT_EQ(u.name, "acme");
  EXPECT_EQ(u.state, "SUSPENDED");
  EXPECT_EQ(u.etag, "e7");
  EXPECT_FALSE(u.display_name.has_value());
  EXPECT_FALSE(u.labels.has_value());
  EXPECT_FALSE(u.tier.has_value());

  const auto cleared = std::get<TenantUpdate>(Parse({"tenant", "update", "acme", "--display-name", ""}).command);
  EXPECT_EQ(cleared.display_name, "");  // given, though empty
  const auto labelled = std::get<TenantUpdate>(Parse({"tenant", "update", "a", "--label", "x=1"}).command);
  EXPECT_EQ(labelled.labels, (std::map<std::string, std::string>{{"x", "1"}}));
}

TEST(Invocation, OtherCommands) {
  const auto list = std::get<TenantList>(
      Parse({"tenant", "list", "--filter", "trust_tier=shared", "--page-size", "2", "--all"}).command);
  EXPECT_EQ(list.filter, "trust_tier=shared");
  EXPECT_EQ(list.page_size, 2);
  EXPECT_TRUE(list.all_pages);
  EXPECT_EQ(std::get<TenantGet>(Parse({"tenant", "get", "acme"}).command).name, "acme");
  const auto del = std::get<TenantDelete>(Parse({"tenant", "delete", "acme", "--etag", "e"}).command);
  EXPECT_EQ(del.name, "acme");
  EXPECT_EQ(del.etag, "e");
  EXPECT_EQ(std::get<TierGet>(Parse({"tier", "get", "shared"}).command).name, "shared");
  EXPECT_EQ(std::get<TokenRevoke>(Parse({"token", "revoke", "tok_1"}).command).id, "tok_1");
}

TEST(Invocation, TokenCreateDefaults) {
  const auto c =
      std::get<TokenCreate>(Parse({"token", "create", "--principal", "tenant:acme", "--role", "owner"}).command);
  EXPECT_EQ(c.principal, "tenant:acme");
  EXPECT_EQ(c.role, "owner");
  EXPECT_EQ(c.ttl, "24h");
  const auto v = std::get<TokenCreate>(
      Parse({"token", "create", "--principal", "admin", "--role", "viewer", "--ttl", "90m", "--description", "ci"})
          .command);
  EXPECT_EQ(v.role, "viewer");
  EXPECT_EQ(v.ttl, "90m");
  EXPECT_EQ(v.description, "ci");
}

TEST(Invocation, UsageErrors) {
  EXPECT_NE(UsageError({"tenant", "create", "acme"}).find("--tier is required"), std::string::npos);
  EXPECT_NE(UsageError({}).find("subcommand"), std::string::npos);
  EXPECT_NE(UsageError({"tenant"}).find("subcommand"), std::string::npos);
  EXPECT_NE(UsageError({"tenant", "frobnicate"}).find("subcommand"), std::string::npos);
  EXPECT_NE(UsageError({"tenant", "update", "a", "--state", "GONE"}).find("GONE"), std::string::npos);
  EXPECT_NE(UsageError({"-o", "xml", "tier", "list"}).find("xml"), std::string::npos);
  EXPECT_NE(UsageError({"--timeout", "10", "tier", "list"}).find("--timeout: Missing mandatory unit"),
            std::string::npos);
  EXPECT_NE(UsageError({"token", "create", "--principal", "admin", "--role", "god"}).find("god"), std::string::npos);
  EXPECT_NE(UsageError({"token", "create", "--principal", "admin"}).find("--role is required"), std::string::npos);
  EXPECT_EQ(UsageError({"tenant", "create", "a", "--tier", "t", "--label", "novalue"}),
            "--label must be key=value, not \"novalue\"");
  EXPECT_EQ(UsageError({"tenant", "update", "a", "--etag", "e"}),
            "nothing to update: give --display-name, --label, --tier or --state");
  EXPECT_NE(UsageError({"tenant", "list", "--page-size", "many"}).find("(see septactl --help)"), std::string::npos);
}

TEST(Invocation, HelpIsText) {
  auto top = ParseCommandLine({"--help"});
  ASSERT_TRUE(top.ok());
  ASSERT_TRUE(std::holds_alternative<std::string>(*top));
  EXPECT_NE(std::get<std::string>(*top).find("tenant"), std::string::npos);
  auto create = ParseCommandLine({"tenant", "create", "--help"});
  ASSERT_TRUE(create.ok());
  ASSERT_TRUE(std::holds_alternative<std::string>(*create));
  EXPECT_NE(std::get<std::string>(*create).find("--idempotency-key"), std::string::npos);
}

}  // namespace
}  // namespace septa::cli
