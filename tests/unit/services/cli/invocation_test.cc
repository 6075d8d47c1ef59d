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

TEST(Invocation, TenantQuotaFlagsSetOnlyTheGivenLimits) {
  const auto u = std::get<TenantUpdate>(Parse({"tenant", "update", "acme", "--quota-gpus", "2.5", "--quota-cpus", "16",
                                               "--quota-pods", "unlimited", "--quota-vclusters", "0"})
                                            .command);
  EXPECT_EQ(u.quota,
            (QuotaLimits{{"gpu_milli", 2500}, {"cpu_milli", 16000}, {"pods", std::nullopt}, {"vclusters", 0}}));
  EXPECT_FALSE(u.state.has_value());
  const auto c = std::get<TenantCreate>(
      Parse({"tenant", "create", "acme", "--tier", "shared", "--quota-gpus", "0.125", "--quota-memory-mib", "4096"})
          .command);
  EXPECT_EQ(c.quota, (QuotaLimits{{"gpu_milli", 125}, {"memory_mib", 4096}}));
  EXPECT_TRUE(std::get<TenantCreate>(Parse({"tenant", "create", "a", "--tier", "shared"}).command).quota.empty());
  for (const char* bad : {"-1", "1.2345", "four", "1.", "", "3000000"}) {
    EXPECT_EQ(UsageError({"tenant", "update", "a", "--quota-gpus", bad}).rfind("--quota-gpus", 0), 0u) << bad;
  }
  EXPECT_EQ(UsageError({"tenant", "update", "a", "--quota-pods", "1.5"}),
            "--quota-pods must be a whole number or \"unlimited\", not \"1.5\"");
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
            "nothing to update: give --display-name, --label, --tier, --state or --quota-*");
  EXPECT_NE(UsageError({"tenant", "list", "--page-size", "many"}).find("(see septactl --help)"), std::string::npos);
  // Issue 28 L8's sibling: an empty --etag would be no precondition; every command that takes one refuses it.
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"tenant", "update", "a", "--display-name", "x", "--etag", ""},
                                             {"tenant", "delete", "a", "--etag", ""},
                                             {"vcluster", "update", "a", "b", "--pods", "3", "--etag", ""},
                                             {"vcluster", "delete", "a", "b", "--etag", ""},
                                             {"vcluster", "sleep", "a", "b", "--etag", ""},
                                             {"vcluster", "wake", "a", "b", "--etag", ""},
                                             {"tenant", "member", "set-role", "a", "user:x", "owner", "--etag", ""},
                                             {"tenant", "member", "remove", "a", "user:x", "--etag", ""}}) {
    const std::string error = UsageError(args);
    EXPECT_NE(error.find("--etag"), std::string::npos) << args[0] << " " << args[1] << ": " << error;
    EXPECT_NE(error.find("names no etag"), std::string::npos) << args[0] << " " << args[1] << ": " << error;
  }
}

TEST(Invocation, TenantMemberCommandsTakeTheTenantTheMemberAndTheRole) {
  EXPECT_EQ(std::get<MemberList>(Parse({"tenant", "member", "list", "acme"}).command).tenant, "acme");

  const auto add = std::get<MemberAdd>(
      Parse({"tenant", "member", "add", "acme", "user:alice@acme.test", "--role", "editor"}).command);
  EXPECT_EQ(add.tenant, "acme");
  EXPECT_EQ(add.member, "user:alice@acme.test");
  EXPECT_EQ(add.role, "editor");

  const auto set = std::get<MemberSetRole>(
      Parse({"tenant", "member", "set-role", "acme", "group:/eng/ml team", "viewer", "--etag", "3"}).command);
  EXPECT_EQ(set.tenant, "acme");
  EXPECT_EQ(set.member, "group:/eng/ml team");
  EXPECT_EQ(set.role, "viewer");
  EXPECT_EQ(set.etag, "3");

  const auto remove = std::get<MemberRemove>(Parse({"tenant", "member", "remove", "acme", "group:ml"}).command);
  EXPECT_EQ(remove.tenant, "acme");
  EXPECT_EQ(remove.member, "group:ml");
  EXPECT_EQ(remove.etag, "");
}

TEST(Invocation, TenantMemberCommandsRefuseAMissingOrUnknownRole) {
  EXPECT_NE(UsageError({"tenant", "member", "add", "acme", "user:alice"}).find("--role is required"),
            std::string::npos);
  const std::string unknown = UsageError({"tenant", "member", "add", "acme", "user:alice", "--role", "admin"});
  EXPECT_NE(unknown.find("admin"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("--role"), std::string::npos) << unknown;
  const std::string set = UsageError({"tenant", "member", "set-role", "acme", "user:alice", "root"});
  EXPECT_NE(set.find("ROLE"), std::string::npos) << set;
  EXPECT_NE(UsageError({"tenant", "member", "set-role", "acme", "user:alice"}).find("ROLE is required"),
            std::string::npos);
  EXPECT_NE(UsageError({"tenant", "member", "remove", "acme"}).find("MEMBER is required"), std::string::npos);
  EXPECT_NE(UsageError({"tenant", "member"}).find("subcommand"), std::string::npos);
}

TEST(Invocation, VclusterCreate) {
  const auto inv = Parse({"vcluster",
                          "create",
                          "acme",
                          "train",
                          "--mig",
                          "3g.40gb=2@H100-80GB",
                          "--mig",
                          "1g.10gb=1",
                          "--display-name",
                          "Train",
                          "--cpu-milli",
                          "4000",
                          "--pods",
                          "0",
                          "--priority",
                          "50",
                          "--idempotency-key",
                          "k",
                          "--wait",
                          "--timeout",
                          "2m"});
  const auto& c = std::get<VclusterCreate>(inv.command);
  EXPECT_EQ(c.tenant, "acme");
  EXPECT_EQ(c.name, "train");
  ASSERT_TRUE(c.spec.capacity.has_value());
  ASSERT_EQ(c.spec.capacity->mig_size(), 2);
  EXPECT_EQ(c.spec.capacity->mig(0).profile(), "3g.40gb");
  EXPECT_EQ(c.spec.capacity->mig(0).count(), 2);
  EXPECT_EQ(c.spec.capacity->mig(0).model(), "H100-80GB");
  EXPECT_EQ(c.spec.capacity->mig(1).model(), "");
  EXPECT_EQ(c.spec.display_name, "Train");
  EXPECT_EQ(c.spec.cpu_milli, 4000);
  EXPECT_EQ(c.spec.pods, 0);
  EXPECT_FALSE(c.spec.memory_mib.has_value());
  EXPECT_EQ(c.spec.priority, 50);
  EXPECT_FALSE(c.spec.over_quota_weight.has_value());
  EXPECT_EQ(c.idempotency_key, "k");
  EXPECT_TRUE(c.wait.wait);
  EXPECT_EQ(c.wait.timeout, std::chrono::minutes(2));
  EXPECT_EQ(inv.options.timeout, std::chrono::seconds(10));  // the call deadline is untouched

  const auto gpus = std::get<VclusterCreate>(Parse({"vcluster", "create", "a", "b", "--gpus", "=3"}).command);
  EXPECT_EQ(gpus.spec.capacity->gpus().count(), 3);
  EXPECT_EQ(gpus.spec.capacity->gpus().model(), "");
  EXPECT_FALSE(gpus.wait.wait);
  EXPECT_EQ(gpus.wait.timeout, std::chrono::seconds(60));
  const auto nodes =
      std::get<VclusterCreate>(Parse({"vcluster", "create", "a", "b", "--nodes", "A100-80GB=1"}).command);
  EXPECT_EQ(nodes.spec.capacity->nodes().model(), "A100-80GB");
  const auto shared = std::get<VclusterCreate>(
      Parse({"vcluster", "create", "a", "b", "--shared-milli", "500", "--shared-memory-mib", "4096"}).command);
  EXPECT_EQ(shared.spec.capacity->shared().milli_gpu(), 500);
  EXPECT_EQ(shared.spec.capacity->shared().gpu_memory_mib(), 4096);
}

TEST(Invocation, VclusterOtherCommands) {
  const auto update = std::get<VclusterUpdate>(
      Parse({"vcluster", "update", "acme", "train", "--mig", "3g.40gb=2", "--etag", "e", "--memory-mib", "0"}).command);
  EXPECT_EQ(update.spec.capacity->mig(0).count(), 2);
  EXPECT_EQ(update.spec.memory_mib, 0);
  EXPECT_FALSE(update.spec.display_name.has_value());
  EXPECT_EQ(update.etag, "e");
  const auto renamed = std::get<VclusterUpdate>(Parse({"vcluster", "update", "a", "b", "--display-name", ""}).command);
  EXPECT_FALSE(renamed.spec.capacity.has_value());
  EXPECT_EQ(renamed.spec.display_name, "");
  const auto list =
      std::get<VclusterList>(Parse({"vcluster", "list", "acme", "--state", "READY", "--page-size", "5"}).command);
  EXPECT_EQ(list.tenant, "acme");
  EXPECT_EQ(list.state, "READY");
  EXPECT_EQ(list.page_size, 5);
  const auto get = std::get<VclusterGet>(Parse({"vcluster", "get", "acme", "train"}).command);
  EXPECT_EQ(get.name, "train");
  const auto del =
      std::get<VclusterDelete>(Parse({"vcluster", "delete", "acme", "train", "--etag", "e", "--wait"}).command);
  EXPECT_EQ(del.etag, "e");
  EXPECT_TRUE(del.wait.wait);
  const auto sleep = std::get<VclusterSleep>(
      Parse({"vcluster", "sleep", "acme", "train", "--etag", "e", "--wait", "--timeout", "2m"}).command);
  EXPECT_EQ(sleep.tenant, "acme");
  EXPECT_EQ(sleep.name, "train");
  EXPECT_EQ(sleep.etag, "e");
  EXPECT_TRUE(sleep.wait.wait);
  EXPECT_EQ(sleep.wait.timeout, std::chrono::minutes(2));
  const auto wake = std::get<VclusterWake>(Parse({"vcluster", "wake", "acme", "train"}).command);
  EXPECT_EQ(wake.name, "train");
  EXPECT_FALSE(wake.wait.wait);
  const auto kubeconfig = std::get<VclusterKubeconfig>(
      Parse({"vcluster", "kubeconfig", "acme", "train", "--role", "edit", "--ttl", "1h"}).command);
  EXPECT_EQ(kubeconfig.tenant, "acme");
  EXPECT_EQ(kubeconfig.name, "train");
  EXPECT_EQ(kubeconfig.role, "edit");
  EXPECT_EQ(kubeconfig.ttl, "1h");
  const auto credentials = std::get<VclusterCredentials>(Parse({"vcluster", "credentials", "acme", "train"}).command);
  EXPECT_EQ(credentials.name, "train");
  const auto revoke =
      std::get<VclusterRevokeCredential>(Parse({"vcluster", "revoke-credential", "acme", "train", "ab12"}).command);
  EXPECT_EQ(revoke.tenant, "acme");
  EXPECT_EQ(revoke.serial, "ab12");
}

// Each bad flag is named in the error.
TEST(Invocation, VclusterUsageErrors) {
  const std::vector<std::string> create = {"vcluster", "create", "a", "b"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = create;
    args.insert(args.end(), extra.begin(), extra.end());
    return UsageError(args);
  };
  EXPECT_EQ(with({}), "give one of --mig, --gpus, --nodes or --shared-milli");
  EXPECT_EQ(with({"--mig", "3g.40gb=1", "--gpus", "=1"}), "give only one of --mig, --gpus, --nodes or --shared-milli");
  EXPECT_EQ(with({"--mig", "3g.40gb"}), "--mig must be PROFILE=COUNT[@MODEL] with a positive COUNT, not \"3g.40gb\"");
  EXPECT_EQ(with({"--mig", "=1"}), "--mig must be PROFILE=COUNT[@MODEL] with a positive COUNT, not \"=1\"");
  EXPECT_EQ(with({"--mig", "3g.40gb=0"}),
            "--mig must be PROFILE=COUNT[@MODEL] with a positive COUNT, not \"3g.40gb=0\"");
  EXPECT_EQ(with({"--mig", "3g.40gb=1@"}),
            "--mig must be PROFILE=COUNT[@MODEL] with a positive COUNT, not \"3g.40gb=1@\"");
  EXPECT_EQ(with({"--gpus", "H100=two"}), "--gpus must be MODEL=COUNT with a positive COUNT, not \"H100=two\"");
  EXPECT_EQ(with({"--nodes", "H100"}), "--nodes must be MODEL=COUNT with a positive COUNT, not \"H100\"");
  EXPECT_EQ(with({"--shared-milli", "0"}), "--shared-milli must be positive");
  EXPECT_EQ(with({"--gpus", "=1", "--shared-memory-mib", "5"}), "--shared-memory-mib needs --shared-milli");
  EXPECT_EQ(with({"--gpus", "=1", "--cpu-milli", "-1"}), "--cpu-milli must not be negative");
  EXPECT_EQ(with({"--gpus", "=1", "--over-quota-weight", "-2"}), "--over-quota-weight must not be negative");
  EXPECT_NE(with({"--gpus", "=1", "--pods", "many"}).find("--pods"), std::string::npos);
  EXPECT_EQ(with({"--gpus", "=1", "--timeout", "5s"}).rfind("--timeout after this command is the --wait deadline", 0),
            0u);
  EXPECT_NE(with({"--gpus", "=1", "--wait", "--timeout", "5"}).find("--timeout"), std::string::npos);
  EXPECT_EQ(
      UsageError({"vcluster", "update", "a", "b", "--etag", "e"}).rfind("nothing to update: give --display-name", 0),
      0u);
  EXPECT_NE(UsageError({"vcluster", "list", "a", "--state", "ASLEEP"}).find("ASLEEP"), std::string::npos);
  EXPECT_EQ(UsageError({"vcluster", "get", "a"}), "give TENANT NAME, or NAME with --tenant");
  EXPECT_EQ(UsageError({"vcluster", "get", "a", "b", "--tenant", "a"}),
            "give TENANT NAME, or NAME with --tenant, not both");
  EXPECT_EQ(UsageError({"vcluster", "list"}), "give TENANT, or --tenant");
  EXPECT_EQ(UsageError({"vcluster", "revoke-credential", "acme", "train"}),
            "give TENANT NAME SERIAL, or NAME SERIAL with --tenant");
  EXPECT_NE(UsageError({"vcluster", "get", "a", "b", "c"}).find("At Most 2"), std::string::npos);
}

// The tenant may also come as --tenant, before or after the words.
TEST(Invocation, VclusterTenantFlag) {
  const auto kubeconfig = std::get<VclusterKubeconfig>(
      Parse({"vcluster", "kubeconfig", "train", "--tenant", "acme", "--ttl", "1h", "--role", "view"}).command);
  EXPECT_EQ(kubeconfig.tenant, "acme");
  EXPECT_EQ(kubeconfig.name, "train");
  EXPECT_EQ(kubeconfig.ttl, "1h");
  const auto get = std::get<VclusterGet>(Parse({"vcluster", "get", "--tenant", "acme", "train"}).command);
  EXPECT_EQ(get.tenant, "acme");
  EXPECT_EQ(get.name, "train");
  const auto list = std::get<VclusterList>(Parse({"vcluster", "list", "--tenant", "acme"}).command);
  EXPECT_EQ(list.tenant, "acme");
  const auto revoke = std::get<VclusterRevokeCredential>(
      Parse({"vcluster", "revoke-credential", "train", "ab12", "--tenant", "acme"}).command);
  EXPECT_EQ(revoke.tenant, "acme");
  EXPECT_EQ(revoke.name, "train");
  EXPECT_EQ(revoke.serial, "ab12");
  const auto create = std::get<VclusterCreate>(
      Parse({"vcluster", "create", "train", "--tenant", "acme", "--shared-milli", "300"}).command);
  EXPECT_EQ(create.tenant, "acme");
  EXPECT_EQ(create.name, "train");
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

TEST(Invocation, DiffAndApplyFlags) {
  const auto diff = Parse({"diff", "-f", "platform/", "-f", "-", "--set", "prod", "--prune", "--allow-empty",
                           "--force-conflicts", "--adopt", "--source", "git@x:y@3f9c", "-v", "-o", "json"});
  EXPECT_EQ(diff.options.output, OutputFormat::kJson);
  const ApplySetOptions& d = std::get<DiffCommand>(diff.command).options;
  EXPECT_EQ(d.files, (std::vector<std::string>{"platform/", "-"}));
  EXPECT_EQ(d.apply_set, "prod");
  EXPECT_TRUE(d.prune && d.allow_empty && d.force_conflicts && d.adopt && d.show_unchanged);
  EXPECT_EQ(d.source, "git@x:y@3f9c");

  const auto apply = Parse({"apply", "--filename", "a.yaml", "--plan", "plan.json", "--detailed-exitcode"});
  const auto& a = std::get<ApplyCommand>(apply.command);
  EXPECT_EQ(a.options.files, std::vector<std::string>{"a.yaml"});
  EXPECT_EQ(a.plan_file, "plan.json");
  EXPECT_TRUE(a.detailed_exitcode);
  EXPECT_FALSE(a.options.prune || a.options.adopt || a.options.show_unchanged);
  EXPECT_EQ(a.options.apply_set, "");

  EXPECT_NE(UsageError({"diff", "--set", "prod"}).find("--filename is required"), std::string::npos);
  EXPECT_NE(UsageError({"diff", "-f", "a.yaml", "--plan", "p.json"}).find("--plan"), std::string::npos);
}

TEST(Invocation, ConfirmDeleteTakesTheKindAsWrittenAndSendsTheApiForm) {
  const auto inv =
      Parse({"apply", "-f", "a.yaml", "--confirm-delete", "Tenant/globex", "--confirm-delete", "tenant/initech",
             "--confirm-delete", "tenants/umbrella", "--confirm-delete", "TrustTier/gold", "--confirm-delete",
             "trust-tiers/silver", "--confirm-delete", "trusttier/bronze"});
  EXPECT_EQ(std::get<ApplyCommand>(inv.command).options.confirm_deletions,
            (std::vector<std::string>{"tenants/globex", "tenants/initech", "tenants/umbrella", "trust-tiers/gold",
                                      "trust-tiers/silver", "trust-tiers/bronze"}));
  for (const char* bad : {"VirtualCluster/acme/train", "globex", "tenants/", "tenants/a/b", "/gold"}) {
    EXPECT_EQ(UsageError({"diff", "-f", "a.yaml", "--confirm-delete", bad}),
              std::string("--confirm-delete must be Tenant/NAME or TrustTier/NAME (or tenants/NAME, trust-tiers/NAME), "
                          "not \"") +
                  bad + "\"");
  }
}

TEST(Invocation, ApplyWait) {
  const auto a = std::get<ApplyCommand>(Parse({"apply", "-f", "a.yaml"}).command);
  EXPECT_FALSE(a.wait.wait);
  EXPECT_EQ(a.wait.timeout, std::chrono::seconds(60)) << "as vcluster --wait";
  const auto inv = Parse({"--timeout", "3s", "apply", "-f", "a.yaml", "--wait", "--timeout", "5m"});
  EXPECT_EQ(inv.options.timeout, std::chrono::seconds(3)) << "each call's deadline, before the command";
  const auto& waited = std::get<ApplyCommand>(inv.command);
  EXPECT_TRUE(waited.wait.wait);
  EXPECT_EQ(waited.wait.timeout, std::chrono::minutes(5));
  EXPECT_EQ(UsageError({"apply", "-f", "a.yaml", "--timeout", "5s"}),
            "--timeout after this command is the --wait deadline: add --wait, or give the call deadline before the "
            "command (septactl --timeout 5s apply ...)");
  EXPECT_NE(UsageError({"diff", "-f", "a.yaml", "--wait"}).find("--wait"), std::string::npos) << "apply only";
}

TEST(Invocation, UsageCommands) {
  const auto usage = std::get<UsageShow>(Parse({"usage", "--tenant", "acme", "--window", "2026-11-01/2026-12-01",
                                                "--by", "vcluster,model", "--step", "1d"})
                                             .command);
  EXPECT_EQ(usage.tenant, "acme");
  EXPECT_EQ(usage.start, "2026-11-01T00:00:00Z");
  EXPECT_EQ(usage.end, "2026-12-01T00:00:00Z");
  EXPECT_EQ(usage.step, "1d");
  EXPECT_EQ(usage.group_by, (std::vector<std::string>{"vcluster", "model"}));
  const auto rfc =
      std::get<UsageShow>(Parse({"usage", "--window", "2026-11-01T06:00:00Z/2026-11-01T07:00:00Z"}).command);
  EXPECT_EQ(rfc.start, "2026-11-01T06:00:00Z");
  EXPECT_TRUE(rfc.tenant.empty()) << "no tenant: the platform's report";
  EXPECT_TRUE(std::get<UsageShow>(Parse({"usage"}).command).start.empty()) << "this month, filled in at run time";
  EXPECT_EQ(Parse({"usage", "-o", "csv"}).options.output, OutputFormat::kCsv);
  EXPECT_EQ(UsageError({"usage", "--window", "2026-11-01"}),
            "--window is START/END, e.g. 2026-11-01/2026-12-01, not \"2026-11-01\"");
  EXPECT_EQ(std::get<UsageHoarders>(Parse({"usage", "hoarders", "--tenant", "beta"}).command).tenant, "beta");
  EXPECT_TRUE(std::get<UsageHoarders>(Parse({"usage", "hoarders"}).command).tenant.empty());
}

TEST(Invocation, ApplySetCommands) {
  EXPECT_TRUE(std::holds_alternative<ApplySetList>(Parse({"applyset", "list", "-o", "json"}).command));
  const auto get = std::get<ApplySetGet>(Parse({"applyset", "get", "prod"}).command);
  EXPECT_EQ(get.name, "prod");
  EXPECT_FALSE(get.exit_code);
  EXPECT_TRUE(std::get<ApplySetGet>(Parse({"applyset", "get", "prod", "--exit-code"}).command).exit_code);
  EXPECT_NE(UsageError({"applyset", "get"}).find("NAME is required"), std::string::npos);
  EXPECT_EQ(UsageError({"applyset", "get", "tenants/acme/applysets/prod"}),
            "NAME is the set's own name, as --set gives it (\"prod\" of \"applysets/prod\"), not "
            "\"tenants/acme/applysets/prod\"");
  EXPECT_NE(UsageError({"applyset"}).find("subcommand"), std::string::npos);
  auto help = ParseCommandLine({"applyset", "get", "--help"});
  ASSERT_TRUE(help.ok());
  EXPECT_NE(std::get<std::string>(*help).find("1 with --exit-code: OUT_OF_SYNC"), std::string::npos);
}

TEST(Invocation, DiffAndApplyHelpTellTheExitCodes) {
  for (const char* command : {"diff", "apply"}) {
    auto help = ParseCommandLine({command, "--help"});
    ASSERT_TRUE(help.ok());
    ASSERT_TRUE(std::holds_alternative<std::string>(*help));
    const std::string& text = std::get<std::string>(*help);
    EXPECT_NE(text.find("--confirm-delete"), std::string::npos) << text;
    EXPECT_NE(text.find("Exit codes: 0 "), std::string::npos) << text;
    EXPECT_NE(text.find("3 "), std::string::npos) << text;
  }
  auto apply = ParseCommandLine({"apply", "--help"});
  EXPECT_NE(std::get<std::string>(*apply).find("--detailed-exitcode"), std::string::npos);
  EXPECT_NE(std::get<std::string>(*apply).find("4 with --wait"), std::string::npos);
  auto top = ParseCommandLine({"--help"});
  EXPECT_NE(std::get<std::string>(*top).find("diff"), std::string::npos);
}

}  // namespace
}  // namespace septa::cli

namespace septa::cli {
namespace {

TEST(LoginInvocation, LoginTakesIssuerClientScopeAndMaxWait) {
  const auto inv = Parse({"login", "--issuer", "https://idp", "--client-id", "septactl"});
  const auto* login = std::get_if<LoginCommand>(&inv.command);
  ASSERT_NE(login, nullptr);
  EXPECT_EQ(login->issuer, "https://idp");
  EXPECT_EQ(login->client_id, "septactl");
  EXPECT_EQ(login->scope, "openid offline_access profile email groups");
  EXPECT_EQ(login->max_wait, std::chrono::minutes(15));
  const auto custom =
      Parse({"login", "--issuer", "https://idp", "--client-id", "c", "--scope", "openid email", "--max-wait", "2m"});
  EXPECT_EQ(std::get<LoginCommand>(custom.command).scope, "openid email");
  EXPECT_EQ(std::get<LoginCommand>(custom.command).max_wait, std::chrono::minutes(2));
  EXPECT_EQ(UsageError({"login", "--issuer", "https://idp", "--client-id", "c", "--scope", "openidx email"}),
            "--scope must include openid: septad takes the ID token");
  EXPECT_NE(UsageError({"login", "--client-id", "c"}).find("--issuer is required"), std::string::npos);
}

TEST(LoginInvocation, LogoutAndAuthToken) {
  EXPECT_TRUE(std::holds_alternative<LogoutCommand>(Parse({"logout"}).command));
  EXPECT_TRUE(std::holds_alternative<AuthTokenCommand>(Parse({"auth", "token"}).command));
  EXPECT_NE(UsageError({"auth"}).find("subcommand"), std::string::npos);
}

TEST(LoginInvocation, InTenantIsAGlobalFlagBesideTheCommandsTenant) {
  const auto inv = Parse({"--in-tenant", "acme", "applyset", "list"});
  EXPECT_EQ(inv.options.in_tenant, "acme");
  const auto both = Parse({"vcluster", "list", "--tenant", "beta", "--in-tenant", "acme"});
  EXPECT_EQ(both.options.in_tenant, "acme");
  EXPECT_EQ(std::get<VclusterList>(both.command).tenant, "beta");
  EXPECT_FALSE(Parse({"tier", "list"}).options.in_tenant.has_value());
}

}  // namespace
}  // namespace septa::cli
