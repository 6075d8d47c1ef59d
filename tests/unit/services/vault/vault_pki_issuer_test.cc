// The Vault issuer and its ensure step (vault_pki.h, vault_pki_issuer.h,
// vault_control_planes.h) against the in-process septa-vaultsim. Client
// certificates are checked the way the virtual API servers check them:
// http::ClientCertificateVerifier with the virtual cluster's CA.
#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <functional>
#include <regex>

#include "services/base/openssl_ptr.h"
#include "services/http/tls.h"
#include "services/vault/vault_control_planes.h"
#include "services/vault/vault_pki.h"
#include "services/vault/vault_pki_issuer.h"
#include "tests/support/fake_control_planes.h"
#include "tests/unit/services/vault/vaultsim_fixture.h"

namespace septa::vault {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

std::shared_ptr<x509_st> Parse(const std::string& pem) {
  base::BioPtr bio = base::MemoryBio(pem);
  return std::shared_ptr<x509_st>(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr), X509_free);
}

// The certificate's identity as a virtual API server trusting `ca_pem` sees it.
Result<http::PeerIdentity> VerifiedBy(const std::string& ca_pem, const std::string& certificate_pem, TimePoint now) {
  auto verifier = http::ClientCertificateVerifier::Create(ca_pem);
  if (!verifier.ok()) return verifier.status();
  return verifier->Verify({Parse(certificate_pem)}, now);
}

// The PKI mount of acme's virtual cluster `vcluster`, named as a new one is.
std::string AcmeMount(const std::string& vcluster) {
  return VirtualClusterPkiMount(tenancy::host::HostNamespaceName("acme", vcluster));
}

class VaultPkiTest : public testing::VaultSimTest {
 protected:
  void SetUp() override {
    testing::VaultSimTest::SetUp();
    client_ = MakeClient(Write("root-token", kRootToken));
    pki_ = std::make_unique<VaultPki>(*client_, VaultPkiOptions{}, testing::StoredNamespaces());
    issuer_ = std::make_unique<VaultPkiIssuer>(*pki_);
  }

  std::unique_ptr<VaultClient> MakeClient(const std::string& token_file) {
    VaultClientOptions o = TokenOptions(token_file);
    o.max_attempts = 2;
    return VaultSimTest::MakeClient(std::move(o));
  }
  static ClientCertificateRequest Request(const std::string& tenant, const std::string& vcluster,
                                          const std::string& role, std::chrono::seconds ttl,
                                          std::chrono::seconds max_ttl = 24h) {
    return ClientCertificateRequest{tenant, vcluster, tenant + ":token-1", {"septa:" + role}, role, ttl, max_ttl};
  }
  std::string Ensure(const std::string& tenant, const std::string& vcluster) {
    auto ca = pki_->EnsureVirtualClusterPki(tenant, vcluster, 24h);
    EXPECT_TRUE(ca.ok()) << ca.status().ToString();
    return ca.ok() ? *ca : "";
  }
  void SetFaults(bool sealed, bool standby, int rate_limited) {
    vaultsim::Faults f;
    f.sealed = sealed;
    f.standby = standby;
    f.rate_limit_next = rate_limited;
    sim_.SetFaults(f);
  }

  std::unique_ptr<VaultClient> client_;
  std::unique_ptr<VaultPki> pki_;
  std::unique_ptr<VaultPkiIssuer> issuer_;
};

TEST(VaultPkiLayoutTest, MountsAreOneBoundedSegmentUniquePerClusterAndSerialsConvert) {
  // Named after the host namespace, unique per virtual cluster (tenancy/host/names.h).
  EXPECT_EQ(VirtualClusterPkiMount("septa-acme-x-train"), "septa-acme-x-train-pki");
  const std::string longest =
      VirtualClusterPkiMount(tenancy::host::HostNamespaceName(std::string(40, 't'), std::string(40, 'v')));
  EXPECT_LE(longest.size(), 67u);
  EXPECT_EQ(longest.find('/'), std::string::npos);
  EXPECT_EQ(TenantPolicyName("acme"), "septa-tenant-acme");
  EXPECT_EQ(SerialFromVault("39:DD:2e:0a"), "39dd2e0a");
  EXPECT_EQ(SerialToVault("39dd2e0a"), "39:dd:2e:0a");
  EXPECT_EQ(SerialToVault("abc"), "0a:bc");
}

TEST_F(VaultPkiTest, IssuesAClientCertificateFromTheClustersIntermediate) {
  const std::string ca = Ensure("acme", "train");
  ASSERT_FALSE(ca.empty());
  auto issued = issuer_->IssueClientCertificate(Request("acme", "train", "edit", 600s));
  ASSERT_TRUE(issued.ok()) << issued.status().ToString();
  EXPECT_FALSE(issued->ttl_capped);
  EXPECT_EQ(issued->ca_certificate_pem, ca);
  EXPECT_EQ(issued->not_after, clock_.Now() + 600s);
  EXPECT_EQ(issued->not_before, clock_.Now() - 30s);  // Vault back-dates by 30 s
  EXPECT_TRUE(std::regex_match(issued->serial, std::regex("[0-9a-f]{16,40}"))) << issued->serial;

  // The virtual API server's view: it chains to the cluster's CA, CN and O as asked, the same serial.
  auto peer = VerifiedBy(ca, issued->certificate_pem, clock_.Now());
  ASSERT_TRUE(peer.ok()) << peer.status().ToString();
  EXPECT_EQ(peer->common_name, "acme:token-1");
  EXPECT_EQ(peer->organizations, std::vector<std::string>{"septa:edit"});
  EXPECT_EQ(peer->serial, issued->serial);

  auto cert = Parse(issued->certificate_pem);
  ASSERT_TRUE(cert);
  EXPECT_EQ(X509_get_ext_d2i(cert.get(), NID_subject_alt_name, nullptr, nullptr), nullptr) << "no SANs";
  EXPECT_EQ(X509_get_extended_key_usage(cert.get()), static_cast<std::uint32_t>(XKU_SSL_CLIENT));
  base::BioPtr key_bio = base::MemoryBio(issued->private_key_pem);
  base::KeyPtr key(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr));
  ASSERT_TRUE(key);
  EXPECT_EQ(X509_check_private_key(cert.get(), key.get()), 1);

  // Each role's O is its group.
  for (const std::string role : {"admin", "view"}) {
    auto other = issuer_->IssueClientCertificate(Request("acme", "train", role, 60s));
    ASSERT_TRUE(other.ok()) << other.status().ToString();
    auto seen = VerifiedBy(ca, other->certificate_pem, clock_.Now());
    ASSERT_TRUE(seen.ok()) << seen.status().ToString();
    EXPECT_EQ(seen->organizations, std::vector<std::string>{"septa:" + role});
  }
}

// A virtual cluster named by an earlier name function keeps its mount: it
// is named after the stored host namespace, never derived again.
TEST_F(VaultPkiTest, TheMountIsNamedAfterTheStoredHostNamespace) {
  const std::string ca = Ensure("acme", "legacy");
  ASSERT_FALSE(ca.empty());
  auto mounts = client_->Read("sys/mounts");
  ASSERT_TRUE(mounts.ok());
  EXPECT_TRUE(mounts->data.contains(std::string(testing::kLegacyNamespace) + "-pki/"));
  EXPECT_FALSE(mounts->data.contains(AcmeMount("legacy") + "/"));
  auto issued = issuer_->IssueClientCertificate(Request("acme", "legacy", "view", 60s));
  ASSERT_TRUE(issued.ok()) << issued.status().ToString();
  EXPECT_TRUE(VerifiedBy(ca, issued->certificate_pem, clock_.Now()).ok());
  ASSERT_TRUE(pki_->RemoveVirtualClusterPki("acme", "legacy").ok());
  EXPECT_FALSE(client_->Read("sys/mounts")->data.contains(std::string(testing::kLegacyNamespace) + "-pki/"));
}

TEST_F(VaultPkiTest, ALongerTtlIsCappedByVaultWhichSaysSo) {
  Ensure("acme", "train");
  auto capped = issuer_->IssueClientCertificate(Request("acme", "train", "edit", 48h, 24h));
  ASSERT_TRUE(capped.ok()) << capped.status().ToString();
  EXPECT_TRUE(capped->ttl_capped);
  EXPECT_EQ(capped->not_after, clock_.Now() + 24h);

  // A role's cap lowered in Vault behind Septa's back: Vault's warning alone says the ttl was capped.
  PkiRole lowered;
  lowered.allow_any_name = true;
  lowered.enforce_hostnames = false;
  lowered.organization = {"septa:edit"};
  lowered.max_ttl = 1h;
  ASSERT_TRUE(client_->WritePkiRole(AcmeMount("train"), "edit", lowered).ok());
  auto warned = issuer_->IssueClientCertificate(Request("acme", "train", "edit", 2h, 24h));
  ASSERT_TRUE(warned.ok()) << warned.status().ToString();
  EXPECT_TRUE(warned->ttl_capped);
  EXPECT_EQ(warned->not_after, clock_.Now() + 1h);

  // Another tier cap: the roles are written with it before the issue.
  auto tighter = issuer_->IssueClientCertificate(Request("acme", "train", "edit", 2h, 30min));
  ASSERT_TRUE(tighter.ok()) << tighter.status().ToString();
  EXPECT_TRUE(tighter->ttl_capped);
  EXPECT_EQ(tighter->not_after, clock_.Now() + 30min);
  auto role = client_->Read(AcmeMount("train") + "/roles/view");
  ASSERT_TRUE(role.ok());
  EXPECT_EQ(role->data.value("max_ttl", 0), 1800);
}

TEST_F(VaultPkiTest, RolesHaveTheGroupTheCapAndClientOnlyFlags) {
  Ensure("acme", "train");
  for (const std::string name : {"admin", "edit", "view"}) {
    auto role = client_->Read(AcmeMount("train") + "/roles/" + name);
    ASSERT_TRUE(role.ok()) << role.status().ToString();
    EXPECT_EQ(role->data["organization"], json::array({"septa:" + name}));
    EXPECT_EQ(role->data.value("max_ttl", 0), 24 * 3600);
    EXPECT_TRUE(role->data.value("allow_any_name", false));
    EXPECT_FALSE(role->data.value("enforce_hostnames", true));
    EXPECT_TRUE(role->data.value("client_flag", false));
    EXPECT_FALSE(role->data.value("server_flag", true));
    EXPECT_EQ(role->data.value("key_type", ""), "ec");
    EXPECT_EQ(role->data.value("key_bits", 0), 256);
  }
  auto policy = client_->Read("sys/policies/acl/septa-tenant-acme");
  ASSERT_TRUE(policy.ok()) << policy.status().ToString();
  EXPECT_NE(policy->data.value("policy", "").find("septa-acme-x-train-pki/issue/*"), std::string::npos);
}

TEST_F(VaultPkiTest, EnsuringAgainWritesNothing) {
  const std::string first = Ensure("acme", "train");
  // A token that may read everything and write nothing: a second run that wrote would fail.
  ASSERT_TRUE(client_->WritePolicy("read-only", R"(path "*" { capabilities = ["read", "list"] })").ok());
  auto token = client_->Write("auth/token/create", json{{"policies", json::array({"read-only"})}});
  ASSERT_TRUE(token.ok()) << token.status().ToString();
  auto reader = MakeClient(Write("reader-token", token->auth.value("client_token", "")));
  VaultPki read_only(*reader, VaultPkiOptions{}, testing::StoredNamespaces());
  auto again = read_only.EnsureVirtualClusterPki("acme", "train", 24h);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(*again, first);
  // And it does write what is missing: the read-only token is refused there.
  EXPECT_EQ(read_only.EnsureVirtualClusterPki("acme", "dev", 24h).status().code(), Code::kPermissionDenied);
}

// The state any interrupted run leaves (each step done or not, an
// intermediate key generated but never installed), then Vault sealed for
// one run: the next run converges to a working PKI.
TEST_F(VaultPkiTest, ARunInterruptedAfterAnyStepIsFinishedByTheNext) {
  const std::vector<std::function<Status(const std::string&)>> steps = {
      [&](const std::string&) { return pki_->EnsureRoot(); },
      [&](const std::string& vc) { return client_->EnableSecretsEngine(AcmeMount(vc), "pki"); },
      [&](const std::string& vc) { return client_->GenerateIntermediate(AcmeMount(vc), "pending").status(); },
      [&](const std::string& vc) { return pki_->EnsureVirtualClusterCa("acme", vc).status(); },
      [&](const std::string& vc) { return pki_->EnsureRoles("acme", vc, 24h); },
      [&](const std::string& vc) { return pki_->EnsureTenantPolicy("acme", vc); },
  };
  for (std::size_t done = 0; done <= steps.size(); ++done) {
    SCOPED_TRACE("steps done: " + std::to_string(done));
    const std::string vc = "vc" + std::to_string(done);
    for (std::size_t i = 0; i < done; ++i) ASSERT_TRUE(steps[i](vc).ok());
    SetFaults(true, false, 0);
    Status sealed = pki_->EnsureVirtualClusterPki("acme", vc, 24h).status();
    EXPECT_EQ(sealed.code(), Code::kUnavailable) << sealed.ToString();
    EXPECT_EQ(sealed.message().find(kRootToken), std::string::npos);
    SetFaults(false, false, 0);
    auto ca = pki_->EnsureVirtualClusterPki("acme", vc, 24h);
    ASSERT_TRUE(ca.ok()) << ca.status().ToString();
    auto issued = issuer_->IssueClientCertificate(Request("acme", vc, "view", 60s));
    ASSERT_TRUE(issued.ok()) << issued.status().ToString();
    EXPECT_TRUE(VerifiedBy(*ca, issued->certificate_pem, clock_.Now()).ok());
    auto policy = client_->Read("sys/policies/acl/septa-tenant-acme");
    ASSERT_TRUE(policy.ok());
    EXPECT_NE(policy->data.value("policy", "").find(AcmeMount(vc) + "/issue/*"), std::string::npos);
  }
}

TEST_F(VaultPkiTest, AnotherClustersCertificateDoesNotChainToThisClustersCa) {
  const std::string train = Ensure("acme", "train");
  const std::string dev = Ensure("acme", "dev");
  const std::string beta = Ensure("beta", "train");
  EXPECT_NE(train, dev);
  auto from_dev = issuer_->IssueClientCertificate(Request("acme", "dev", "admin", 60s));
  ASSERT_TRUE(from_dev.ok()) << from_dev.status().ToString();
  EXPECT_TRUE(VerifiedBy(dev, from_dev->certificate_pem, clock_.Now()).ok());
  // Both intermediates share Septa's root; trusting only the cluster's own is what refuses it.
  EXPECT_EQ(VerifiedBy(train, from_dev->certificate_pem, clock_.Now()).status().code(), Code::kUnauthenticated);
  EXPECT_EQ(VerifiedBy(beta, from_dev->certificate_pem, clock_.Now()).status().code(), Code::kUnauthenticated);
  // Expired is refused too (the verifier takes the injected clock).
  EXPECT_EQ(VerifiedBy(dev, from_dev->certificate_pem, clock_.Now() + 61s).status().code(), Code::kUnauthenticated);
}

TEST_F(VaultPkiTest, IssuingForAClusterWithoutAVaultCaIsNotFoundAndCreatesNothing) {
  Ensure("acme", "train");
  Status missing = issuer_->IssueClientCertificate(Request("acme", "gone", "edit", 60s)).status();
  EXPECT_EQ(missing.code(), Code::kNotFound) << missing.ToString();
  auto mounts = client_->Read("sys/mounts");
  ASSERT_TRUE(mounts.ok());
  EXPECT_FALSE(mounts->data.contains(AcmeMount("gone") + "/"));
  EXPECT_EQ(issuer_->IssueClientCertificate(Request("acme", "train", "root", 60s)).status().code(),
            Code::kInvalidArgument);
  ClientCertificateRequest wrong_group = Request("acme", "train", "view", 60s);
  wrong_group.groups = {"septa:admin"};
  EXPECT_EQ(issuer_->IssueClientCertificate(wrong_group).status().code(), Code::kInvalidArgument);
}

TEST_F(VaultPkiTest, RevokesBySerialOnTheClustersMount) {
  Ensure("acme", "train");
  auto issued = issuer_->IssueClientCertificate(Request("acme", "train", "edit", 600s));
  ASSERT_TRUE(issued.ok()) << issued.status().ToString();
  auto revoked = issuer_->Revoke("acme", "train", issued->serial);
  ASSERT_TRUE(revoked.ok()) << revoked.status().ToString();
  EXPECT_EQ(std::chrono::time_point_cast<std::chrono::seconds>(*revoked),
            std::chrono::time_point_cast<std::chrono::seconds>(clock_.Now()));
  auto cert = client_->Read(AcmeMount("train") + "/cert/" + SerialToVault(issued->serial));
  ASSERT_TRUE(cert.ok()) << cert.status().ToString();
  EXPECT_GT(cert->data.value("revocation_time", 0), 0);
  EXPECT_FALSE(issuer_->Revoke("acme", "dev", issued->serial).ok());  // another cluster's mount does not know it
}

TEST_F(VaultPkiTest, SealedStandbyAndRateLimitedAreUnavailableWithoutSecrets) {
  Ensure("acme", "train");
  for (int fault = 0; fault < 3; ++fault) {
    SCOPED_TRACE("fault " + std::to_string(fault));
    SetFaults(fault == 0, fault == 1, fault == 2 ? 100 : 0);
    auto issued = issuer_->IssueClientCertificate(Request("acme", "train", "edit", 600s));
    ASSERT_FALSE(issued.ok());
    EXPECT_EQ(issued.status().code(), Code::kUnavailable) << issued.status().ToString();
    EXPECT_EQ(issued.status().message().find(kRootToken), std::string::npos) << issued.status().ToString();
  }
  SetFaults(false, false, 0);
  EXPECT_TRUE(issuer_->IssueClientCertificate(Request("acme", "train", "edit", 600s)).ok());
}

TEST_F(VaultPkiTest, RemovingAClusterRemovesItsMountAndPolicyStanza) {
  Ensure("acme", "train");
  Ensure("acme", "dev");
  ASSERT_TRUE(pki_->RemoveVirtualClusterPki("acme", "train").ok());
  EXPECT_EQ(pki_->ClientCaPem("acme", "train").status().code(), Code::kNotFound);
  auto policy = client_->Read("sys/policies/acl/septa-tenant-acme");
  ASSERT_TRUE(policy.ok());
  EXPECT_EQ(policy->data.value("policy", "").find("septa-acme-x-train-pki"), std::string::npos);
  EXPECT_NE(policy->data.value("policy", "").find("septa-acme-x-dev-pki"), std::string::npos);
  ASSERT_TRUE(pki_->RemoveVirtualClusterPki("acme", "dev").ok());
  EXPECT_EQ(client_->Read("sys/policies/acl/septa-tenant-acme").status().code(), Code::kNotFound);
  EXPECT_TRUE(pki_->RemoveVirtualClusterPki("acme", "dev").ok());  // already gone
  EXPECT_TRUE(pki_->ClientCaPem("acme", "never").status().code() == Code::kNotFound);
}

TEST_F(VaultPkiTest, TheControlPlanesDecoratorEnsuresThePkiFirstAndRemovesItLast) {
  core::FakeControlPlanes inner;
  VaultControlPlanes planes(inner, *pki_);
  SetFaults(true, false, 0);
  auto sealed = planes.Ensure("acme", "train");
  ASSERT_FALSE(sealed.ok());
  EXPECT_EQ(sealed.status().code(), Code::kUnavailable);
  EXPECT_FALSE(inner.Has("acme", "train")) << "no control plane before its CA";
  SetFaults(false, false, 0);
  auto state = planes.Ensure("acme", "train");
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  EXPECT_TRUE(state->serving);
  EXPECT_TRUE(inner.Has("acme", "train"));
  auto ca = pki_->ClientCaPem("acme", "train");
  ASSERT_TRUE(ca.ok()) << ca.status().ToString();
  EXPECT_TRUE(issuer_->IssueClientCertificate(Request("acme", "train", "edit", 60s)).ok());

  inner.FailNext(Unavailable("the store is down"));
  EXPECT_FALSE(planes.Remove("acme", "train").ok());
  EXPECT_TRUE(pki_->ClientCaPem("acme", "train").ok()) << "the PKI outlives a control plane not yet removed";
  ASSERT_TRUE(planes.Remove("acme", "train").ok());
  EXPECT_FALSE(inner.Has("acme", "train"));
  EXPECT_EQ(pki_->ClientCaPem("acme", "train").status().code(), Code::kNotFound);
}

// Revocations reach Vault's CRL at the virtual cluster's reconcile: each
// revoked serial is revoked on its mount once per process; one the mount
// never issued is nothing to revoke.
TEST_F(VaultPkiTest, TheControlPlanesStepCarriesRevocationsToVault) {
  core::FakeControlPlanes inner;
  std::vector<std::string> revoked;
  int asked = 0;
  VaultControlPlanes planes(
      inner, *pki_, {},
      RevocationsToVault{.revoked_serials = [&](const std::string& tenant,
                                                const std::string& vcluster) -> Result<std::vector<std::string>> {
                           EXPECT_EQ(tenant + "/" + vcluster, "acme/train");
                           ++asked;
                           return revoked;
                         },
                         .issuer = issuer_.get()});
  ASSERT_TRUE(planes.Ensure("acme", "train").ok());
  auto issued = issuer_->IssueClientCertificate(Request("acme", "train", "edit", 60s));
  ASSERT_TRUE(issued.ok()) << issued.status().ToString();
  auto vault_record = [&]() {
    std::string serial;
    for (std::size_t i = 0; i < issued->serial.size(); i += 2) {
      serial += (i ? ":" : "") + issued->serial.substr(i, 2);
    }
    auto read = client_->Read(AcmeMount("train") + "/cert/" + serial);
    EXPECT_TRUE(read.ok()) << read.status().ToString();
    return read.ok() ? read->data.value("revocation_time", std::int64_t{0}) : std::int64_t{-1};
  };
  EXPECT_EQ(vault_record(), 0);

  revoked = {issued->serial, "0badc0de0badc0de"};  // the second was never issued on this mount
  auto state = planes.Ensure("acme", "train");
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  const std::int64_t first = vault_record();
  EXPECT_GT(first, 0) << "Vault's CRL lists the revoked certificate";
  clock_.Advance(10s);
  ASSERT_TRUE(planes.Ensure("acme", "train").ok());
  EXPECT_EQ(vault_record(), first);
  EXPECT_EQ(asked, 3);

  SetFaults(true, false, 0);
  EXPECT_EQ(planes.Ensure("acme", "train").status().code(), Code::kUnavailable);
}

}  // namespace
}  // namespace septa::vault
