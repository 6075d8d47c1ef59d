// Septa's Vault client against the in-process septa-vaultsim (whose fidelity
// the real hvac judges in vaultsim.hvac).
#include "services/vault/vault_client.h"

#include <gtest/gtest.h>

#include <thread>

#include "services/base/base64.h"
#include "tests/unit/services/vault/vaultsim_fixture.h"

namespace septa::vault {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

class VaultClientTest : public testing::VaultSimTest {
 protected:
  void SetUp() override {
    testing::VaultSimTest::SetUp();
    root_ = MakeClient(TokenOptions(Write("root-token", kRootToken)));
  }
  static std::string ServiceAccountJwt(const std::string& ns, const std::string& name) {
    return base::Base64UrlEncode(R"({"alg":"RS256"})") + "." +
           base::Base64UrlEncode(json{{"sub", "system:serviceaccount:" + ns + ":" + name}}.dump()) + ".c2ln";
  }
  // A PKI mount with a root CA and the role "tenant" (O=tenant:acme, max 24h), and the policy "issuer".
  void ConfigurePki() {
    ASSERT_TRUE(root_->EnableSecretsEngine("pki", "pki", 87600h).ok());
    ASSERT_TRUE(root_->GenerateRoot("pki", "Septa Test Root", 87600h).ok());
    PkiRole role;
    role.allow_any_name = true;
    role.organization = {"tenant:acme"};
    role.ttl = 1h;
    role.max_ttl = 24h;
    ASSERT_TRUE(root_->WritePkiRole("pki", "tenant", role).ok());
    ASSERT_TRUE(root_->WritePolicy("issuer", R"(path "pki/issue/tenant" { capabilities = ["update"] })").ok());
  }

  std::unique_ptr<VaultClient> root_;
};

TEST_F(VaultClientTest, ConfiguresIdempotentlyIssuesAndRevokes) {
  ConfigurePki();
  ConfigurePki();  // every step again: mounts are left as they are, the rest is overwritten
  Status wrong_type = root_->EnableSecretsEngine("pki", "kv-v2");
  EXPECT_EQ(wrong_type.code(), Code::kFailedPrecondition) << wrong_type.ToString();

  IssueRequest request{"alice", {}, {}, 48h};
  auto issued = root_->Issue("pki", "tenant", request);
  ASSERT_TRUE(issued.ok()) << issued.status().ToString();
  EXPECT_NE(issued->certificate.find("BEGIN CERTIFICATE"), std::string::npos);
  EXPECT_EQ(issued->private_key_type, "ec");
  ASSERT_EQ(issued->warnings.size(), 1u);
  EXPECT_NE(issued->warnings[0].find("maxTTL"), std::string::npos) << issued->warnings[0];
  EXPECT_LE(issued->expiration, clock_.Now() + 24h);
  EXPECT_GT(issued->expiration, clock_.Now() + 23h);
  auto ca = root_->ReadCaPem("pki");
  ASSERT_TRUE(ca.ok()) << ca.status().ToString();
  EXPECT_EQ(issued->issuing_ca, *ca);
  EXPECT_EQ(issued->ca_chain, std::vector<std::string>{*ca});

  auto revoked = root_->Revoke("pki", issued->serial_number);
  ASSERT_TRUE(revoked.ok()) << revoked.status().ToString();
  EXPECT_EQ(std::chrono::time_point_cast<std::chrono::seconds>(*revoked),
            std::chrono::time_point_cast<std::chrono::seconds>(clock_.Now()));
  auto cert = root_->Read("pki/cert/" + issued->serial_number);
  ASSERT_TRUE(cert.ok());
  EXPECT_GT(cert->data.value("revocation_time", 0), 0);

  Status unknown_role = root_->Issue("pki", "nobody", request).status();
  EXPECT_EQ(unknown_role.code(), Code::kInvalidArgument);
  EXPECT_NE(unknown_role.message().find("unknown role: nobody"), std::string::npos) << unknown_role.message();
}

// Two callers enabling the same mount at once (two virtual clusters'
// reconciles, two replicas) both list it absent, and Vault refuses the
// second write (400 "path is already in use"): that one still succeeds,
// as the mount is there with its type. Every request is held 300 ms, so
// both lists are answered before either write arrives.
TEST_F(VaultClientTest, EnablingAMountTwiceAtOnceSucceedsBoth) {
  auto other = MakeClient(TokenOptions(Write("other-token", kRootToken)));
  vaultsim::Faults slow;
  slow.delay = 300ms;
  sim_.SetFaults(slow);
  Status first, second;
  std::thread a([&] { first = root_->EnableSecretsEngine("shared-pki", "pki"); });
  std::thread b([&] { second = other->EnableSecretsEngine("shared-pki", "pki"); });
  a.join();
  b.join();
  sim_.SetFaults({});
  EXPECT_TRUE(first.ok()) << first.ToString();
  EXPECT_TRUE(second.ok()) << second.ToString();
  Status wrong_type = root_->EnableSecretsEngine("shared-pki", "kv-v2");
  EXPECT_EQ(wrong_type.code(), Code::kFailedPrecondition) << wrong_type.ToString();
}

TEST_F(VaultClientTest, BuildsAnIntermediateSignedByTheRoot) {
  ConfigurePki();
  ASSERT_TRUE(root_->EnableSecretsEngine("pki_int", "pki").ok());
  auto csr = root_->GenerateIntermediate("pki_int", "Septa Test Intermediate");
  ASSERT_TRUE(csr.ok()) << csr.status().ToString();
  auto signed_ca = root_->SignIntermediate("pki", *csr, "Septa Test Intermediate", 43800h);
  ASSERT_TRUE(signed_ca.ok()) << signed_ca.status().ToString();
  EXPECT_EQ(signed_ca->ca_chain.size(), 2u);
  ASSERT_TRUE(root_->SetSignedIntermediate("pki_int", signed_ca->certificate + signed_ca->issuing_ca).ok());
  PkiRole role;
  role.allowed_domains = {"example.com"};
  role.allow_subdomains = true;
  ASSERT_TRUE(root_->WritePkiRole("pki_int", "web", role).ok());
  auto leaf = root_->Issue("pki_int", "web", IssueRequest{"api.example.com", {}, {}, 0s});
  ASSERT_TRUE(leaf.ok()) << leaf.status().ToString();
  EXPECT_EQ(leaf->issuing_ca, signed_ca->certificate);
  EXPECT_EQ(leaf->ca_chain.size(), 2u);
  EXPECT_EQ(root_->Issue("pki_int", "web", IssueRequest{"api.evil.com", {}, {}, 0s}).status().code(),
            Code::kInvalidArgument);
}

TEST_F(VaultClientTest, AppRoleTokenRenewsAtTwoThirdsAndLogsInAgainWhenRenewalFails) {
  ConfigurePki();
  ASSERT_TRUE(root_->EnableAuthMethod("approle", "approle").ok());
  ASSERT_TRUE(root_->EnableAuthMethod("approle", "approle").ok());  // idempotent
  ASSERT_TRUE(root_
                  ->Write("auth/approle/role/septad",
                          json{{"token_policies", "issuer,default"}, {"token_ttl", "60s"}, {"token_max_ttl", "90s"}})
                  .ok());
  auto role_id = root_->Read("auth/approle/role/septad/role-id");
  auto secret = root_->Write("auth/approle/role/septad/secret-id", json::object());
  ASSERT_TRUE(role_id.ok() && secret.ok());
  VaultClientOptions o = Base();
  o.auth = AuthMethod::kAppRole;
  o.role_id = role_id->data["role_id"];
  o.secret_id_file = Write("secret-id", secret->data["secret_id"].get<std::string>());
  auto client = MakeClient(o);

  auto self = [&] {
    auto r = client->Read("auth/token/lookup-self");
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->data : json::object();
  };
  json first = self();
  EXPECT_EQ(first["ttl"], 60);
  clock_.Advance(30s);  // under 2/3 of 60s: no renewal
  EXPECT_EQ(self()["ttl"], 30);
  clock_.Advance(11s);  // 41s: renewed, capped by token_max_ttl (90s) at 49s
  json renewed = self();
  EXPECT_EQ(renewed["accessor"], first["accessor"]);
  EXPECT_EQ(renewed["ttl"], 49);
  clock_.Advance(34s);  // 75s: a renewal would reach 15s only: the client logs in again
  json fresh = self();
  EXPECT_NE(fresh["accessor"], first["accessor"]);
  EXPECT_EQ(fresh["ttl"], 60);
  EXPECT_TRUE(client->Issue("pki", "tenant", IssueRequest{"septad", {}, {}, 0s}).ok());
  // A token revoked behind the client's back: the 403 makes it log in again.
  ASSERT_TRUE(client->Write("auth/token/revoke-self", json::object()).ok());
  json after_revoke = self();
  EXPECT_NE(after_revoke["accessor"], fresh["accessor"]);
}

TEST_F(VaultClientTest, KubernetesAuthIsBoundToServiceAccountsAndPoliciesAreEnforced) {
  ConfigurePki();
  ASSERT_TRUE(root_->EnableAuthMethod("kubernetes", "kubernetes").ok());
  ASSERT_TRUE(root_->Write("auth/kubernetes/config", json{{"kubernetes_host", "https://kubernetes.default.svc"}}).ok());
  ASSERT_TRUE(root_
                  ->Write("auth/kubernetes/role/acme", json{{"bound_service_account_names", json::array({"builder"})},
                                                            {"bound_service_account_namespaces", "acme"},
                                                            {"token_policies", "issuer"},
                                                            {"token_ttl", "15m"}})
                  .ok());
  VaultClientOptions o = Base();
  o.auth = AuthMethod::kKubernetes;
  o.kubernetes_role = "acme";
  o.jwt_file = Write("jwt", ServiceAccountJwt("acme", "builder"));
  auto client = MakeClient(o);
  EXPECT_TRUE(client->Issue("pki", "tenant", IssueRequest{"builder", {}, {}, 0s}).ok());
  Status denied = client->Read("sys/mounts").status();
  EXPECT_EQ(denied.code(), Code::kPermissionDenied);
  EXPECT_NE(denied.message().find("GET sys/mounts: permission denied"), std::string::npos) << denied.message();

  o.jwt_file = Write("jwt-other", ServiceAccountJwt("other", "builder"));
  auto stranger = MakeClient(o);
  Status refused = stranger->EnsureToken();
  EXPECT_EQ(refused.code(), Code::kUnauthenticated) << refused.ToString();
  EXPECT_NE(refused.message().find("namespace not authorized"), std::string::npos) << refused.message();
}

TEST_F(VaultClientTest, SealedStandbyAndRateLimitedAreRetriedThenUnavailable) {
  ConfigurePki();
  vaultsim::Faults faults;
  faults.sealed = true;
  sim_.SetFaults(faults);
  Status sealed = root_->Read("sys/mounts").status();
  EXPECT_EQ(sealed.code(), Code::kUnavailable);
  EXPECT_NE(sealed.message().find("Vault is sealed"), std::string::npos) << sealed.message();
  EXPECT_NE(sealed.message().find("after 3 attempts"), std::string::npos) << sealed.message();

  faults = {};
  faults.standby = true;
  sim_.SetFaults(faults);
  EXPECT_EQ(root_->Read("sys/mounts").status().code(), Code::kUnavailable);

  faults = {};
  faults.rate_limit_next = 2;  // the third attempt gets through
  sim_.SetFaults(faults);
  EXPECT_TRUE(root_->Read("sys/mounts").ok());
  faults.rate_limit_next = 3;
  sim_.SetFaults(faults);
  Status limited = root_->Read("sys/mounts").status();
  EXPECT_EQ(limited.code(), Code::kUnavailable);
  EXPECT_NE(limited.message().find("rate limit quota exceeded"), std::string::npos) << limited.message();

  faults = {};
  faults.malformed_next = 1;
  sim_.SetFaults(faults);
  Status malformed = root_->Read("pki/roles/tenant").status();
  EXPECT_EQ(malformed.code(), Code::kUnavailable);
  EXPECT_NE(malformed.message().find("GET pki/roles/tenant: malformed JSON"), std::string::npos) << malformed.message();
  EXPECT_TRUE(root_->Read("pki/roles/tenant").ok());
}

TEST_F(VaultClientTest, TokensAndSecretIdsNeverAppearInMessages) {
  ConfigurePki();
  ASSERT_TRUE(root_->EnableAuthMethod("approle", "approle").ok());
  ASSERT_TRUE(root_->Write("auth/approle/role/septad", json{{"token_policies", "issuer"}}).ok());
  auto role_id = root_->Read("auth/approle/role/septad/role-id");
  ASSERT_TRUE(role_id.ok());
  const std::string wrong_secret = "c0ffee00-wrong-secret-id-0000";
  const std::string wrong_token = "hvs.not-a-token-of-this-vault";
  VaultClientOptions approle = Base();
  approle.auth = AuthMethod::kAppRole;
  approle.role_id = role_id->data["role_id"];
  approle.secret_id_file = Write("secret-id", wrong_secret);

  std::vector<Status> failures;
  failures.push_back(MakeClient(approle)->EnsureToken());
  failures.push_back(MakeClient(TokenOptions(Write("bad-token", wrong_token)))->Read("sys/mounts").status());
  failures.push_back(root_->Issue("pki", "tenant", IssueRequest{"", {}, {}, 0s}).status());
  failures.push_back(
      root_->Write("sys/policies/acl/bad", json{{"policy", "path \"x\" { capabilities = [\"fly\"] }"}}).status());
  vaultsim::Faults sealed;
  sealed.sealed = true;
  sim_.SetFaults(sealed);
  failures.push_back(root_->Read("sys/mounts").status());
  for (const Status& st : failures) {
    EXPECT_FALSE(st.ok());
    for (const std::string& secret : {wrong_secret, wrong_token, std::string(kRootToken)}) {
      EXPECT_EQ(st.message().find(secret), std::string::npos) << st.ToString();
    }
  }
  EXPECT_EQ(failures[0].code(), Code::kUnauthenticated);
  EXPECT_EQ(failures[1].code(), Code::kUnauthenticated);
}

TEST_F(VaultClientTest, SpeaksTlsWithTheGivenCa) {
  vaultsim::VaultSim tls_sim(vaultsim::VaultSimOptions{"127.0.0.1:0", true, kRootToken, 1, &clock_, &random_});
  ASSERT_TRUE(tls_sim.Start().ok());
  ASSERT_EQ(tls_sim.address().rfind("https://", 0), 0u);
  VaultClientOptions o = TokenOptions(Write("tls-token", kRootToken));
  o.address = tls_sim.address();
  o.ca_file = Write("ca.pem", tls_sim.ca_certificate());
  auto client = MakeClient(o);
  EXPECT_TRUE(client->EnableSecretsEngine("pki", "pki").ok());

  o.ca_file.clear();  // the system trust store does not know the test CA
  Status untrusted = MakeClient(o)->Read("sys/mounts").status();
  EXPECT_EQ(untrusted.code(), Code::kUnavailable) << untrusted.ToString();
  tls_sim.Stop();
}

TEST(VaultClientOptionsTest, RequiresWhatTheAuthMethodNeeds) {
  FakeClock clock;
  SeededRandom random(1);
  VaultClientOptions o;
  EXPECT_EQ(VaultClient::Create(o, clock, random).status().code(), Code::kInvalidArgument);
  o.address = "http://127.0.0.1:1";
  o.auth = AuthMethod::kAppRole;
  auto missing = VaultClient::Create(o, clock, random);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().ToString().find("role_id"), std::string::npos) << missing.status().ToString();
}

}  // namespace
}  // namespace septa::vault
