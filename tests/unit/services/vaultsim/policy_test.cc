#include "services/vaultsim/policy.h"

#include <gtest/gtest.h>

namespace septa::vaultsim {
namespace {

std::map<std::string, Policy> Known(const std::string& name, const std::string& hcl) {
  auto p = ParsePolicy(name, hcl);
  EXPECT_TRUE(p.ok()) << p.status().ToString();
  return {{name, *p}};
}

TEST(VaultSimPolicy, GlobPlusAndDeny) {
  auto known = Known("p", R"(
# a comment
path "secret/data/acme/*" { capabilities = ["read", "create"] }
path "secret/data/acme/private" { capabilities = ["deny"] }
path "pki/issue/+" { capabilities = ["update"] }
path "sys/mounts" { capabilities = ["read"] }
)");
  EXPECT_EQ(Capabilities(known, {"p"}, "secret/data/acme/db"), (std::set<std::string>{"create", "read"}));
  EXPECT_EQ(Capabilities(known, {"p"}, "secret/data/acme/private"), std::set<std::string>{"deny"});
  EXPECT_EQ(Capabilities(known, {"p"}, "pki/issue/web"), std::set<std::string>{"update"});
  EXPECT_TRUE(Capabilities(known, {"p"}, "pki/issue/web/extra").empty());
  EXPECT_TRUE(Capabilities(known, {"p"}, "pki/issue/").empty());
  EXPECT_TRUE(Capabilities(known, {"p"}, "sys/mounts/pki").empty());  // exact, not a prefix
  EXPECT_TRUE(Capabilities(known, {"other"}, "sys/mounts").empty());
  EXPECT_TRUE(Capabilities(known, {"root"}, "anything").contains("sudo"));
}

TEST(VaultSimPolicy, DenyInAnotherPolicyWins) {
  auto known = Known("allow", R"(path "kv/*" { capabilities = ["read"] })");
  known.merge(Known("block", R"(path "kv/secret" { capabilities = ["deny"] })"));
  EXPECT_EQ(Capabilities(known, {"allow", "block"}, "kv/secret"), std::set<std::string>{"deny"});
  EXPECT_EQ(Capabilities(known, {"allow", "block"}, "kv/other"), std::set<std::string>{"read"});
}

TEST(VaultSimPolicy, MalformedPoliciesNameTheProblem) {
  auto bad = ParsePolicy("x", R"(path "a" { capabilities = ["fly"] })");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("invalid capability \"fly\""), std::string::npos) << bad.status().message();
  EXPECT_FALSE(ParsePolicy("x", R"(path "a" { capabilities = ["read"] )").ok());
  EXPECT_FALSE(ParsePolicy("x", R"(path a { })").ok());
}

}  // namespace
}  // namespace septa::vaultsim
