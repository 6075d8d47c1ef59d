// Kubeconfigs and credentials of virtual clusters over REST and gRPC, on a
// whole septad with a real PostgreSQL: the certificate in the kubeconfig says
// what was asked (CN, O, lifetime capped by the tier), the row and the audit
// record are written and the private key is in no table, every bad input is
// refused naming its field, revocation is idempotent and told on NOTIFY.
// Who may call what is in authorization_table.h (run by rest_test and grpc_test).
#include <grpcpp/grpcpp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <set>
#include <tuple>

#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "septa/v1/vcluster.grpc.pb.h"
#include "services/base/base64.h"
#include "services/kube/client.h"
#include "services/kube/config.h"
#include "services/kube/resources.h"
#include "services/vcp/simulated_control_planes.h"
#include "tests/integration/api/api_fixture.h"

namespace septa::test {
namespace {

using json = nlohmann::json;

struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
using Cert = std::unique_ptr<X509, X509Free>;

Cert ParseCert(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  Cert cert(PEM_read_bio_X509(bio, nullptr, nullptr, nullptr));
  BIO_free(bio);
  return cert;
}

std::vector<std::string> Entries(X509* cert, int nid) {
  std::vector<std::string> out;
  X509_NAME* name = X509_get_subject_name(cert);
  for (int i = X509_NAME_get_index_by_NID(name, nid, -1); i >= 0; i = X509_NAME_get_index_by_NID(name, nid, i)) {
    ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, i));
    out.emplace_back(reinterpret_cast<const char*>(ASN1_STRING_get0_data(data)), ASN1_STRING_length(data));
  }
  return out;
}

// notAfter - notBefore.
long LifetimeSeconds(X509* cert) {
  int days = 0, seconds = 0;
  EXPECT_EQ(ASN1_TIME_diff(&days, &seconds, X509_get0_notBefore(cert), X509_get0_notAfter(cert)), 1);
  return days * 86400L + seconds;
}

std::string Decoded(const YAML::Node& node) {
  auto decoded = base::Base64Decode(node.as<std::string>());
  EXPECT_TRUE(decoded.has_value());
  return decoded.value_or("");
}

class CredentialsTest : public ApiTest {
 protected:
  void SetUp() override {
    ApiTest::SetUp();
    if (HasFatalFailure()) return;
    PutNodes({WholeGpuNode("a100-0", 4)});
    CreateTenant("acme", "dedicated");
    CreateTenant("beta", "dedicated");
    owner_ = CreateToken("tenant:acme", "owner");
    viewer_ = CreateToken("tenant:acme", "viewer");
    auto created = Call(owner_, "POST", "/v1/tenants/acme/vclusters",
                        json{{"name", "train"}, {"capacity", {{"gpus", {{"count", 1}}}}}}.dump());
    ASSERT_EQ(created.status, 201) << created.body;
  }

  // Makes the virtual cluster READY as the provisioner would: its control
  // plane stored (with its CA) and serving, its endpoint written. Returns the endpoint.
  std::string MakeReady(const std::string& tenant, const std::string& name) {
    auto serving = app_->control_planes().Ensure(tenant, name);
    EXPECT_TRUE(serving.ok()) << serving.status().ToString();
    if (!serving.ok()) return "";
    auto migrations = store::EmbeddedMigrations();
    EXPECT_TRUE(migrations.ok());
    store::PgStore side(store::PgStoreOptions{.database_url = db_->url(), .pool_size = 1, .migrations = *migrations});
    const Status st = side.Transact(core::TxMode::kReadWrite, [&](core::Tx& tx) -> Status {
      auto vc = tx.VirtualClusters().Get(tenant, name);
      SEPTA_RETURN_IF_ERROR(vc);
      vc->state = tenancy::VirtualClusterState::kReady;
      vc->endpoint = serving->endpoint;
      ++vc->version;
      return tx.VirtualClusters().Update(*vc, vc->version - 1);
    });
    EXPECT_TRUE(st.ok()) << st.ToString();
    return serving->endpoint;
  }

  HttpResult Issue(const std::string& token, const json& body, const std::string& vcluster = "train") {
    return Call(token, "POST", "/v1/tenants/acme/vclusters/" + vcluster + ":kubeconfig", body.dump());
  }

  // The id of the API token `secret` ("septa_<id>_<secret>").
  static std::string TokenId(const std::string& secret) {
    const auto first = secret.find('_');
    return secret.substr(first + 1, secret.find('_', first + 1) - first - 1);
  }

  // Rows of `query` on septad's database.
  pqxx::result Query(const std::string& query) {
    pqxx::connection c(db_->url());
    pqxx::nontransaction tx(c);
    return tx.exec(query);
  }

  std::string owner_, viewer_;
};

TEST_F(CredentialsTest, TheKubeconfigHoldsACertificateForWhatWasAsked) {
  const std::string endpoint = MakeReady("acme", "train");
  auto r = Issue(owner_, {{"ttl", "15m"}, {"role", "edit"}});
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.header("cache-control"), "no-store");
  const json out = json::parse(r.body);
  EXPECT_EQ(out["role"], "edit");
  EXPECT_FALSE(out.value("ttl_capped", false));
  const std::string serial = out["serial"];
  EXPECT_EQ(serial.size(), 32u);

  const YAML::Node kubeconfig = YAML::Load(out["kubeconfig"].get<std::string>());
  EXPECT_EQ(kubeconfig["kind"].as<std::string>(), "Config");
  EXPECT_EQ(kubeconfig["clusters"][0]["cluster"]["server"].as<std::string>(), endpoint);
  EXPECT_EQ(Decoded(kubeconfig["clusters"][0]["cluster"]["certificate-authority-data"]),
            app_->control_planes().listener_ca_certificate());
  const YAML::Node user = kubeconfig["users"][0]["user"];
  const std::string key_pem = Decoded(user["client-key-data"]);
  ASSERT_NE(key_pem.find("PRIVATE KEY"), std::string::npos);
  Cert cert = ParseCert(Decoded(user["client-certificate-data"]));
  ASSERT_TRUE(cert);
  const std::string cn = "acme:" + TokenId(owner_);
  EXPECT_EQ(Entries(cert.get(), NID_commonName), std::vector<std::string>{cn});
  EXPECT_EQ(Entries(cert.get(), NID_organizationName), std::vector<std::string>{"septa:edit"});
  EXPECT_EQ(LifetimeSeconds(cert.get()), 15 * 60);
  EXPECT_EQ(kubeconfig["current-context"].as<std::string>(), kubeconfig["contexts"][0]["name"].as<std::string>());

  // The row and the audit record, written together.
  const auto rows = Query(
      "SELECT common_name, array_to_string(groups, ','), role, issued_by,"
      " extract(epoch from expire_time - issue_time)::bigint, revoke_time IS NULL"
      " FROM vcluster_credentials WHERE serial = '" +
      serial + "'");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0][0].as<std::string>(), cn);
  EXPECT_EQ(rows[0][1].as<std::string>(), "septa:edit");
  EXPECT_EQ(rows[0][2].as<std::string>(), "edit");
  EXPECT_EQ(rows[0][3].as<std::string>(), "tenant:acme");
  EXPECT_EQ(rows[0][4].as<long>(), 15 * 60);
  EXPECT_TRUE(rows[0][5].as<bool>());
  const auto audit = Query(
      "SELECT principal, new_etag FROM audit_log WHERE action = 'vcluster.credential.issue'"
      " AND resource = 'tenants/acme/vclusters/train/credentials/" +
      serial + "'");
  ASSERT_EQ(audit.size(), 1u);
  EXPECT_EQ(audit[0][0].as<std::string>(), "tenant:acme");
  EXPECT_EQ(audit[0][1].as<std::string>().rfind("role=edit expire_time=", 0), 0u) << audit[0][1].as<std::string>();

  // The private key is in no row of any table, in PEM or as its base64 body.
  std::string body_line = key_pem.substr(key_pem.find('\n') + 1, 40);
  const auto tables = Query("SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'");
  ASSERT_GT(tables.size(), 10u);
  for (const auto& t : tables) {
    const std::string table = t[0].as<std::string>();
    const auto hits = Query("SELECT count(*) FROM \"" + table + "\" x WHERE x::text LIKE '%" + body_line +
                            "%' OR x::text LIKE '%" + base::Base64Encode(key_pem).substr(0, 40) + "%'");
    EXPECT_EQ(hits[0][0].as<long>(), 0) << "the private key is in table " << table;
  }

  // Listed for the tenant's viewers; others see no virtual cluster.
  auto listed = Call(viewer_, "GET", "/v1/tenants/acme/vclusters/train/credentials");
  ASSERT_EQ(listed.status, 200) << listed.body;
  const json credential = json::parse(listed.body)["credentials"][0];
  EXPECT_EQ(credential["serial"], serial);
  EXPECT_EQ(credential["common_name"], cn);
  EXPECT_EQ(credential["groups"], json::array({"septa:edit"}));
  EXPECT_EQ(credential["issued_by"], "tenant:acme");
  EXPECT_FALSE(credential.contains("revoke_time"));
}

// Issue 28 L1 end to end: REST on a real socket, the real PostgreSQL, the
// real virtual-cluster listener with a real client certificate. A suspended
// tenant keeps its records but uses nothing: its owner token reads and
// never writes (403), no kubeconfig or token is issued for it (412, for
// admins too), its certificate and service-account token get 403 Forbidden
// from its virtual cluster's API from the next request on; another tenant
// is untouched; resumed, every credential works again.
TEST_F(CredentialsTest, ASuspendedTenantKeepsItsRecordsButUsesNothingUntilResumed) {
  MakeReady("acme", "train");
  auto issued = Issue(owner_, {{"ttl", "1h"}, {"role", "admin"}});
  ASSERT_EQ(issued.status, 200) << issued.body;
  auto config = kube::ParseKubeconfig(json::parse(issued.body)["kubeconfig"].get<std::string>());
  ASSERT_TRUE(config.ok()) << config.status().message();
  kube::ClientOptions no_retries;
  no_retries.max_retries = 0;
  auto cert = kube::Client::Create(*config, no_retries);
  ASSERT_TRUE(cert.ok()) << cert.status().message();
  auto requested = (*cert)->CreateSubresource(
      kube::kServiceAccounts, "default", "default", "token",
      {{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "TokenRequest"}, {"spec", json::object()}});
  ASSERT_TRUE(requested.ok()) << requested.status().message();
  kube::ClientConfig token_config = *config;
  token_config.token = (*requested)["status"].value("token", "");
  token_config.client_certificate_pem.clear();
  token_config.client_key_pem.clear();
  auto token = kube::Client::Create(token_config, no_retries);
  ASSERT_TRUE(token.ok());
  ASSERT_TRUE((*cert)
                  ->Create(kube::kConfigMaps, "default",
                           {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "before"}}}})
                  .ok());
  const std::string beta_owner = CreateToken("tenant:beta", "owner");

  auto suspended = Call(admin_, "PATCH", "/v1/tenants/acme", R"({"state":"SUSPENDED"})");
  ASSERT_EQ(suspended.status, 200) << suspended.body;
  EXPECT_EQ(json::parse(suspended.body)["state"], "SUSPENDED");

  // REST: the owner's token reads, never writes; nothing is issued for acme.
  auto read = Call(owner_, "GET", "/v1/tenants/acme");
  ASSERT_EQ(read.status, 200) << read.body;
  EXPECT_EQ(json::parse(read.body)["state"], "SUSPENDED");
  EXPECT_EQ(Call(owner_, "GET", "/v1/tenants/acme/vclusters/train").status, 200);
  const std::vector<std::tuple<std::string, std::string, std::string>> writes = {
      {"POST", "/v1/tenants/acme/vclusters/train:kubeconfig", R"({"ttl":"1h","role":"view"})"},
      {"PATCH", "/v1/tenants/acme/vclusters/train", R"({"display_name":"x"})"},
      {"POST", "/v1/tenants/acme/vclusters/train:sleep", ""},
      {"DELETE", "/v1/tenants/acme/vclusters/train", ""},
      {"PATCH", "/v1/tenants/acme", R"({"display_name":"x"})"},
      {"POST", "/v1/tokens", R"({"principal":"tenant:acme","role":"viewer"})"},
  };
  for (const auto& [method, target, body] : writes) {
    auto refused = Call(owner_, method, target, body);
    EXPECT_EQ(refused.status, 403) << method << " " << target << ": " << refused.body;
    EXPECT_EQ(json::parse(refused.body)["message"].get<std::string>().rfind("tenant \"acme\" is suspended: ", 0), 0u)
        << refused.body;
  }
  auto by_admin = Issue(admin_, {{"ttl", "1h"}, {"role", "admin"}});
  EXPECT_EQ(by_admin.status, 412) << by_admin.body;
  EXPECT_NE(by_admin.body.find("no credentials are issued"), std::string::npos) << by_admin.body;
  ExpectProblem(Call(admin_, "POST", "/v1/tokens", R"({"principal":"tenant:acme","role":"owner"})"), 412, "principal",
                "a token for a suspended tenant");
  EXPECT_EQ(Query("SELECT count(*) FROM vcluster_credentials")[0][0].as<long>(), 1);

  // The virtual cluster's API: 403 Forbidden, a Kubernetes Status naming the suspension.
  for (kube::Client* client : {cert->get(), token->get()}) {
    auto refused = client->Call({"GET", "/api/v1/namespaces/default/configmaps"}, true);
    ASSERT_TRUE(refused.ok()) << refused.status().message();
    EXPECT_EQ(refused->status, 403) << refused->body;
    const json status = json::parse(refused->body);
    EXPECT_EQ(status["kind"], "Status");
    EXPECT_EQ(status["reason"], "Forbidden");
    EXPECT_NE(status["message"].get<std::string>().find("tenant \"acme\" is suspended"), std::string::npos);
  }
  // Another tenant is untouched.
  EXPECT_EQ(Call(beta_owner, "PATCH", "/v1/tenants/beta", R"({"display_name":"Beta"})").status, 200);

  auto resumed = Call(admin_, "PATCH", "/v1/tenants/acme", R"({"state":"ACTIVE"})");
  ASSERT_EQ(resumed.status, 200) << resumed.body;
  EXPECT_TRUE((*cert)->Get(kube::kConfigMaps, "default", "before").ok()) << "kept, and readable again";
  auto review = (*token)->Create(
      kube::kTokenReviews, "",
      {{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "TokenReview"}, {"spec", {{"token", token_config.token}}}});
  EXPECT_TRUE(review.ok()) << review.status().message();
  EXPECT_EQ(Issue(owner_, {{"ttl", "1h"}, {"role", "view"}}).status, 200);
  EXPECT_EQ(Call(owner_, "PATCH", "/v1/tenants/acme", R"({"display_name":"Acme"})").status, 200);
}

TEST_F(CredentialsTest, TheTtlIsCappedByTheTenantsTierAndDefaultsToTheCap) {
  MakeReady("acme", "train");
  Query("UPDATE trust_tiers SET credential_ttl_max_seconds = 120 WHERE name = 'dedicated'");
  auto capped = Issue(owner_, {{"ttl", "1h"}, {"role", "view"}});
  ASSERT_EQ(capped.status, 200) << capped.body;
  json out = json::parse(capped.body);
  EXPECT_TRUE(out["ttl_capped"].get<bool>());
  Cert cert = ParseCert(
      Decoded(YAML::Load(out["kubeconfig"].get<std::string>())["users"][0]["user"]["client-certificate-data"]));
  ASSERT_TRUE(cert);
  EXPECT_EQ(LifetimeSeconds(cert.get()), 120);

  auto defaulted = Issue(viewer_, {{"role", "view"}});
  ASSERT_EQ(defaulted.status, 200) << defaulted.body;
  out = json::parse(defaulted.body);
  EXPECT_FALSE(out.value("ttl_capped", false));
  cert = ParseCert(
      Decoded(YAML::Load(out["kubeconfig"].get<std::string>())["users"][0]["user"]["client-certificate-data"]));
  ASSERT_TRUE(cert);
  EXPECT_EQ(LifetimeSeconds(cert.get()), 120);
  EXPECT_EQ(Entries(cert.get(), NID_organizationName), std::vector<std::string>{"septa:view"});

  // An admin's certificate names the admin's token.
  auto admin = Issue(admin_, {{"ttl", "90s"}, {"role", "admin"}});
  ASSERT_EQ(admin.status, 200) << admin.body;
  cert = ParseCert(Decoded(YAML::Load(
      json::parse(admin.body)["kubeconfig"].get<std::string>())["users"][0]["user"]["client-certificate-data"]));
  ASSERT_TRUE(cert);
  EXPECT_EQ(Entries(cert.get(), NID_commonName), std::vector<std::string>{"admin:" + TokenId(admin_)});
  EXPECT_EQ(LifetimeSeconds(cert.get()), 90);
}

TEST_F(CredentialsTest, BadInputIsRefusedNamingTheFieldAndWritesNothing) {
  MakeReady("acme", "train");
  for (const std::string ttl : {"soon", "10", "0s", "-1h", "8761h", "1h-5m"}) {
    ExpectProblem(Issue(owner_, {{"ttl", ttl}, {"role", "view"}}), 400, "ttl", "ttl " + ttl);
  }
  ExpectProblem(Issue(owner_, {{"ttl", "1h"}}), 400, "role", "no role");
  auto unknown = Issue(owner_, {{"role", "root"}});
  ExpectProblem(unknown, 400, "role", "role root");
  EXPECT_NE(unknown.body.find("admin, edit, view"), std::string::npos) << unknown.body;
  ExpectProblem(Issue(viewer_, {{"role", "edit"}}), 403, "role", "a viewer asking for edit");
  ExpectProblem(Issue(owner_, {{"role", "view"}, {"vcluster", "other"}}), 400, "vcluster", "another vcluster");
  EXPECT_EQ(Issue(owner_, {{"role", "view"}}, "nope").status, 404);
  EXPECT_EQ(Issue(owner_, {{"role", "view"}}, "Bad_Name").status, 404);
  EXPECT_EQ(Issue(owner_, {{"role", "view"}, {"ttl", 5}}).status, 400);

  // Only READY virtual clusters with an endpoint get a kubeconfig.
  for (auto state : {tenancy::VirtualClusterState::kProvisioning, tenancy::VirtualClusterState::kSleeping,
                     tenancy::VirtualClusterState::kDeleting, tenancy::VirtualClusterState::kFailed}) {
    SetVirtualClusterState("acme", "train", state);
    auto r = Issue(owner_, {{"role", "view"}});
    EXPECT_EQ(r.status, 412) << r.body;
    EXPECT_NE(r.body.find(std::string(tenancy::VirtualClusterStateName(state))), std::string::npos) << r.body;
  }
  EXPECT_EQ(Query("SELECT 1 FROM vcluster_credentials").size(), 0u);
  EXPECT_EQ(Query("SELECT 1 FROM audit_log WHERE action LIKE 'vcluster.credential.%'").size(), 0u);
}

TEST_F(CredentialsTest, RevocationIsIdempotentAuditedOnceAndToldOnNotify) {
  MakeReady("acme", "train");
  auto issued = Issue(owner_, {{"role", "view"}});
  ASSERT_EQ(issued.status, 200) << issued.body;
  const std::string serial = json::parse(issued.body)["serial"];
  const std::string target = "/v1/tenants/acme/vclusters/train/credentials/" + serial;

  pqxx::connection listener(db_->url());
  std::vector<std::string> told;
  struct Receiver : pqxx::notification_receiver {
    Receiver(pqxx::connection& c, std::vector<std::string>& out)
        : pqxx::notification_receiver(c, "septa_credentials"), out_(out) {}
    void operator()(const std::string& payload, int) override { out_.push_back(payload); }
    std::vector<std::string>& out_;
  } receiver(listener, told);

  EXPECT_EQ(Call(viewer_, "DELETE", target).status, 403);
  auto first = Call(owner_, "DELETE", target);
  ASSERT_EQ(first.status, 200) << first.body;
  const json revoked = json::parse(first.body);
  ASSERT_TRUE(revoked.contains("revoke_time"));
  auto again = Call(admin_, "DELETE", target);
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(json::parse(again.body)["revoke_time"], revoked["revoke_time"]);
  EXPECT_EQ(
      Call(owner_, "DELETE", "/v1/tenants/acme/vclusters/train/credentials/00112233445566778899aabbccddeeff").status,
      404);
  EXPECT_EQ(Query("SELECT 1 FROM audit_log WHERE action = 'vcluster.credential.revoke' AND resource = 'tenants/"
                  "acme/vclusters/train/credentials/" +
                  serial + "'")
                .size(),
            1u);

  // One notice, for the first revocation only.
  for (int waits = 0; told.empty() && waits < 3; ++waits) listener.await_notification(10, 0);
  EXPECT_EQ(told, std::vector<std::string>{"acme/train/" + serial});
  EXPECT_EQ(listener.get_notifs(), 0);

  auto listed = Call(owner_, "GET", "/v1/tenants/acme/vclusters/train/credentials");
  EXPECT_EQ(json::parse(listed.body)["credentials"][0]["revoke_time"], revoked["revoke_time"]);
}

TEST_F(CredentialsTest, ListingPagesBySerial) {
  MakeReady("acme", "train");
  std::set<std::string> serials;
  for (int i = 0; i < 5; ++i) {
    auto r = Issue(owner_, {{"role", "view"}, {"ttl", "1m"}});
    ASSERT_EQ(r.status, 200) << r.body;
    serials.insert(json::parse(r.body)["serial"].get<std::string>());
  }
  std::vector<std::string> seen;
  std::string token;
  do {
    auto page = Call(
        viewer_, "GET",
        "/v1/tenants/acme/vclusters/train/credentials?page_size=2" + (token.empty() ? "" : "&page_token=" + token));
    ASSERT_EQ(page.status, 200) << page.body;
    const json body = json::parse(page.body);
    EXPECT_LE(body["credentials"].size(), 2u);
    for (const auto& c : body["credentials"]) seen.push_back(c["serial"]);
    token = body.value("next_page_token", "");
  } while (!token.empty());
  EXPECT_EQ(seen, std::vector<std::string>(serials.begin(), serials.end()));
  ExpectProblem(Call(viewer_, "GET", "/v1/tenants/acme/vclusters/train/credentials?page_size=501"), 400, "page_size",
                "page_size 501");
}

// "-" lists every virtual cluster's credentials (AIP-159), paged across
// them; expiring_within_seconds keeps only live ones expiring that soon:
// what the portal's Overview shows, in one read however many clusters.
TEST_F(CredentialsTest, EveryVirtualClustersLiveCredentialsExpiringSoonInOneList) {
  auto eval = Call(owner_, "POST", "/v1/tenants/acme/vclusters",
                   json{{"name", "eval"}, {"capacity", {{"gpus", {{"count", 1}}}}}}.dump());
  ASSERT_EQ(eval.status, 201) << eval.body;
  MakeReady("acme", "train");
  MakeReady("acme", "eval");
  Query("UPDATE trust_tiers SET credential_ttl_max_seconds = 86400 WHERE name = 'dedicated'");
  auto serial = [&](const std::string& vcluster, const std::string& ttl) {
    auto r = Issue(owner_, {{"role", "view"}, {"ttl", ttl}}, vcluster);
    EXPECT_EQ(r.status, 200) << r.body;
    return r.status == 200 ? json::parse(r.body)["serial"].get<std::string>() : "";
  };
  const std::string train_soon = serial("train", "10m"), train_later = serial("train", "3h");
  const std::string eval_soon = serial("eval", "20m"), eval_revoked = serial("eval", "5m");
  ASSERT_EQ(Call(owner_, "DELETE", "/v1/tenants/acme/vclusters/eval/credentials/" + eval_revoked).status, 200);

  auto list = [&](const std::string& query) {
    std::vector<std::pair<std::string, std::string>> seen;
    std::string token;
    do {
      auto page = Call(viewer_, "GET",
                       "/v1/tenants/acme/vclusters/-/credentials?page_size=1" + query +
                           (token.empty() ? "" : "&page_token=" + token));
      EXPECT_EQ(page.status, 200) << page.body;
      if (page.status != 200) break;
      const json body = json::parse(page.body);
      for (const auto& c : body["credentials"]) seen.emplace_back(c["vcluster"], c["serial"]);
      token = body.value("next_page_token", "");
    } while (!token.empty());
    return seen;
  };
  using Seen = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(list("&expiring_within_seconds=3600"), (Seen{{"eval", eval_soon}, {"train", train_soon}}));
  EXPECT_EQ(list("&expiring_within_seconds=86400").size(), 3u);
  EXPECT_EQ(list("").size(), 4u) << "without the filter, revoked ones too";

  ExpectProblem(Call(owner_, "GET", "/v1/tenants/acme/vclusters/-/credentials?expiring_within_seconds=-1"), 400,
                "expiring_within_seconds", "a negative window");
  ExpectProblem(Call(owner_, "GET", "/v1/tenants/acme/vclusters/-/credentials?expiring_within_seconds=31536001"), 400,
                "expiring_within_seconds", "more than a year");
  auto single = json::parse(Call(owner_, "GET", "/v1/tenants/acme/vclusters/train/credentials?page_size=1").body);
  ExpectProblem(
      Call(owner_, "GET",
           "/v1/tenants/acme/vclusters/-/credentials?page_token=" + single["next_page_token"].get<std::string>()),
      400, "page_token", "one cluster's token for the tenant-wide list");
  // Another tenant's and an unknown tenant's are not found.
  const std::string beta = CreateToken("tenant:beta", "owner");
  EXPECT_EQ(Call(beta, "GET", "/v1/tenants/acme/vclusters/-/credentials").status, 404);
  EXPECT_EQ(Call(admin_, "GET", "/v1/tenants/nobody/vclusters/-/credentials").status, 404);
  EXPECT_EQ(Call(beta, "GET", "/v1/tenants/beta/vclusters/-/credentials").status, 200);
}

// The same use cases over gRPC: answers and canonical codes.
TEST_F(CredentialsTest, GrpcIssuesListsAndRevokes) {
  MakeReady("acme", "train");
  auto channel =
      grpc::CreateChannel("127.0.0.1:" + std::to_string(app_->grpc_port()), grpc::InsecureChannelCredentials());
  auto stub = v1::VirtualClusterService::NewStub(channel);
  auto ctx = [](const std::string& token) {
    auto c = std::make_unique<grpc::ClientContext>();
    c->AddMetadata("authorization", "Bearer " + token);
    c->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return c;
  };
  v1::IssueKubeconfigRequest issue;
  issue.set_tenant("acme");
  issue.set_vcluster("train");
  issue.set_role("admin");
  issue.set_ttl("45m");
  v1::IssueKubeconfigResponse issued;
  ASSERT_TRUE(stub->IssueKubeconfig(ctx(owner_).get(), issue, &issued).ok());
  EXPECT_EQ(issued.role(), "admin");
  EXPECT_FALSE(issued.ttl_capped());
  EXPECT_NE(issued.kubeconfig().find("client-key-data"), std::string::npos);

  issue.set_ttl("forever");
  auto bad = stub->IssueKubeconfig(ctx(owner_).get(), issue, &issued);
  EXPECT_EQ(bad.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  google::rpc::Status details;
  ASSERT_TRUE(details.ParseFromString(bad.error_details()));
  google::rpc::BadRequest br;
  ASSERT_TRUE(details.details_size() > 0 && details.details(0).UnpackTo(&br)) << bad.error_message();
  EXPECT_EQ(br.field_violations(0).field(), "ttl");
  issue.set_ttl("");
  EXPECT_EQ(stub->IssueKubeconfig(ctx(viewer_).get(), issue, &issued).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(stub->IssueKubeconfig(ctx(CreateToken("tenant:beta", "owner")).get(), issue, &issued).error_code(),
            grpc::StatusCode::NOT_FOUND);

  v1::ListCredentialsRequest list;
  list.set_tenant("acme");
  list.set_vcluster("train");
  v1::ListCredentialsResponse listed;
  ASSERT_TRUE(stub->ListCredentials(ctx(viewer_).get(), list, &listed).ok());
  ASSERT_EQ(listed.credentials_size(), 1);
  EXPECT_EQ(listed.credentials(0).role(), "admin");

  v1::RevokeCredentialRequest revoke;
  revoke.set_tenant("acme");
  revoke.set_vcluster("train");
  revoke.set_serial(listed.credentials(0).serial());
  v1::Credential revoked;
  ASSERT_TRUE(stub->RevokeCredential(ctx(admin_).get(), revoke, &revoked).ok());
  EXPECT_TRUE(revoked.has_revoke_time());
  SetVirtualClusterState("acme", "train", tenancy::VirtualClusterState::kSleeping);
  issue.set_role("view");
  EXPECT_EQ(stub->IssueKubeconfig(ctx(owner_).get(), issue, &issued).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
}

}  // namespace
}  // namespace septa::test
