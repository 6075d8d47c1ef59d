// Per-tenant Vault access for workloads (vault_workload_access.h and its
// step in vault_control_planes.h) through real parts: simulated virtual
// control planes on HTTPS (their TokenRequest and TokenReview), an
// in-process septa-vaultsim that checks every Kubernetes login with a
// TokenReview at the virtual cluster's endpoint, as Vault does, and Septa's
// own Vault client logging in with a service account token from a file.
#include "services/vault/vault_workload_access.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "services/base/base64.h"
#include "services/kube/client.h"
#include "services/kube/config.h"
#include "services/kube/resources.h"
#include "services/vault/vault_control_planes.h"
#include "services/vcp/simulated_control_planes.h"
#include "tests/support/fake_virtual_object_store.h"
#include "tests/unit/services/vault/vaultsim_fixture.h"

namespace septa::vault {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using ::testing::HasSubstr;

// Vault refuses a login 403; Septa's client says the login failed.
constexpr Code kRefused = Code::kUnauthenticated;

class VaultWorkloadAccessTest : public testing::VaultSimTest {
 protected:
  VaultWorkloadAccessTest() : VaultSimTest(/*review_kubernetes_logins=*/true) {}

  void SetUp() override {
    VaultSimTest::SetUp();
    planes_ = std::make_unique<vcp::SimulatedControlPlanes>(
        store_, vcp::SimulatedControlPlanesOptions{.tick_interval = 0ms, .clock = &clock_, .random = &plane_random_});
    ASSERT_TRUE(planes_->Start().ok());
    root_ = MakeClient(TokenOptions(Write("root-token", kRootToken)));
    pki_ = std::make_unique<VaultPki>(*root_, VaultPkiOptions{}, testing::StoredNamespaces());
    workloads_ =
        std::make_unique<VaultWorkloadAccess>(*root_, VaultWorkloadAccessOptions{}, testing::StoredNamespaces());
    vault_planes_ = std::make_unique<VaultControlPlanes>(*planes_, *pki_, WorkloadSetup());
    ASSERT_TRUE(root_->EnableSecretsEngine("secret", "kv-v2").ok());
    for (const std::string tenant : {"acme", "globex"}) {
      auto written =
          root_->Write("secret/data/tenants/" + tenant + "/db", json{{"data", {{"password", tenant + "-s3cret"}}}});
      ASSERT_TRUE(written.ok()) << written.status().ToString();
    }
  }
  void TearDown() override {
    vault_planes_.reset();
    planes_.reset();
    VaultSimTest::TearDown();
  }

  WorkloadVaultSetup WorkloadSetup(std::optional<VaultSecretsOperatorOptions> secrets_operator = std::nullopt) {
    return WorkloadVaultSetup{.access = workloads_.get(),
                              .serving_ca = [this](const std::string&, const std::string&) -> Result<std::string> {
                                return planes_->listener_ca_certificate();
                              },
                              .secrets_operator = std::move(secrets_operator)};
  }

  void EnsureCluster(const std::string& vcluster) {
    auto state = vault_planes_->Ensure("acme", vcluster);
    ASSERT_TRUE(state.ok()) << state.status().ToString();
    ASSERT_TRUE(state->serving);
  }

  std::unique_ptr<kube::Client> Admin(const std::string& vcluster) {
    auto kubeconfig = planes_->AdminKubeconfig("acme", vcluster);
    EXPECT_TRUE(kubeconfig.ok()) << kubeconfig.status().ToString();
    auto config = kube::ParseKubeconfig(*kubeconfig);
    EXPECT_TRUE(config.ok()) << config.status().ToString();
    kube::ClientOptions options;
    options.max_retries = 0;
    auto client = kube::Client::Create(*config, options);
    EXPECT_TRUE(client.ok());
    return std::move(*client);
  }

  // A token of service account `account` in `ns` of acme/`vcluster`,
  // from the virtual cluster's TokenRequest API (`kubectl create token`).
  std::string TokenOf(const std::string& vcluster, const std::string& ns, const std::string& account,
                      const std::vector<std::string>& audiences = {}) {
    auto admin = Admin(vcluster);
    auto created = admin->Create(
        kube::kServiceAccounts, ns,
        {{"apiVersion", "v1"}, {"kind", "ServiceAccount"}, {"metadata", {{"name", account}, {"namespace", ns}}}});
    EXPECT_TRUE(created.ok() || created.status().code() == Code::kAlreadyExists) << created.status().ToString();
    json spec = {{"expirationSeconds", 3600}};
    if (!audiences.empty()) spec["audiences"] = audiences;
    auto request = admin->CreateSubresource(
        kube::kServiceAccounts, ns, account, "token",
        {{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "TokenRequest"}, {"spec", spec}});
    EXPECT_TRUE(request.ok()) << request.status().ToString();
    return request.ok() ? (*request)["status"].value("token", "") : "";
  }

  // Septa's Vault client logging in at acme/`vcluster`'s auth method with `jwt`.
  std::unique_ptr<VaultClient> Workload(const std::string& vcluster, const std::string& jwt,
                                        const std::string& role = "workloads") {
    VaultClientOptions o = Base();
    o.auth = AuthMethod::kKubernetes;
    o.kubernetes_mount = VirtualClusterAuthMount(tenancy::host::HostNamespaceName("acme", vcluster));
    o.kubernetes_role = role;
    o.jwt_file = Write("jwt-" + vcluster + "-" + std::to_string(++files_), jwt);
    o.max_attempts = 1;
    return MakeClient(std::move(o));
  }

  Result<std::string> Password(VaultClient& client, const std::string& tenant) {
    auto read = client.Read("secret/data/tenants/" + tenant + "/db");
    if (!read.ok()) return read.status();
    return read->data["data"].value("password", "");
  }

  bool HasAuthMethod(const std::string& mount) {
    auto methods = root_->Read("sys/auth");
    return methods.ok() && methods->data.contains(mount + "/");
  }

  SeededRandom plane_random_{9};  // the planes' threads never share the simulator's
  test::FakeVirtualObjectStore store_;
  std::unique_ptr<vcp::SimulatedControlPlanes> planes_;
  std::unique_ptr<VaultClient> root_;
  std::unique_ptr<VaultPki> pki_;
  std::unique_ptr<VaultWorkloadAccess> workloads_;
  std::unique_ptr<VaultControlPlanes> vault_planes_;
  int files_ = 0;
};

TEST_F(VaultWorkloadAccessTest, AWorkloadsOwnTokenReadsItsTenantsSecretsAndNothingElse) {
  EnsureCluster("train");
  auto workload = Workload("train", TokenOf("train", "default", "trainer"));
  auto own = Password(*workload, "acme");
  ASSERT_TRUE(own.ok()) << own.status().ToString();
  EXPECT_EQ(*own, "acme-s3cret");
  EXPECT_EQ(Password(*workload, "globex").status().code(), Code::kPermissionDenied);
  auto write = workload->Write("secret/data/tenants/acme/db", json{{"data", {{"password", "mine"}}}});
  EXPECT_EQ(write.status().code(), Code::kPermissionDenied) << "the default policy reads only";
  auto self = workload->Read("auth/token/lookup-self");
  ASSERT_TRUE(self.ok()) << self.status().ToString();
  EXPECT_EQ(self->data["ttl"], 3600);
  EXPECT_THAT(self->data["policies"].dump(), HasSubstr("septa-acme-x-train-workloads"));
  EXPECT_EQ(self->data["meta"].value("service_account_namespace", ""), "default");
  EXPECT_EQ(self->data["meta"].value("service_account_name", ""), "trainer");
}

// The virtual cluster's API server is the judge: a token it did not sign
// (another virtual cluster's, or one whose claims were edited) is refused,
// though its claims name a bound service account.
TEST_F(VaultWorkloadAccessTest, TokensTheVirtualClusterDidNotIssueAreRefused) {
  EnsureCluster("train");
  EnsureCluster("dev");
  const std::string train_token = TokenOf("train", "default", "trainer");
  EXPECT_EQ(Password(*Workload("dev", train_token), "acme").status().code(), kRefused);
  EXPECT_TRUE(Password(*Workload("train", train_token), "acme").ok());

  const std::size_t first = train_token.find('.'), second = train_token.find('.', first + 1);
  auto claims = json::parse(*base::Base64UrlDecode(train_token.substr(first + 1, second - first - 1)));
  claims["sub"] = "system:serviceaccount:kube-system:admin";
  claims["kubernetes.io"]["namespace"] = "kube-system";
  const std::string forged =
      train_token.substr(0, first + 1) + base::Base64UrlEncode(claims.dump()) + train_token.substr(second);
  EXPECT_EQ(Password(*Workload("train", forged), "acme").status().code(), kRefused);
}

// Vault's two ways to review: with no reviewer token the login's own JWT
// asks, which a token for another audience than the API server's cannot;
// with a reviewer token configured, that token asks for any JWT.
TEST_F(VaultWorkloadAccessTest, AJwtForAnotherAudienceNeedsAReviewerToken) {
  EnsureCluster("train");
  const std::string mount = VirtualClusterAuthMount(tenancy::host::HostNamespaceName("acme", "train"));
  ASSERT_TRUE(root_
                  ->Write("auth/" + mount + "/role/vault-audience",
                          json{{"bound_service_account_names", json::array({"*"})},
                               {"bound_service_account_namespaces", json::array({"*"})},
                               {"token_policies",
                                json::array({WorkloadPolicyName(tenancy::host::HostNamespaceName("acme", "train"))})},
                               {"audience", "vault"}})
                  .ok());
  const std::string vault_token = TokenOf("train", "default", "trainer", {"vault"});
  EXPECT_EQ(Password(*Workload("train", vault_token, "vault-audience"), "acme").status().code(), kRefused);
  EXPECT_EQ(
      Password(*Workload("train", TokenOf("train", "default", "trainer"), "vault-audience"), "acme").status().code(),
      kRefused)
      << "the role asks for the vault audience";

  auto config = root_->Read("auth/" + mount + "/config");
  ASSERT_TRUE(config.ok());
  json with_reviewer = config->data;
  with_reviewer["token_reviewer_jwt"] = TokenOf("train", "kube-system", "vault-reviewer");
  ASSERT_TRUE(root_->Write("auth/" + mount + "/config", with_reviewer).ok());
  EXPECT_TRUE(Password(*Workload("train", vault_token, "vault-audience"), "acme").ok());
  auto reread = root_->Read("auth/" + mount + "/config");
  ASSERT_TRUE(reread.ok());
  EXPECT_EQ(reread->data.value("token_reviewer_jwt_set", false), true);
  EXPECT_FALSE(reread->data.contains("token_reviewer_jwt")) << "Vault never reads it back";

  // Septa's next pass puts its own configuration back: each login reviews itself.
  EnsureCluster("train");
  auto restored = root_->Read("auth/" + mount + "/config");
  ASSERT_TRUE(restored.ok());
  EXPECT_EQ(restored->data.value("token_reviewer_jwt_set", true), false);
}

TEST_F(VaultWorkloadAccessTest, EnsureWritesNothingWhenAllIsInPlaceAndRestoresWhatWasChanged) {
  EnsureCluster("train");
  const std::string endpoint = planes_->endpoint("acme", "train");
  const std::string ca = planes_->listener_ca_certificate();
  // A client that may only read: a second pass succeeds with it only if it writes nothing.
  ASSERT_TRUE(root_
                  ->WritePolicy("read-only",
                                "path \"sys/*\" { capabilities = [\"read\"] }\n"
                                "path \"auth/*\" { capabilities = [\"read\"] }\n")
                  .ok());
  auto reader_token = root_->Write("auth/token/create", json{{"policies", json::array({"read-only"})}});
  ASSERT_TRUE(reader_token.ok());
  auto reader = MakeClient(TokenOptions(Write("reader-token", reader_token->auth.value("client_token", ""))));
  VaultWorkloadAccess read_only(*reader, VaultWorkloadAccessOptions{}, testing::StoredNamespaces());
  Status again = read_only.Ensure("acme", "train", endpoint, ca);
  EXPECT_TRUE(again.ok()) << again.ToString();

  const std::string mount = VirtualClusterAuthMount(tenancy::host::HostNamespaceName("acme", "train"));
  ASSERT_TRUE(root_->Delete("auth/" + mount + "/role/workloads").ok());
  ASSERT_TRUE(root_->Write("auth/" + mount + "/config", json{{"kubernetes_host", "https://elsewhere:6443"}}).ok());
  ASSERT_TRUE(root_
                  ->WritePolicy(WorkloadPolicyName(tenancy::host::HostNamespaceName("acme", "train")),
                                "path \"secret/*\" { capabilities = [\"read\"] }\n")
                  .ok());
  EXPECT_EQ(read_only.Ensure("acme", "train", endpoint, ca).code(), Code::kPermissionDenied);
  EnsureCluster("train");
  auto workload = Workload("train", TokenOf("train", "default", "trainer"));
  EXPECT_TRUE(Password(*workload, "acme").ok());
  EXPECT_EQ(Password(*workload, "globex").status().code(), Code::kPermissionDenied) << "the policy was restored";
}

TEST_F(VaultWorkloadAccessTest, RemovingTheClusterLogsItsWorkloadsOutAndKeepsTheOthers) {
  EnsureCluster("train");
  EnsureCluster("dev");
  auto trainer = Workload("train", TokenOf("train", "default", "trainer"));
  auto developer = Workload("dev", TokenOf("dev", "default", "developer"));
  ASSERT_TRUE(Password(*trainer, "acme").ok());
  ASSERT_TRUE(Password(*developer, "acme").ok());

  ASSERT_TRUE(vault_planes_->Remove("acme", "train").ok());
  EXPECT_FALSE(HasAuthMethod(VirtualClusterAuthMount(tenancy::host::HostNamespaceName("acme", "train"))));
  EXPECT_EQ(root_->Read("sys/policies/acl/" + WorkloadPolicyName(tenancy::host::HostNamespaceName("acme", "train")))
                .status()
                .code(),
            Code::kNotFound);
  // Its token was revoked with the method; a new login has nowhere to go.
  auto after = trainer->Read("auth/token/lookup-self");
  EXPECT_FALSE(after.ok());
  EXPECT_TRUE(vault_planes_->Remove("acme", "train").ok()) << "already gone";
  EXPECT_TRUE(HasAuthMethod(VirtualClusterAuthMount(tenancy::host::HostNamespaceName("acme", "dev"))));
  EXPECT_TRUE(Password(*developer, "acme").ok());
}

// With the operator configured, each virtual cluster holds its default
// VaultConnection and VaultAuth (and their definitions), kept as Septa
// wants them: a second pass writes nothing, a tenant's edit is undone.
TEST_F(VaultWorkloadAccessTest, TheVaultSecretsOperatorsDefaultsAreKeptInTheVirtualCluster) {
  const std::string ca = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
  vault_planes_ = std::make_unique<VaultControlPlanes>(
      *planes_, *pki_,
      WorkloadSetup(VaultSecretsOperatorOptions{.vault_address = "https://vault.example:8200", .vault_ca_pem = ca}));
  EnsureCluster("train");
  auto admin = Admin("train");
  const std::string ns = "vault-secrets-operator-system";
  const kube::Resource connections{"secrets.hashicorp.com", "v1beta1", "vaultconnections", true};
  const kube::Resource auths{"secrets.hashicorp.com", "v1beta1", "vaultauths", true};
  auto connection = admin->Get(connections, ns, "default");
  ASSERT_TRUE(connection.ok()) << connection.status().ToString();
  EXPECT_EQ((*connection)["spec"]["address"], "https://vault.example:8200");
  EXPECT_EQ((*connection)["spec"]["caCertSecretRef"], "vault-ca");
  auto secret = admin->Get(kube::kSecrets, ns, "vault-ca");
  ASSERT_TRUE(secret.ok()) << secret.status().ToString();
  EXPECT_EQ(*base::Base64Decode((*secret)["data"].value("ca.crt", "")), ca);
  auto auth = admin->Get(auths, ns, "default");
  ASSERT_TRUE(auth.ok()) << auth.status().ToString();
  EXPECT_EQ((*auth)["spec"]["method"], "kubernetes");
  EXPECT_EQ((*auth)["spec"]["mount"], "septa-acme-x-train-kubernetes");
  EXPECT_EQ((*auth)["spec"]["kubernetes"], json({{"role", "workloads"}, {"serviceAccount", "default"}}));
  EXPECT_EQ((*auth)["spec"]["allowedNamespaces"], json::array({"*"}));

  const std::string version = (*auth)["metadata"]["resourceVersion"];
  EnsureCluster("train");
  EXPECT_EQ((*admin->Get(auths, ns, "default"))["metadata"]["resourceVersion"], version) << "nothing written";

  json edited = *admin->Get(auths, ns, "default");
  edited["spec"]["mount"] = "kubernetes";
  ASSERT_TRUE(admin->Update(auths, ns, edited).ok());
  EnsureCluster("train");
  EXPECT_EQ((*admin->Get(auths, ns, "default"))["spec"]["mount"], "septa-acme-x-train-kubernetes");
}

// A control plane whose clients' CA is its Vault intermediate loads it at
// its first request after a restart: with Vault sealed then it answers 503
// (Retry-After), never a 500, and serves once Vault is back.
TEST_F(VaultWorkloadAccessTest, AControlPlaneLoadedWhileVaultIsSealedAnswers503UntilVaultIsBack) {
  EnsureCluster("train");
  vcp::SimulatedControlPlanes restarted(
      store_, vcp::SimulatedControlPlanesOptions{.tick_interval = 0ms,
                                                 .clock = &clock_,
                                                 .random = &plane_random_,
                                                 .client_ca = [this](const core::VirtualClusterKey& key) {
                                                   return pki_->ClientCaPem(key.tenant, key.vcluster);
                                                 }});
  ASSERT_TRUE(restarted.Start().ok());
  auto kubeconfig = restarted.AdminKubeconfig("acme", "train");
  ASSERT_TRUE(kubeconfig.ok()) << kubeconfig.status().ToString();
  kube::ClientOptions options;
  options.max_retries = 0;
  auto client = kube::Client::Create(*kube::ParseKubeconfig(*kubeconfig), options);
  ASSERT_TRUE(client.ok());

  vaultsim::Faults sealed;
  sealed.sealed = true;
  sim_.SetFaults(sealed);
  auto refused = (*client)->List(kube::kNamespaces, "");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Code::kUnavailable) << refused.status().ToString();
  EXPECT_THAT(refused.status().message(), HasSubstr("cannot be served now; retry later (request id "));
  EXPECT_THAT(refused.status().message(), ::testing::Not(HasSubstr(kRootToken)));

  sim_.SetFaults(vaultsim::Faults{});
  auto served = (*client)->List(kube::kNamespaces, "");
  EXPECT_TRUE(served.ok()) << served.status().ToString();
}

TEST(WorkloadPolicyTest, PlaceholdersAreReplacedAndUnknownOnesRefusedNamingTheField) {
  auto policy = RenderWorkloadPolicy(
      "path \"secret/data/tenants/{tenant}/{vcluster}/*\" { capabilities = [\"read\"] }\n"
      "path \"database/creds/{tenant}-ro\" { capabilities = [\"read\"] }\n",
      "acme", "train");
  ASSERT_TRUE(policy.ok()) << policy.status().ToString();
  EXPECT_EQ(*policy,
            "path \"secret/data/tenants/acme/train/*\" { capabilities = [\"read\"] }\n"
            "path \"database/creds/acme-ro\" { capabilities = [\"read\"] }\n");
  auto unknown = RenderWorkloadPolicy("path \"kv/{team}/*\" { capabilities = [\"read\"] }", "acme", "train",
                                      "vault_workload_policy");
  EXPECT_EQ(unknown.status().code(), Code::kInvalidArgument);
  EXPECT_THAT(unknown.status().message(), HasSubstr("vault_workload_policy"));
  EXPECT_THAT(unknown.status().message(), HasSubstr("{team}"));
  EXPECT_EQ(RenderWorkloadPolicy(" \n", "acme", "train").status().code(), Code::kInvalidArgument);
  auto defaults = RenderWorkloadPolicy(std::string(kDefaultWorkloadPolicy), "acme", "train");
  ASSERT_TRUE(defaults.ok());
  EXPECT_THAT(*defaults, HasSubstr("secret/data/tenants/acme/*"));
  EXPECT_EQ(VirtualClusterAuthMount("septa-acme-x-train"), "septa-acme-x-train-kubernetes");
  EXPECT_EQ(WorkloadPolicyName("septa-acme-x-train"), "septa-acme-x-train-workloads");
}

}  // namespace
}  // namespace septa::vault
