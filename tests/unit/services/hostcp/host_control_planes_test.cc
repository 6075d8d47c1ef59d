// The control planes on a real host, against an in-process kubesim with one
// node (ticked by the test, so every step is deterministic) and the test
// run's PostgreSQL (the CA in a migrated database, kine's databases and roles
// on the same server): Ensure applies the manifests and creates the
// database, serves once the StatefulSet's pod is ready, writes nothing the
// second time, repairs what was deleted or edited; Remove leaves nothing.
#include <gtest/gtest.h>

#include <openssl/pem.h>

#include <pqxx/pqxx>

#include "services/base/base64.h"
#include "services/base/openssl_ptr.h"
#include "services/hostcp/host_control_planes.h"
#include "services/http/tls.h"
#include "services/kubesim/kubesim.h"
#include "services/store/connection_url.h"
#include "services/store/pg_virtual_object_store.h"
#include "tenancy/host/names.h"
#include "tests/support/test_database.h"

namespace septa::hostcp {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
namespace host = tenancy::host;

constexpr const char* kInventory = R"(
nodes:
  - name: cpu-0
    cpu: "32"
    memory: 128Gi
)";

const kube::Resource kNamespaces{"", "v1", "namespaces", false};
const kube::Resource kSecrets{"", "v1", "secrets", true};
const kube::Resource kPods{"", "v1", "pods", true};
const kube::Resource kStatefulSets{"apps", "v1", "statefulsets", true};

// Every kind the control plane writes, to list what is left.
const std::vector<kube::Resource> kKinds = {{"", "v1", "serviceaccounts", true},
                                            kSecrets,
                                            {"", "v1", "configmaps", true},
                                            {"", "v1", "services", true},
                                            {"networking.k8s.io", "v1", "networkpolicies", true},
                                            kStatefulSets,
                                            {"apps", "v1", "deployments", true},
                                            {"apps", "v1", "replicasets", true},
                                            {"batch", "v1", "jobs", true},
                                            kPods};

class hostcpHostControlPlanes : public ::testing::Test {
 protected:
  void SetUp() override {
    auto database = test::TestDatabase::CreateMigrated();
    ASSERT_TRUE(database.ok()) << database.status().ToString();
    database_ = std::move(*database);
    store_ = std::make_unique<store::PgVirtualObjectStore>(
        store::PgVirtualObjectStoreOptions{.database_url = database_->url(), .pool_size = 2});

    kubesim::KubeSimOptions sim;
    sim.tick_interval = 0ms;  // the test ticks
    sim.inventory = *kubesim::ParseInventory(kInventory, "test");
    sim.nodes.pod_start_delay = 0ms;
    sim_ = std::make_unique<kubesim::KubeSim>(sim);
    ASSERT_TRUE(sim_->Start().ok());
    kube::ClientOptions client_options;
    client_options.max_retries = 0;
    host_ = std::move(*kube::Client::Create(*kube::ParseKubeconfig(*sim_->AdminKubeconfig()), client_options));

    // One server holds every test's roles: a prefix of this test's own.
    const std::string& name = database_->name();
    options_.config.database_prefix = "hcp_" + name.substr(name.size() - 8) + "_";
    options_.config.database_sslmode = "disable";
    options_.database_admin_url = database_->url();
    options_.database_address = "postgres.septa-system.svc:5432";
    options_.host_namespace_of = [](const core::VirtualClusterKey& key) { return Namespace(key.tenant, key.vcluster); };
    ASSERT_TRUE(ValidateHostControlPlanesOptions(options_).ok());
    planes_ = std::make_unique<HostControlPlanes>(*host_, *store_, options_);
  }

  void TearDown() override {
    // Roles are the server's, not the test database's: drop what a failed test left.
    for (const auto& [tenant, vcluster] : {std::pair{"ann", "train"}, std::pair{"bob", "infer"}}) {
      if (planes_) (void)planes_->Remove(tenant, vcluster);
    }
  }

  // The host namespaces as septad reads them from the store: ann/train's
  // was given by an earlier name function (everything must go where the
  // store says, never where HostNamespaceName would put it now).
  static std::string Namespace(const std::string& tenant, const std::string& vcluster) {
    if (tenant == "ann" && vcluster == "train") return "septa-ann-x-train-named-earlier";
    return host::HostNamespaceName(tenant, vcluster);
  }

  void CreateNamespace(const std::string& tenant, const std::string& vcluster) {
    json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", Namespace(tenant, vcluster)}}}};
    ASSERT_TRUE(host_->Create(kNamespaces, "", ns).ok());
  }

  // Ticks kubesim until `ok` holds; bounded.
  bool TickUntil(const std::function<bool()>& ok) {
    for (int i = 0; i < 200; ++i) {
      if (ok()) return true;
      sim_->Tick();
    }
    return ok();
  }

  // "Kind/name" -> resourceVersion of everything in the namespace.
  std::map<std::string, std::string> Objects(const std::string& ns) {
    std::map<std::string, std::string> out;
    for (const auto& kind : kKinds) {
      auto listed = host_->ListAll(kind, ns);
      EXPECT_TRUE(listed.ok()) << kind.resource;
      if (!listed.ok()) continue;
      for (const auto& item : listed->items) {
        const json o = item.ToJson();
        out[kind.resource + "/" + o["metadata"].value("name", "")] = o["metadata"].value("resourceVersion", "");
      }
    }
    return out;
  }

  std::string KineEndpoint(const std::string& ns) {
    auto secret = host_->Get(kSecrets, ns, std::string(host::kKineSecretName));
    if (!secret.ok()) return "";
    return base::Base64Decode((*secret)["data"].value("endpoint", "")).value_or("");
  }

  pqxx::result Query(const std::string& sql, const std::string& param) {
    pqxx::connection c(database_->url());
    pqxx::nontransaction tx(c);
    return tx.exec_params(sql, param);
  }
  bool DatabaseExists(const std::string& name) {
    return !Query("SELECT 1 FROM pg_database WHERE datname = $1", name).empty();
  }
  bool RoleExists(const std::string& name) { return !Query("SELECT 1 FROM pg_roles WHERE rolname = $1", name).empty(); }
  std::string PasswordOf(const std::string& role) {
    auto rows = Query("SELECT rolpassword FROM pg_authid WHERE rolname = $1", role);
    return rows.empty() ? "" : rows[0][0].c_str();
  }
  // Connects to `database` as `role` (the server's own authentication).
  Status ConnectAs(const std::string& role, const std::string& database) {
    try {
      auto url = store::WithDatabase(database_->url(), database);
      if (!url.ok()) return url.status();
      pqxx::connection c(*url + (url->find('?') == std::string::npos ? "?" : "&") + "user=" + role);
      return Status::Ok();
    } catch (const std::exception& e) {
      return Unavailable(e.what());
    }
  }

  std::unique_ptr<test::TestDatabase> database_;
  std::unique_ptr<store::PgVirtualObjectStore> store_;
  std::unique_ptr<kubesim::KubeSim> sim_;
  std::unique_ptr<kube::Client> host_;
  HostControlPlanesOptions options_;
  std::unique_ptr<HostControlPlanes> planes_;
};

TEST_F(hostcpHostControlPlanes, EnsureAppliesTheControlPlaneAndServesOnceItsPodIsReady) {
  ASSERT_NO_FATAL_FAILURE(CreateNamespace("ann", "train"));
  const std::string ns = Namespace("ann", "train");
  auto first = planes_->Ensure("ann", "train");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_FALSE(first->serving);
  EXPECT_TRUE(first->endpoint.empty());
  EXPECT_NE(first->message.find("septa-control-plane-0"), std::string::npos) << first->message;

  // Every object, labelled as the virtual cluster's, applied by Septa's field manager.
  auto objects = Objects(ns);
  for (const char* name :
       {"serviceaccounts/septa-control-plane", "secrets/septa-control-plane-certs", "secrets/septa-control-plane-kine",
        "secrets/septa-coredns-kubeconfig", "configmaps/septa-coredns", "services/septa-apiserver",
        "services/septa-coredns", "networkpolicies/septa-control-plane", "networkpolicies/septa-coredns",
        "statefulsets/septa-control-plane", "deployments/septa-coredns", "secrets/septa-control-plane-bootstrap",
        "jobs/septa-control-plane-bootstrap"}) {
    EXPECT_TRUE(objects.contains(name)) << name;
  }
  auto sts = host_->Get(kStatefulSets, ns, "septa-control-plane");
  ASSERT_TRUE(sts.ok());
  EXPECT_EQ((*sts)["metadata"]["labels"].value("septa.dev/tenant", ""), "ann");
  EXPECT_EQ((*sts)["metadata"]["managedFields"][0].value("manager", ""), "septa");

  // kine's database and role exist; the endpoint is only in the Secret.
  const std::string database = host::KineDatabaseName(options_.config, "ann", "train");
  EXPECT_TRUE(DatabaseExists(database));
  EXPECT_TRUE(RoleExists(database));
  const std::string endpoint = KineEndpoint(ns);
  EXPECT_EQ(endpoint.rfind("postgres://" + database + ":", 0), 0u) << endpoint;
  EXPECT_NE(endpoint.find("@postgres.septa-system.svc:5432/" + database + "?sslmode=disable"), std::string::npos);
  EXPECT_EQ(sts->dump().find(endpoint), std::string::npos);
  EXPECT_TRUE(ConnectAs(database, database).ok());

  // The certificates come from the CA stored for the virtual cluster.
  auto stored = store_->GetControlPlane({"ann", "train"});
  ASSERT_TRUE(stored.ok() && stored->has_value());
  auto certs = host_->Get(kSecrets, ns, std::string(host::kCertificatesSecretName));
  ASSERT_TRUE(certs.ok());
  EXPECT_EQ(base::Base64Decode((*certs)["data"].value("ca.crt", "")), (*stored)->ca_certificate);

  ASSERT_TRUE(TickUntil([&] {
    auto s = host_->Get(kStatefulSets, ns, "septa-control-plane");
    return s.ok() && s->contains("status") && (*s)["status"].value("readyReplicas", 0) == 1;
  })) << "kubesim schedules the pod and reports it ready";
  auto ready = planes_->Ensure("ann", "train");
  ASSERT_TRUE(ready.ok()) << ready.status().ToString();
  EXPECT_TRUE(ready->serving);
  EXPECT_EQ(ready->endpoint, "https://septa-apiserver." + ns + ".svc.cluster.local");
  auto listed = planes_->List();
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(*listed, (std::vector<std::pair<std::string, std::string>>{{"ann", "train"}}));
}

TEST_F(hostcpHostControlPlanes, ASecondEnsureWritesNothing) {
  ASSERT_NO_FATAL_FAILURE(CreateNamespace("ann", "train"));
  const std::string ns = Namespace("ann", "train");
  ASSERT_TRUE(planes_->Ensure("ann", "train").ok());
  ASSERT_TRUE(TickUntil([&] { return Objects(ns).contains("pods/septa-control-plane-0"); }));
  for (int i = 0; i < 5; ++i) sim_->Tick();  // let the controllers settle
  const auto before = Objects(ns);
  const std::string role = host::KineDatabaseName(options_.config, "ann", "train");
  const std::string password = PasswordOf(role);
  ASSERT_FALSE(password.empty());

  auto again = planes_->Ensure("ann", "train");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(Objects(ns), before) << "no object written again";
  EXPECT_EQ(PasswordOf(role), password) << "the role's password is left alone";
}

TEST_F(hostcpHostControlPlanes, EnsureRepairsDeletedAndEditedObjects) {
  ASSERT_NO_FATAL_FAILURE(CreateNamespace("ann", "train"));
  const std::string ns = Namespace("ann", "train");
  ASSERT_TRUE(planes_->Ensure("ann", "train").ok());
  const std::string role = host::KineDatabaseName(options_.config, "ann", "train");
  const std::string password = PasswordOf(role);
  const std::string endpoint = KineEndpoint(ns);
  const std::string certs = host_->Get(kSecrets, ns, "septa-control-plane-certs")->dump();

  // The kine Secret lost: a new password, set on the role, in a new Secret.
  ASSERT_TRUE(host_->Delete(kSecrets, ns, std::string(host::kKineSecretName)).ok());
  // The StatefulSet's image changed by someone else.
  ASSERT_TRUE(host_
                  ->Patch(kStatefulSets, ns, "septa-control-plane", kube::PatchType::kJson,
                          R"([{"op":"replace","path":"/spec/template/spec/containers/1/image","value":"evil:1"}])")
                  .ok());
  ASSERT_TRUE(planes_->Ensure("ann", "train").ok());
  const std::string repaired = KineEndpoint(ns);
  EXPECT_FALSE(repaired.empty());
  EXPECT_NE(repaired, endpoint);
  EXPECT_NE(PasswordOf(role), password);
  EXPECT_TRUE(DatabaseExists(role)) << "the database, and kine's data in it, stay";
  auto sts = host_->Get(kStatefulSets, ns, "septa-control-plane");
  ASSERT_TRUE(sts.ok());
  EXPECT_EQ((*sts)["spec"]["template"]["spec"]["containers"][1].value("image", ""),
            options_.config.kube_apiserver_image);
  auto kept = host_->Get(kSecrets, ns, "septa-control-plane-certs");
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->dump(), certs) << "certificates still on the host are kept";
}

// With issuer vault the API server also trusts the virtual cluster's Vault
// intermediate; the bundle follows what the callback says at each Ensure,
// and a callback that fails fails the Ensure (retried by the provisioner).
TEST_F(hostcpHostControlPlanes, TheExtraClientCaIsInTheApiServersBundle) {
  ASSERT_NO_FATAL_FAILURE(CreateNamespace("ann", "train"));
  const std::string ns = Namespace("ann", "train");
  const TimePoint now = std::chrono::system_clock::now();
  auto vault_ca = http::IssueCertificate({"vault intermediate", {}, {}, {}, now - 1h, now + 24h, true}, nullptr);
  ASSERT_TRUE(vault_ca.ok());
  std::string extra = vault_ca->certificate;
  Status answer = Status::Ok();
  options_.client_ca = [&](const core::VirtualClusterKey& key) -> Result<std::string> {
    EXPECT_EQ(key.tenant, "ann");
    EXPECT_EQ(key.vcluster, "train");
    if (!answer.ok()) return answer;
    return extra;
  };
  planes_ = std::make_unique<HostControlPlanes>(*host_, *store_, options_);
  auto bundle = [&] {
    auto certs = host_->Get(kSecrets, ns, std::string(host::kCertificatesSecretName));
    return certs.ok() ? base::Base64Decode((*certs)["data"].value(std::string(host::kClientCaKey), "")).value_or("")
                      : "";
  };
  ASSERT_TRUE(planes_->Ensure("ann", "train").ok());
  auto stored = store_->GetControlPlane({"ann", "train"});
  ASSERT_TRUE(stored.ok() && stored->has_value());
  EXPECT_EQ(bundle(), (*stored)->ca_certificate + extra);

  auto again = http::IssueCertificate({"vault intermediate 2", {}, {}, {}, now - 1h, now + 24h, true}, nullptr);
  ASSERT_TRUE(again.ok());
  extra = again->certificate;
  ASSERT_TRUE(planes_->Ensure("ann", "train").ok());
  EXPECT_EQ(bundle(), (*stored)->ca_certificate + extra) << "a new intermediate replaces the old one";

  answer = Unavailable("vault is sealed");
  auto failed = planes_->Ensure("ann", "train");
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().message(), "vault is sealed");
  EXPECT_EQ(bundle(), (*stored)->ca_certificate + extra) << "nothing applied without the bundle";
}

TEST_F(hostcpHostControlPlanes, AChangedBootstrapJobIsReplaced) {
  ASSERT_NO_FATAL_FAILURE(CreateNamespace("ann", "train"));
  const std::string ns = Namespace("ann", "train");
  ASSERT_TRUE(planes_->Ensure("ann", "train").ok());
  const kube::Resource jobs{"batch", "v1", "jobs", true};
  auto job = host_->Get(jobs, ns, std::string(host::kBootstrapName));
  ASSERT_TRUE(job.ok());
  const std::string uid = (*job)["metadata"].value("uid", "");

  // Another kubectl image configured: the template differs, and a Job's template is immutable.
  options_.config.kubectl_image = "mirror.example/kubectl:v1.35.0";
  planes_ = std::make_unique<HostControlPlanes>(*host_, *store_, options_);
  auto ensured = planes_->Ensure("ann", "train");
  ASSERT_TRUE(ensured.ok()) << ensured.status().ToString();
  job = host_->Get(jobs, ns, std::string(host::kBootstrapName));
  ASSERT_TRUE(job.ok());
  EXPECT_NE((*job)["metadata"].value("uid", ""), uid) << "a new Job";
  EXPECT_EQ((*job)["spec"]["template"]["spec"]["containers"][0].value("image", ""), "mirror.example/kubectl:v1.35.0");
}

TEST_F(hostcpHostControlPlanes, EachDatabaseOnlyItsOwnRoleMayUse) {
  ASSERT_NO_FATAL_FAILURE(CreateNamespace("ann", "train"));
  ASSERT_NO_FATAL_FAILURE(CreateNamespace("bob", "infer"));
  ASSERT_TRUE(planes_->Ensure("ann", "train").ok());
  ASSERT_TRUE(planes_->Ensure("bob", "infer").ok());
  const std::string ann = host::KineDatabaseName(options_.config, "ann", "train");
  const std::string bob = host::KineDatabaseName(options_.config, "bob", "infer");
  EXPECT_NE(ann, bob);
  EXPECT_TRUE(ConnectAs(bob, bob).ok());
  Status refused = ConnectAs(bob, ann);
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("permission denied"), std::string::npos) << refused.message();
}

TEST_F(hostcpHostControlPlanes, RemoveLeavesNothing) {
  ASSERT_NO_FATAL_FAILURE(CreateNamespace("ann", "train"));
  const std::string ns = Namespace("ann", "train");
  const auto baseline = Objects(ns);  // what the namespace holds of its own (the default service account)
  ASSERT_TRUE(planes_->Ensure("ann", "train").ok());
  ASSERT_TRUE(TickUntil([&] {
    auto o = Objects(ns);
    return o.contains("pods/septa-control-plane-0") &&
           std::ranges::any_of(o, [](const auto& e) { return e.first.rfind("pods/septa-coredns-", 0) == 0; });
  }));

  ASSERT_TRUE(planes_->Remove("ann", "train").ok());
  EXPECT_TRUE(TickUntil([&] { return Objects(ns) == baseline; })) << "the pods go with their owners; left: " << [&] {
    std::string left;
    for (const auto& [name, version] : Objects(ns)) left += name + " ";
    return left;
  }();
  const std::string database = host::KineDatabaseName(options_.config, "ann", "train");
  EXPECT_FALSE(DatabaseExists(database));
  EXPECT_FALSE(RoleExists(database));
  auto stored = store_->GetControlPlane({"ann", "train"});
  ASSERT_TRUE(stored.ok());
  EXPECT_FALSE(stored->has_value());
  auto listed = planes_->List();
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE(listed->empty());
  EXPECT_TRUE(planes_->Remove("ann", "train").ok()) << "removing what is gone is fine";
}

// The syncer's access: the API server's Service, trusting the CA it serves
// with, and a client certificate of that CA in system:masters, which the
// API server's --client-ca-file bundle accepts.
TEST_F(hostcpHostControlPlanes, TheSyncerReachesTheApiServerAtItsServiceWithACertificateOfItsCa) {
  ASSERT_NO_FATAL_FAILURE(CreateNamespace("ann", "train"));
  const std::string ns = Namespace("ann", "train");
  auto none = planes_->SyncerKubeconfig("ann", "train");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), Code::kFailedPrecondition) << none.status().ToString();
  ASSERT_TRUE(planes_->Ensure("ann", "train").ok());

  auto kubeconfig = planes_->SyncerKubeconfig("ann", "train");
  ASSERT_TRUE(kubeconfig.ok()) << kubeconfig.status().ToString();
  auto config = kube::ParseKubeconfig(*kubeconfig);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->server, "https://septa-apiserver." + ns + ".svc.cluster.local");
  auto stored = store_->GetControlPlane({"ann", "train"});
  ASSERT_TRUE(stored.ok() && stored->has_value());
  EXPECT_EQ(config->ca_pem, (*stored)->ca_certificate);
  auto certs = host_->Get(kSecrets, ns, std::string(host::kCertificatesSecretName));
  ASSERT_TRUE(certs.ok());
  auto bundle = base::Base64Decode((*certs)["data"].value(std::string(host::kClientCaKey), ""));
  ASSERT_TRUE(bundle.has_value());
  auto verifier = http::ClientCertificateVerifier::Create(*bundle);
  ASSERT_TRUE(verifier.ok()) << verifier.status().ToString();
  base::BioPtr bio = base::MemoryBio(config->client_certificate_pem);
  std::shared_ptr<x509_st> certificate(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr), X509_free);
  auto seen = verifier->Verify({certificate}, std::chrono::system_clock::now());
  ASSERT_TRUE(seen.ok()) << seen.status().ToString();
  EXPECT_EQ(seen->common_name, kSyncerUser);
  EXPECT_EQ(seen->organizations, std::vector<std::string>{"system:masters"});
  EXPECT_FALSE(config->client_key_pem.empty());
}

// The virtual cluster's pods on the host reach its API server and DNS at the
// cluster IPs of its Services, the API server's at 443.
TEST_F(hostcpHostControlPlanes, WorkloadsReachTheApiServerAndDnsAtTheirServicesClusterIps) {
  ASSERT_NO_FATAL_FAILURE(CreateNamespace("ann", "train"));
  const std::string ns = Namespace("ann", "train");
  auto before = planes_->WorkloadEndpointsOf("ann", "train");
  EXPECT_FALSE(before.ok()) << "no Services yet";
  ASSERT_TRUE(planes_->Ensure("ann", "train").ok());
  auto endpoints = planes_->WorkloadEndpointsOf("ann", "train");
  ASSERT_TRUE(endpoints.ok()) << endpoints.status().ToString();
  ASSERT_TRUE(endpoints->has_value());
  const kube::Resource services{"", "v1", "services", true};
  auto api = host_->Get(services, ns, std::string(host::kApiServerServiceName));
  auto dns = host_->Get(services, ns, std::string(host::kCoreDnsName));
  ASSERT_TRUE(api.ok() && dns.ok());
  EXPECT_EQ((*endpoints)->api_host, (*api)["spec"].value("clusterIP", "x"));
  EXPECT_EQ((*endpoints)->api_port, 443);
  EXPECT_EQ((*endpoints)->dns_nameserver, (*dns)["spec"].value("clusterIP", "x"));
  EXPECT_NE((*endpoints)->api_host, (*endpoints)->dns_nameserver);
  EXPECT_FALSE(planes_->WorkloadEndpointsOf("Ann", "train").ok());
}

TEST_F(hostcpHostControlPlanes, BadNamesAndOptionsNameTheField) {
  auto bad = planes_->Ensure("Ann", "train");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Code::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("tenant"), std::string::npos);
  HostControlPlanesOptions options = options_;
  options.database_address = "postgres://x";
  Status invalid = ValidateHostControlPlanesOptions(options);
  EXPECT_NE(invalid.message().find("control_plane_database_address"), std::string::npos) << invalid.message();
  options = options_;
  options.config.database_prefix = "";
  EXPECT_NE(ValidateHostControlPlanesOptions(options).message().find("control_plane.database_prefix"),
            std::string::npos);
  options = options_;
  options.host_namespace_of = nullptr;
  EXPECT_NE(ValidateHostControlPlanesOptions(options).message().find("host_namespace_of"), std::string::npos);
}

}  // namespace
}  // namespace septa::hostcp
