// The identity keys (oidc_issuers, token_exchange_rules): lists of mappings
// in the YAML file, JSON in the environment and on the command line; every
// refusal names the item and its field.
#include <gtest/gtest.h>

#include "services/config/config.h"

namespace septa::config {
namespace {

constexpr char kIdentityYaml[] = R"(
oidc_issuers:
  - issuer: https://token.actions.githubusercontent.com
    audience: septa
  - issuer: https://idp.example.com/realms/acme
    audience: septa-portal
    client_id: septa-portal
    cli_client_id: septactl
    client_secret_file: /etc/septa/oidc-client-secret
    name: Acme SSO
    scopes: [openid, email, offline_access]
    admin_groups: [platform-admins, "/eng/sre"]
    username_claim: email
    groups_claim: roles
    ca_file: /etc/septa/idp-ca.pem
token_exchange_rules:
  - issuer: https://token.actions.githubusercontent.com
    claims: {repository: acme/platform, ref: refs/heads/main}
    principal: tenant:acme
    role: owner
    ttl: 15m
  - issuer: https://token.actions.githubusercontent.com
    claims: {repository: acme/platform}
    principal: admin
    role: viewer
    apply_sets: [platform-prod, platform-staging]
)";

Status LoadError(const std::string& yaml) {
  Sources s;
  s.yaml_text = yaml;
  s.yaml_name = "septa.yaml";
  auto c = Load(s, "/h");
  return c.ok() ? Status::Ok() : c.status();
}

std::string FieldOf(const Status& status) {
  return status.violations().empty() ? std::string() : status.violations()[0].field;
}

TEST(IdentityKeys, NoneByDefault) {
  auto c = Load({}, "/h");
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->oidc_issuers.empty());
  EXPECT_TRUE(c->token_exchange_rules.empty());
}

TEST(IdentityKeys, ListsOfMappingsInTheFile) {
  Sources s;
  s.yaml_text = kIdentityYaml;
  auto c = Load(s, "/h");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->oidc_issuers.size(), 2u);
  EXPECT_EQ(c->oidc_issuers[0].issuer, "https://token.actions.githubusercontent.com");
  EXPECT_EQ(c->oidc_issuers[0].audience, "septa");
  EXPECT_EQ(c->oidc_issuers[0].username_claim, "sub");
  EXPECT_EQ(c->oidc_issuers[0].groups_claim, "groups");
  EXPECT_EQ(c->oidc_issuers[1].client_id, "septa-portal");
  EXPECT_EQ(c->oidc_issuers[1].cli_client_id, "septactl");
  EXPECT_EQ(c->oidc_issuers[1].admin_groups, (std::vector<std::string>{"platform-admins", "/eng/sre"}));
  EXPECT_TRUE(c->oidc_issuers[0].admin_groups.empty());
  EXPECT_EQ(c->oidc_issuers[1].client_secret_file, "/etc/septa/oidc-client-secret");
  EXPECT_EQ(c->oidc_issuers[1].username_claim, "email");
  EXPECT_EQ(c->oidc_issuers[1].groups_claim, "roles");
  EXPECT_EQ(c->oidc_issuers[1].ca_file, "/etc/septa/idp-ca.pem");
  EXPECT_EQ(c->oidc_issuers[1].name, "Acme SSO");
  EXPECT_EQ(c->oidc_issuers[1].scopes, (std::vector<std::string>{"openid", "email", "offline_access"}));
  EXPECT_EQ(c->oidc_issuers[0].scopes,
            (std::vector<std::string>{"openid", "email", "profile", "groups", "offline_access"}))
      << "the default";
  ASSERT_EQ(c->token_exchange_rules.size(), 2u);
  const TokenExchangeRule& main = c->token_exchange_rules[0];
  EXPECT_EQ(main.claims,
            (std::map<std::string, std::string>{{"ref", "refs/heads/main"}, {"repository", "acme/platform"}}));
  EXPECT_EQ(main.principal, "tenant:acme");
  EXPECT_EQ(main.role, "owner");
  EXPECT_EQ(main.ttl, std::chrono::minutes(15));
  EXPECT_EQ(c->token_exchange_rules[1].principal, "admin");
  EXPECT_EQ(c->token_exchange_rules[1].ttl, std::chrono::minutes(15)) << "the default";
  EXPECT_TRUE(main.apply_sets.empty());
  EXPECT_EQ(c->token_exchange_rules[1].apply_sets, (std::vector<std::string>{"platform-prod", "platform-staging"}));
}

TEST(IdentityKeys, JsonInTheEnvironmentAndOnTheCommandLine) {
  Sources s;
  s.env = {{"SEPTA_OIDC_ISSUERS", R"([{"issuer":"http://127.0.0.1:5556","audience":"septa"}])"}};
  s.flags = {
      {"token_exchange_rules",
       R"([{"issuer":"http://127.0.0.1:5556","claims":{"sub":"ci"},"principal":"admin","role":"owner","ttl":"1h"}])"}};
  auto c = Load(s, "/h");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->oidc_issuers.size(), 1u);
  EXPECT_EQ(c->oidc_issuers[0].issuer, "http://127.0.0.1:5556") << "plain http on loopback";
  ASSERT_EQ(c->token_exchange_rules.size(), 1u);
  EXPECT_EQ(c->token_exchange_rules[0].ttl, std::chrono::hours(1));
}

TEST(IdentityKeys, EachRefusalNamesTheItemAndItsField) {
  const std::string issuer = "oidc_issuers:\n  - {issuer: https://idp.example.com, audience: septa}\n";
  const std::string rule = "token_exchange_rules:\n  - {issuer: https://idp.example.com, claims: {sub: ci}, ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"oidc_issuers: {issuer: x}\n", "oidc_issuers (septa.yaml)"},
      {"oidc_issuers:\n  - {audience: septa}\n", "oidc_issuers[0].issuer (septa.yaml)"},
      {"oidc_issuers:\n  - {issuer: https://idp.example.com}\n", "oidc_issuers[0].audience (septa.yaml)"},
      {"oidc_issuers:\n  - {issuer: http://idp.example.com, audience: a}\n", "oidc_issuers[0].issuer (septa.yaml)"},
      {"oidc_issuers:\n  - {issuer: 'https://idp.example.com?x=1', audience: a}\n",
       "oidc_issuers[0].issuer (septa.yaml)"},
      {"oidc_issuers:\n  - {issuer: https://idp.example.com, audience: a, audiance: b}\n",
       "oidc_issuers[0].audiance (septa.yaml)"},
      {"oidc_issuers:\n  - {issuer: https://idp.example.com, audience: [a]}\n",
       "oidc_issuers[0].audience (septa.yaml)"},
      {issuer + "  - {issuer: https://idp.example.com, audience: other}\n", "oidc_issuers[1].issuer (septa.yaml)"},
      // People sign in only through an issuer with a sign-in client.
      {"oidc_issuers:\n  - {issuer: https://idp.example.com, audience: a, cli_client_id: septactl}\n",
       "oidc_issuers[0].cli_client_id (septa.yaml)"},
      {"oidc_issuers:\n  - {issuer: https://idp.example.com, audience: a, admin_groups: [admins]}\n",
       "oidc_issuers[0].admin_groups (septa.yaml)"},
      {"oidc_issuers:\n  - {issuer: https://idp.example.com, audience: a, client_id: p, admin_groups: admins}\n",
       "oidc_issuers[0].admin_groups (septa.yaml)"},
      {"oidc_issuers:\n  - {issuer: https://idp.example.com, audience: a, client_id: p, admin_groups: ['']}\n",
       "oidc_issuers[0].admin_groups[0] (septa.yaml)"},
      // The portal's sign-in: its client, what it asks for, its button.
      {"oidc_issuers:\n  - {issuer: https://idp.example.com, audience: a, client_secret_file: /s}\n",
       "oidc_issuers[0].client_secret_file (septa.yaml)"},
      {"oidc_issuers:\n  - {issuer: https://idp.example.com, audience: a, client_id: p, scopes: [email]}\n",
       "oidc_issuers[0].scopes (septa.yaml)"},
      {"oidc_issuers:\n  - {issuer: https://idp.example.com, audience: a, client_id: p, scopes: [openid, 'a b']}\n",
       "oidc_issuers[0].scopes (septa.yaml)"},
      {"oidc_issuers:\n  - {issuer: https://idp.example.com, audience: a, client_id: p, name: \"a\\u0007\"}\n",
       "oidc_issuers[0].name (septa.yaml)"},
      {issuer + "token_exchange_rules:\n  - {issuer: https://idp.example.com, principal: admin, role: owner}\n",
       "token_exchange_rules[0].claims (septa.yaml)"},
      {issuer + "token_exchange_rules:\n  - {issuer: https://idp.example.com, claims: {}, principal: admin, "
                "role: owner}\n",
       "token_exchange_rules[0].claims (septa.yaml)"},
      {issuer + rule + "principal: tenant:Acme, role: owner}\n", "token_exchange_rules[0].principal (septa.yaml)"},
      {issuer + rule + "principal: admin, role: admin}\n", "token_exchange_rules[0].role (septa.yaml)"},
      {issuer + rule + "principal: admin, role: owner, ttl: 2d}\n", "token_exchange_rules[0].ttl (septa.yaml)"},
      {issuer + rule + "principal: admin, role: owner, ttl: 30s}\n", "token_exchange_rules[0].ttl (septa.yaml)"},
      {issuer + rule + "principal: admin, role: owner, ttl: 25h}\n", "token_exchange_rules[0].ttl (septa.yaml)"},
      {issuer + "token_exchange_rules:\n  - {issuer: https://idp.example.com, claims: {run_attempt: 1}, "
                "principal: admin, role: owner}\n",
       "token_exchange_rules[0].claims.run_attempt (septa.yaml)"},
      {issuer + rule + "principal: admin, role: owner, apply_sets: [Prod]}\n",
       "token_exchange_rules[0].apply_sets[0] (septa.yaml)"},
      {issuer + rule + "principal: admin, role: owner, apply_sets: prod}\n",
       "token_exchange_rules[0].apply_sets (septa.yaml)"},
      {"token_exchange_rules:\n  - {issuer: https://other.example.com, claims: {sub: ci}, principal: admin, "
       "role: owner}\n",
       "token_exchange_rules[0].issuer"},
  };
  for (const auto& [yaml, field] : cases) {
    const Status st = LoadError(yaml);
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << yaml;
    EXPECT_EQ(FieldOf(st), field) << yaml << "\n" << st.ToString();
  }
  EXPECT_NE(LoadError(issuer + "token_exchange_rules:\n  - {issuer: https://idp.example.com, claims: {}, "
                               "principal: admin, role: owner}\n")
                .message()
                .find("would admit every token of its issuer"),
            std::string::npos);
}

TEST(IdentityKeys, BoundedInCount) {
  std::string yaml = "oidc_issuers:\n";
  for (int i = 0; i < 17; ++i) yaml += "  - {issuer: https://idp" + std::to_string(i) + ".example.com, audience: a}\n";
  EXPECT_EQ(FieldOf(LoadError(yaml)), "oidc_issuers (septa.yaml)");
  std::string groups =
      "oidc_issuers:\n  - {issuer: https://idp.example.com, audience: a, client_id: p, admin_groups: [";
  for (int i = 0; i < 65; ++i) groups += (i ? ", g" : "g") + std::to_string(i);
  EXPECT_EQ(FieldOf(LoadError(groups + "]}\n")), "oidc_issuers[0].admin_groups (septa.yaml)");
}

}  // namespace
}  // namespace septa::config
