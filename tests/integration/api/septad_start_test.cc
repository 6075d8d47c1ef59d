// What septad's start does with its configuration: the simulated host
// cluster it runs when no kubeconfig is configured, a configured cluster,
// TLS files, and the errors that name the configuration key at fault.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <pqxx/pqxx>

#include "services/app/septad_app.h"
#include "services/http/tls.h"
#include "services/kube/client.h"
#include "services/kube/resources.h"
#include "services/kubesim/kubesim.h"
#include "services/store/pg_virtual_object_store.h"
#include "services/vcp/simulated_control_planes.h"
#include "tests/support/test_database.h"

namespace septa::test {
namespace {

namespace fs = std::filesystem;

// A TCP socket bound to 127.0.0.1:`port` (0: any free port), listening when
// asked; -1 when the address is taken. SO_REUSEADDR: a port whose closed
// connections linger in TIME_WAIT counts as free, one with a listener not.
int BindLoopback(std::uint16_t port, bool listen) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  const int on = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
      (listen && ::listen(fd, 1) != 0)) {
    ::close(fd);
    return -1;
  }
  return fd;
}

std::uint16_t PortOf(int fd) {
  sockaddr_in address{};
  socklen_t size = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size);
  return ntohs(address.sin_port);
}

bool PortIsFree(std::uint16_t port) {
  const int fd = BindLoopback(port, true);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

class SeptadStartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = TestDatabase::Create();
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = *std::move(db);
    std::string dir = (fs::temp_directory_path() / "septa-host-XXXXXX").string();
    ASSERT_NE(::mkdtemp(dir.data()), nullptr);
    data_dir_ = dir;
    config_.data_dir = data_dir_;
    config_.database_url = db_->url();
    config_.http_addr = "127.0.0.1:0";
    config_.grpc_addr = "127.0.0.1:0";
    config_.shutdown_grace = std::chrono::milliseconds(500);
  }
  void TearDown() override {
    db_.reset();
    fs::remove_all(data_dir_);
  }

  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (fs::path(data_dir_) / name).string();
    std::ofstream(path) << text;
    return path;
  }

  static std::vector<std::string> NodeNames(const std::string& kubeconfig) {
    auto config = kube::LoadKubeconfig(kubeconfig);
    EXPECT_TRUE(config.ok()) << config.status().ToString();
    auto client = kube::Client::Create(*config);
    EXPECT_TRUE(client.ok());
    auto nodes = (*client)->ListAll(kube::kNodes, "");
    EXPECT_TRUE(nodes.ok()) << nodes.status().ToString();
    std::vector<std::string> names;
    if (nodes.ok())
      for (const auto& n : nodes->items) names.emplace_back(n.Name());
    return names;
  }

  std::unique_ptr<TestDatabase> db_;
  std::string data_dir_;
  config::Config config_;
};

TEST_F(SeptadStartTest, WithoutAKubeconfigSeptadRunsTheSampleClusterAndWritesItsKubeconfig) {
  auto app = app::SeptadApp::Start(config_);
  ASSERT_TRUE(app.ok()) << app.status().ToString();
  const std::string path = (*app)->kubeconfig_path();
  EXPECT_EQ(path, (fs::path(data_dir_) / "kubeconfig").string());
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u) << "it holds an admin client key";
  auto names = NodeNames(path);
  EXPECT_EQ(names.size(), 9u);  // deploy/dev/inventory.yaml: 4 H100, 2 A100, 2 T4, 1 CPU node
  EXPECT_NE(std::find(names.begin(), names.end(), "h100-0"), names.end());
}

TEST_F(SeptadStartTest, SeptadServesVirtualControlPlanesFromItsDatabase) {
  // acme/dev is a row only, never provisioned: the control plane is what is tested.
  config_.provisioner = false;
  auto app = app::SeptadApp::Start(config_);
  ASSERT_TRUE(app.ok()) << app.status().ToString();
  {
    // The listener serves only a virtual cluster that exists (its API limits are read from its row).
    pqxx::connection c(db_->url());
    pqxx::work tx(c);
    tx.exec(
        "INSERT INTO tenants (name, trust_tier, state, create_time, update_time, version)"
        " VALUES ('acme', 'shared', 'active', now(), now(), 1);"
        "INSERT INTO virtual_clusters (tenant, name, capacity_tier, capacity, queue_priority, queue_over_quota_weight,"
        " state, generation, version, create_time, update_time)"
        " VALUES ('acme', 'dev', 'shared', '{}', 100, 1, 'PROVISIONING', 1, 1, now(), now())");
    tx.commit();
  }
  vcp::SimulatedControlPlanes& planes = (*app)->control_planes();
  auto state = planes.Ensure("acme", "dev");
  ASSERT_TRUE(state.ok()) << state.status().ToString();
  EXPECT_TRUE(state->serving);
  auto kubeconfig = planes.AdminKubeconfig("acme", "dev");
  ASSERT_TRUE(kubeconfig.ok()) << kubeconfig.status().ToString();
  auto config = kube::ParseKubeconfig(*kubeconfig);
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->server, state->endpoint);
  auto client = kube::Client::Create(*config);
  ASSERT_TRUE(client.ok());
  auto created = (*client)->Create(kube::kConfigMaps, "default",
                                   {{"apiVersion", "v1"},
                                    {"kind", "ConfigMap"},
                                    {"metadata", {{"name", "kept"}, {"namespace", "default"}}},
                                    {"data", {{"a", "b"}}}});
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  // Written through to septad's database.
  store::PgVirtualObjectStore rows({.database_url = db_->url()});
  auto stored = rows.LoadObjects({"acme", "dev"});
  ASSERT_TRUE(stored.ok());
  EXPECT_TRUE(std::any_of(stored->begin(), stored->end(), [](const auto& o) { return o.name == "kept"; }));
}

// The CA keys are stored wrapped under data_dir/kek (made 0600 on first
// start); a start with a new kek_file and the old one as kek_previous_file
// re-wraps them, and a start with neither key that wrapped them fails.
TEST_F(SeptadStartTest, CaKeysAreStoredWrappedAndAStartRotatesTheirKek) {
  config_.provisioner = false;
  const std::string old_kek = (fs::path(data_dir_) / "kek").string();
  std::string wrapped;
  store::PgVirtualObjectStore rows({.database_url = db_->url()});
  {
    auto app = app::SeptadApp::Start(config_);
    ASSERT_TRUE(app.ok()) << app.status().ToString();
    ASSERT_TRUE((*app)->control_planes().Ensure("acme", "dev").ok());
    struct stat st {};
    ASSERT_EQ(::stat(old_kek.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    wrapped = (*rows.GetControlPlane({"acme", "dev"}))->ca_private_key;
    EXPECT_EQ(wrapped.rfind("kek1:", 0), 0u) << wrapped.substr(0, 20);
    EXPECT_EQ((*rows.StoredListenerCa())->ca_private_key.rfind("kek1:", 0), 0u);
  }
  const std::string new_kek = Write("kek.new", "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=\n");  // 32 bytes
  fs::permissions(new_kek, fs::perms::owner_read | fs::perms::owner_write, fs::perm_options::replace);
  config::Config rotated = config_;
  rotated.kek_file = new_kek;
  {
    auto refused = app::SeptadApp::Start(rotated);  // the old KEK is missing
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.status().message().find("kek_previous_file"), std::string::npos) << refused.status().ToString();
  }
  rotated.kek_previous_file = old_kek;
  {
    auto app = app::SeptadApp::Start(rotated);
    ASSERT_TRUE(app.ok()) << app.status().ToString();
  }
  const std::string rewrapped = (*rows.GetControlPlane({"acme", "dev"}))->ca_private_key;
  EXPECT_EQ(rewrapped.rfind("kek1:", 0), 0u);
  EXPECT_NE(rewrapped.substr(0, 22), wrapped.substr(0, 22)) << "now under another KEK id";
  rotated.kek_previous_file.clear();
  auto app = app::SeptadApp::Start(rotated);  // the old key is no longer needed
  ASSERT_TRUE(app.ok()) << app.status().ToString();
  EXPECT_TRUE((*app)->control_planes().AdminKubeconfig("acme", "dev").ok());
}

TEST_F(SeptadStartTest, AnInventoryFileReplacesTheSample) {
  config_.kubesim_inventory = Write("nodes.yaml",
                                    "nodes:\n  - name: l4-{0..2}\n    cpu: \"16\"\n    memory: 64Gi\n"
                                    "    gpus: {model: T4, count: 2}\n");
  auto app = app::SeptadApp::Start(config_);
  ASSERT_TRUE(app.ok()) << app.status().ToString();
  EXPECT_EQ(NodeNames((*app)->kubeconfig_path()), (std::vector<std::string>{"l4-0", "l4-1", "l4-2"}));
}

TEST_F(SeptadStartTest, AConfiguredKubeconfigIsUsedAndNoClusterIsStarted) {
  kubesim::KubeSimOptions options;
  options.inventory = kubesim::Inventory{};
  kubesim::NodeSpec node;
  node.name = "external-0";
  options.inventory->nodes.push_back(node);
  kubesim::KubeSim external(options);
  ASSERT_TRUE(external.Start().ok());
  auto admin = external.AdminKubeconfig();
  ASSERT_TRUE(admin.ok());
  config_.kubeconfig = Write("external.kubeconfig", *admin);
  auto app = app::SeptadApp::Start(config_);
  ASSERT_TRUE(app.ok()) << app.status().ToString();
  EXPECT_EQ((*app)->kubeconfig_path(), config_.kubeconfig);
  EXPECT_FALSE(fs::exists(fs::path(data_dir_) / "kubeconfig"));
  EXPECT_EQ(NodeNames((*app)->kubeconfig_path()), (std::vector<std::string>{"external-0"}));
}

TEST_F(SeptadStartTest, ConfigurationErrorsNameTheKey) {
  struct Case {
    std::string kubeconfig, inventory, key, part;
  };
  const std::string bad_inventory = Write("bad.yaml", "nodes:\n  - name: x\n    gpus: {model: NoSuchGPU, count: 1}\n");
  const std::string not_yaml = Write("broken.kubeconfig", "clusters: [\n");
  for (const Case& c :
       std::vector<Case>{{(fs::path(data_dir_) / "missing").string(), "", "kubeconfig", "missing"},
                         {not_yaml, "", "kubeconfig", "broken.kubeconfig"},
                         // Outside a pod (the test unsets KUBERNETES_SERVICE_HOST): said so.
                         {"in-cluster", "", "kubeconfig", "KUBERNETES_SERVICE_HOST"},
                         {"", (fs::path(data_dir_) / "absent.yaml").string(), "kubesim_inventory", "cannot read"},
                         {"", bad_inventory, "kubesim_inventory", "NoSuchGPU"}}) {
    config::Config config = config_;
    config.kubeconfig = c.kubeconfig;
    config.kubesim_inventory = c.inventory;
    ::unsetenv("KUBERNETES_SERVICE_HOST");
    auto app = app::SeptadApp::Start(config);
    ASSERT_FALSE(app.ok()) << c.key;
    EXPECT_EQ(app.status().code(), Code::kInvalidArgument) << app.status().ToString();
    EXPECT_NE(app.status().ToString().find(c.key), std::string::npos) << app.status().ToString();
    EXPECT_NE(app.status().ToString().find(c.part), std::string::npos) << app.status().ToString();
  }
}

TEST_F(SeptadStartTest, AnUnreachableClusterFailsTheStartAndSaysWhere) {
  std::string kubeconfig;
  {
    kubesim::KubeSim gone({});
    ASSERT_TRUE(gone.Start().ok());
    kubeconfig = *gone.AdminKubeconfig();
  }  // stopped: nothing listens on its port any more
  config_.kubeconfig = Write("gone.kubeconfig", kubeconfig);
  auto app = app::SeptadApp::Start(config_);
  ASSERT_FALSE(app.ok());
  EXPECT_NE(app.status().message().find("cannot reach the host cluster at https://127.0.0.1:"), std::string::npos)
      << app.status().ToString();
}

TEST_F(SeptadStartTest, TlsFilesAreCheckedAndNamed) {
  const auto now = std::chrono::system_clock::now();
  http::CertificateRequest request;
  request.common_name = "septad";
  request.ip_addresses = {"127.0.0.1"};
  request.not_before = now - std::chrono::hours(1);
  request.not_after = now + std::chrono::hours(1);
  auto pair = http::IssueCertificate(request, nullptr);
  ASSERT_TRUE(pair.ok()) << pair.status().ToString();
  auto other = http::IssueCertificate(request, nullptr);
  ASSERT_TRUE(other.ok());
  const std::string cert = Write("tls.crt", pair->certificate), key = Write("tls.key", pair->private_key);

  config::Config good = config_;
  good.tls_cert_file = cert;
  good.tls_key_file = key;
  {
    auto app = app::SeptadApp::Start(good);
    ASSERT_TRUE(app.ok()) << app.status().ToString();
    EXPECT_TRUE((*app)->tls());
  }
  struct Case {
    std::string cert, key, field, part;
  };
  for (const Case& c :
       std::vector<Case>{{(fs::path(data_dir_) / "absent.crt").string(), key, "tls_cert_file", "cannot read"},
                         {cert, (fs::path(data_dir_) / "absent.key").string(), "tls_key_file", "cannot read"},
                         {Write("garbage.crt", "not a certificate"), key, "tls_cert_file", ""},
                         {cert, Write("other.key", other->private_key), "tls_cert_file", ""}}) {
    config::Config config = config_;
    config.tls_cert_file = c.cert;
    config.tls_key_file = c.key;
    auto app = app::SeptadApp::Start(config);
    ASSERT_FALSE(app.ok()) << c.cert << " " << c.key;
    EXPECT_EQ(app.status().code(), Code::kInvalidArgument) << app.status().ToString();
    ASSERT_EQ(app.status().violations().size(), 1u) << app.status().ToString();
    EXPECT_EQ(app.status().violations()[0].field, c.field) << app.status().ToString();
    EXPECT_NE(app.status().ToString().find(c.part), std::string::npos) << app.status().ToString();
  }
}

// A stage that fails midway fails the start with the stage named, and the
// stages started before it are stopped, last first: with the embedded
// PostgreSQL and the simulated host cluster started, the virtual control
// planes' port is taken. Then kubesim's port is free again, PostgreSQL is
// down, and a start on the same data dir succeeds (the replica lock and the
// server's directory were released).
TEST_F(SeptadStartTest, AStageThatFailsMidwayStopsTheStagesStartedBeforeIt) {
  config::Config config = config_;
  config.database_url.clear();  // the embedded PostgreSQL under data_dir
  const int probe = BindLoopback(0, false);
  ASSERT_GE(probe, 0);
  const std::uint16_t kubesim_port = PortOf(probe);
  ::close(probe);
  config.kubesim_addr = "127.0.0.1:" + std::to_string(kubesim_port);
  const int taken = BindLoopback(0, true);
  ASSERT_GE(taken, 0);
  config.vcluster_addr = "127.0.0.1:" + std::to_string(PortOf(taken));

  auto refused = app::SeptadApp::Start(config);
  ::close(taken);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message().rfind("stage control-planes: vcluster_addr " + config.vcluster_addr + ": ", 0),
            0u)
      << refused.status().ToString();
  EXPECT_TRUE(PortIsFree(kubesim_port)) << "the simulated host cluster still listens";
  EXPECT_FALSE(fs::exists(fs::path(data_dir_) / "postgres" / "data" / "postmaster.pid"))
      << "the embedded PostgreSQL still runs";

  config.vcluster_addr = "127.0.0.1:0";
  auto started = app::SeptadApp::Start(config);
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  EXPECT_FALSE(PortIsFree(kubesim_port));
  (*started)->Shutdown(std::chrono::milliseconds(500));
  EXPECT_TRUE(PortIsFree(kubesim_port)) << "stopped at shutdown as after the failed start";
  EXPECT_FALSE(fs::exists(fs::path(data_dir_) / "postgres" / "data" / "postmaster.pid"));
}

}  // namespace
}  // namespace septa::test
