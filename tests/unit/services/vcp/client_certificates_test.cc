// Client certificates on the simulated virtual control planes' one listener:
// certificates from vault::BuiltinCaIssuer (each virtual cluster's own CA),
// presented by the Kubernetes client and by the real kubectl over TLS, are
// verified after routing against the addressed virtual cluster's CA, the
// fake clock and the revocations the store records.
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "services/base/base64.h"
#include "services/kube/client.h"
#include "services/kube/resources.h"
#include "services/kubesim/api_error.h"
#include "services/store/subprocess.h"
#include "services/vault/builtin_ca_issuer.h"
#include "services/vcp/simulated_control_planes.h"
#include "tests/support/fake_clock.h"
#include "tests/support/fake_virtual_object_store.h"
#include "tests/support/seeded_random.h"
#include "tests/unit/services/vcp/vcp_test_objects.h"

namespace septa::vcp {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

const core::VirtualClusterKey kDev{"acme", "dev"};
const core::VirtualClusterKey kProd{"acme", "prod"};

json ConfigMap(const std::string& name) { return test::ConfigMap(name, "v"); }

// The certificate with the last byte of its DER, inside the signature, flipped.
std::string WithFlippedSignatureByte(const std::string& pem) {
  BIO* in = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* cert = PEM_read_bio_X509(in, nullptr, nullptr, nullptr);
  BIO_free(in);
  unsigned char* der = nullptr;
  const int n = i2d_X509(cert, &der);
  X509_free(cert);
  der[n - 1] ^= 0x01;
  const unsigned char* p = der;
  X509* tampered = d2i_X509(nullptr, &p, n);
  OPENSSL_free(der);
  BIO* out = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(out, tampered);
  X509_free(tampered);
  char* data = nullptr;
  const long len = BIO_get_mem_data(out, &data);
  std::string text(data, static_cast<std::size_t>(len));
  BIO_free(out);
  return text;
}

class ClientCertificatesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    planes_ = std::make_unique<SimulatedControlPlanes>(
        store_,
        SimulatedControlPlanesOptions{.tick_interval = 0ms, .idle_after = 0ms, .clock = &clock_, .random = &random_});
    ASSERT_TRUE(planes_->Start().ok());
    ASSERT_TRUE(planes_->Ensure(kDev.tenant, kDev.vcluster).ok());
    ASSERT_TRUE(planes_->Ensure(kProd.tenant, kProd.vcluster).ok());
  }

  // A certificate of `key`'s CA, recorded as the credentials API records it.
  vault::ClientCertificate Issue(const core::VirtualClusterKey& key, const std::string& role,
                                 std::chrono::seconds ttl = 1h) {
    auto issued = issuer_.IssueClientCertificate(
        {key.tenant, key.vcluster, "alice", {"septa:" + role}, role, ttl, std::chrono::seconds(24h)});
    EXPECT_TRUE(issued.ok()) << issued.status().message();
    store_.RecordCredential(key, issued->serial);
    return *issued;
  }

  kube::ClientConfig Config(const core::VirtualClusterKey& key, const std::string& certificate_pem,
                            const std::string& key_pem) {
    kube::ClientConfig config;
    config.server = planes_->endpoint(key.tenant, key.vcluster);
    config.ca_pem = planes_->listener_ca_certificate();
    config.client_certificate_pem = certificate_pem;
    config.client_key_pem = key_pem;
    return config;
  }

  std::unique_ptr<kube::Client> Client(const core::VirtualClusterKey& key, const std::string& certificate_pem,
                                       const std::string& key_pem) {
    kube::ClientOptions options;
    options.max_retries = 0;
    auto client = kube::Client::Create(Config(key, certificate_pem, key_pem), options);
    EXPECT_TRUE(client.ok()) << client.status().message();
    return std::move(*client);
  }

  std::unique_ptr<kube::Client> Client(const core::VirtualClusterKey& key, const vault::ClientCertificate& cert) {
    return Client(key, cert.certificate_pem, cert.private_key_pem);
  }

  // A refusal answers exactly what kubesim answers a missing credential.
  void ExpectUnauthorized(kube::Client& client) {
    auto res = client.Call({"GET", "/api/v1/namespaces"}, true);
    ASSERT_TRUE(res.ok()) << res.status().message();
    EXPECT_EQ(res->status, 401);
    EXPECT_EQ(json::parse(res->body), kubesim::UnauthorizedError().ToJson());
  }

  FakeClock clock_;
  SeededRandom random_{11};
  test::FakeVirtualObjectStore store_;
  vault::BuiltinCaIssuer issuer_{store_, clock_, random_};
  std::unique_ptr<SimulatedControlPlanes> planes_;
};

TEST_F(ClientCertificatesTest, OwnCertificateAuthenticatesWithItsGroupsRoles) {
  auto view = Client(kDev, Issue(kDev, "view"));
  auto namespaces = view->List(kube::kNamespaces, "");
  ASSERT_TRUE(namespaces.ok()) << namespaces.status().message();
  EXPECT_FALSE(namespaces->items.empty());
  EXPECT_TRUE(view->Get(kube::kServiceAccounts, "default", "default").ok());
  auto refused = view->Create(kube::kConfigMaps, "default", ConfigMap("by-viewer"));
  EXPECT_EQ(refused.status().code(), Code::kPermissionDenied) << refused.status().message();

  auto edit = Client(kDev, Issue(kDev, "edit"));
  EXPECT_TRUE(edit->Create(kube::kConfigMaps, "default", ConfigMap("by-editor")).ok());
  const kube::Resource bindings{"rbac.authorization.k8s.io", "v1", "clusterrolebindings", false};
  EXPECT_EQ(edit->Get(bindings, "", "septa-view").status().code(), Code::kPermissionDenied);

  auto admin = Client(kDev, Issue(kDev, "admin"));
  EXPECT_TRUE(admin->Get(bindings, "", "septa-view").ok());
}

TEST_F(ClientCertificatesTest, AnotherVirtualClustersCertificateIsRefused) {
  auto prod = Issue(kProd, "admin");
  store_.RecordCredential(kDev, prod.serial);  // refused for its CA alone
  ExpectUnauthorized(*Client(kDev, prod));
  EXPECT_TRUE(Client(kProd, prod)->List(kube::kNamespaces, "").ok());
}

TEST_F(ClientCertificatesTest, ExpiredAndNotYetValidCertificatesAreRefused) {
  auto cert = Issue(kDev, "admin", 1h);
  auto client = Client(kDev, cert);
  EXPECT_TRUE(client->List(kube::kNamespaces, "").ok());
  clock_.Advance(1h + 1s);
  ExpectUnauthorized(*client);

  clock_.Set(cert.not_before - 1min);
  ExpectUnauthorized(*client);
  clock_.Set(cert.not_before);
  EXPECT_TRUE(client->List(kube::kNamespaces, "").ok());
}

TEST_F(ClientCertificatesTest, TamperedAndLookalikeCertificatesAreRefused) {
  auto cert = Issue(kDev, "admin");
  ExpectUnauthorized(*Client(kDev, WithFlippedSignatureByte(cert.certificate_pem), cert.private_key_pem));

  // A CA of its own with the same subject as dev's, signing the same name.
  auto now = std::chrono::system_clock::now();
  auto lookalike_ca = http::IssueCertificate({"acme/dev-ca", {}, {}, {}, now - 1h, now + 24h * 3650, true}, nullptr);
  ASSERT_TRUE(lookalike_ca.ok());
  auto forged = http::IssueCertificate(
      {"alice", {"septa:admin"}, {}, {}, now - 1h, now + 24h * 3650, false, {}, false, true}, &*lookalike_ca);
  ASSERT_TRUE(forged.ok());
  ExpectUnauthorized(*Client(kDev, forged->certificate, forged->private_key));
}

TEST_F(ClientCertificatesTest, UnrecordedCertificatesAreRefused) {
  auto issued = issuer_.IssueClientCertificate(
      {kDev.tenant, kDev.vcluster, "alice", {"septa:admin"}, "admin", 1h, std::chrono::seconds(24h)});
  ASSERT_TRUE(issued.ok());
  auto client = Client(kDev, *issued);
  ExpectUnauthorized(*client);
  store_.RecordCredential(kDev, issued->serial);
  EXPECT_TRUE(client->List(kube::kNamespaces, "").ok());
}

TEST_F(ClientCertificatesTest, RevocationHoldsFromTheNextRequest) {
  auto cert = Issue(kDev, "admin");
  auto client = Client(kDev, cert);
  EXPECT_TRUE(client->List(kube::kNamespaces, "").ok());
  store_.RevokeCredential(kDev, cert.serial);
  ExpectUnauthorized(*client);  // on the same kept-alive connection
}

TEST_F(ClientCertificatesTest, BearerTokensStillWork) {
  auto kubeconfig = planes_->AdminKubeconfig(kDev.tenant, kDev.vcluster);
  ASSERT_TRUE(kubeconfig.ok());
  auto config = kube::ParseKubeconfig(*kubeconfig);
  ASSERT_TRUE(config.ok());
  auto client = kube::Client::Create(*config, {});
  ASSERT_TRUE(client.ok());
  EXPECT_TRUE((*client)->Create(kube::kConfigMaps, "default", ConfigMap("by-token")).ok());
  // A token decides even when a certificate of another cluster comes along.
  auto prod_cert = Issue(kProd, "view");
  config->client_certificate_pem = prod_cert.certificate_pem;
  config->client_key_pem = prod_cert.private_key_pem;
  auto both = kube::Client::Create(*config, {});
  ASSERT_TRUE(both.ok());
  EXPECT_TRUE((*both)->Get(kube::kConfigMaps, "default", "by-token").ok());
}

// Issue 28 L1: while its tenant is suspended, a virtual cluster refuses the
// tenant's credentials with 403 Forbidden naming the suspension (a genuine
// credential: 401 would send kubectl asking for another), read from the
// store on every request, kept-alive connection and all: certificates and
// service-account tokens alike. Septa's own token still works (the syncer
// and the provisioner keep access), another tenant is untouched, and
// resuming restores every credential.
TEST_F(ClientCertificatesTest, ASuspendedTenantsCredentialsAreForbiddenUntilItIsResumed) {
  const core::VirtualClusterKey other{"beta", "dev"};
  ASSERT_TRUE(planes_->Ensure(other.tenant, other.vcluster).ok());
  auto cert = Client(kDev, Issue(kDev, "admin"));
  auto others = Client(other, Issue(other, "admin"));
  auto kubeconfig = planes_->AdminKubeconfig(kDev.tenant, kDev.vcluster);
  ASSERT_TRUE(kubeconfig.ok());
  auto septa_config = kube::ParseKubeconfig(*kubeconfig);
  ASSERT_TRUE(septa_config.ok());
  auto septa = kube::Client::Create(*septa_config, {});
  ASSERT_TRUE(septa.ok());
  auto requested = cert->CreateSubresource(
      kube::kServiceAccounts, "default", "default", "token",
      {{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "TokenRequest"}, {"spec", json::object()}});
  ASSERT_TRUE(requested.ok()) << requested.status().message();
  const std::string sa_token = (*requested)["status"].value("token", "");
  kube::ClientConfig token_config = Config(kDev, "", "");
  token_config.token = sa_token;
  kube::ClientOptions no_retries;
  no_retries.max_retries = 0;
  auto token = kube::Client::Create(token_config, no_retries);
  ASSERT_TRUE(token.ok());
  // What a service account may do in every virtual cluster: review its own token.
  auto reviews_itself = [&] {
    return (*token)
        ->Create(kube::kTokenReviews, "",
                 {{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "TokenReview"}, {"spec", {{"token", sa_token}}}})
        .status();
  };
  EXPECT_TRUE(cert->List(kube::kNamespaces, "").ok());
  EXPECT_TRUE(reviews_itself().ok());

  store_.SetTenantSuspended(kDev.tenant, true);
  const json forbidden = kubesim::ForbiddenError(
                             "tenant \"acme\" is suspended: its credentials are refused until an admin makes it "
                             "ACTIVE again")
                             .ToJson();
  for (kube::Client* client : {cert.get(), token->get()}) {
    auto refused = client->Call({"GET", "/api/v1/namespaces"}, true);  // the same kept-alive connection
    ASSERT_TRUE(refused.ok()) << refused.status().message();
    EXPECT_EQ(refused->status, 403);
    EXPECT_EQ(json::parse(refused->body), forbidden);
  }
  EXPECT_EQ(cert->Create(kube::kConfigMaps, "default", ConfigMap("while-suspended")).status().code(),
            Code::kPermissionDenied);
  EXPECT_EQ(reviews_itself().code(), Code::kPermissionDenied);
  EXPECT_EQ((*septa)->Get(kube::kConfigMaps, "default", "while-suspended").status().code(), Code::kNotFound)
      << "Septa's own access stays; nothing was written";
  EXPECT_TRUE(others->Create(kube::kConfigMaps, "default", ConfigMap("other-tenant")).ok());

  store_.SetTenantSuspended(kDev.tenant, false);
  EXPECT_TRUE(cert->Create(kube::kConfigMaps, "default", ConfigMap("resumed")).ok());
  EXPECT_TRUE(reviews_itself().ok());
}

// The real kubectl, with the certificate and key as base64 data in its kubeconfig.
class KubectlClientCertificateTest : public ClientCertificatesTest {
 protected:
  store::ProcessOutput Kubectl(const core::VirtualClusterKey& key, const vault::ClientCertificate& cert,
                               std::vector<std::string> args = {"get", "ns", "-o", "name"}) {
    const std::filesystem::path dir =
        std::filesystem::path(::testing::TempDir()) / ("vcp-kubectl-" + std::to_string(::getpid()) + "-" + cert.serial);
    std::filesystem::create_directories(dir);
    const std::filesystem::path kubeconfig = dir / "kubeconfig";
    std::ofstream(kubeconfig) << "apiVersion: v1\nkind: Config\nclusters:\n- name: vc\n  cluster:\n    server: "
                              << planes_->endpoint(key.tenant, key.vcluster) << "\n    certificate-authority-data: "
                              << base::Base64Encode(planes_->listener_ca_certificate())
                              << "\nusers:\n- name: alice\n  user:\n    client-certificate-data: "
                              << base::Base64Encode(cert.certificate_pem)
                              << "\n    client-key-data: " << base::Base64Encode(cert.private_key_pem)
                              << "\ncontexts:\n- name: vc\n  context:\n    cluster: vc\n    user: alice\n"
                                 "current-context: vc\n";
    std::vector<std::string> argv = {SEPTA_KUBECTL, "--kubeconfig", kubeconfig.string(), "--cache-dir",
                                     (dir / "cache").string()};
    argv.insert(argv.end(), args.begin(), args.end());
    auto run = store::RunProcess(argv, dir);
    EXPECT_TRUE(run.ok()) << "cannot run " << SEPTA_KUBECTL << ": " << run.status().message();
    std::filesystem::remove_all(dir);
    return run.ok() ? *run : store::ProcessOutput{};
  }
};

TEST_F(KubectlClientCertificateTest, KubectlGetsNamespacesWithItsOwnCertificateOnly) {
  auto own = Kubectl(kDev, Issue(kDev, "view"));
  EXPECT_EQ(own.exit_code, 0) << own.output;
  EXPECT_THAT(own.output, ::testing::HasSubstr("namespace/kube-system"));

  auto other = Kubectl(kDev, Issue(kProd, "admin"));
  EXPECT_NE(other.exit_code, 0) << other.output;
  EXPECT_THAT(other.output, ::testing::HasSubstr("You must be logged in to the server"));  // its 401
}

// The lifetime of the service-account token `kubectl create token` printed
// in `output` (its JWT's exp - iat), or -1.
std::int64_t TokenLifetime(const std::string& output) {
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("eyJ")) continue;
    const std::size_t first = line.find('.'), second = line.find('.', first + 1);
    auto payload = base::Base64UrlDecode(line.substr(first + 1, second - first - 1));
    if (!payload) return -1;
    const json claims = json::parse(*payload);
    return claims.at("exp").get<std::int64_t>() - claims.at("iat").get<std::int64_t>();
  }
  return -1;
}

// A token a certificate's holder mints lives no longer than the tier lets
// a credential live, as kube-apiserver's --service-account-max-token-
// expiration caps it: shortened with a warning, never refused. The cap is
// read at each TokenRequest, so a tier change holds from the next one.
TEST_F(KubectlClientCertificateTest, ServiceAccountTokensLiveNoLongerThanTheTierAllows) {
  const auto admin = Issue(kDev, "admin");
  store_.SetCredentialTtlMax(kDev.tenant, 86400);  // the shared tier's
  auto decade = Kubectl(kDev, admin, {"create", "token", "default", "--duration", "87600h"});
  EXPECT_EQ(decade.exit_code, 0) << decade.output;
  EXPECT_THAT(decade.output,
              ::testing::HasSubstr("Warning: requested expiration of 315360000 seconds shortened to 86400 seconds"));
  EXPECT_EQ(TokenLifetime(decade.output), 86400) << decade.output;

  store_.SetCredentialTtlMax(kDev.tenant, 900);  // moved to the exclusive tier
  auto capped = Kubectl(kDev, admin, {"create", "token", "default", "--duration", "1h"});
  EXPECT_EQ(TokenLifetime(capped.output), 900) << capped.output;
  auto shorter = Kubectl(kDev, admin, {"create", "token", "default", "--duration", "10m"});
  EXPECT_EQ(TokenLifetime(shorter.output), 600) << shorter.output;
  EXPECT_THAT(shorter.output, ::testing::Not(::testing::HasSubstr("Warning"))) << "within the cap: as asked";
}

}  // namespace
}  // namespace septa::vcp
