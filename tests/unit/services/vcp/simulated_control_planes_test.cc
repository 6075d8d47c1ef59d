// The simulated virtual control planes through their real interface: HTTPS
// on port 0, the Kubernetes client with a kubeconfig the planes wrote, the
// in-memory VirtualObjectStore (the PostgreSQL one passes the same contract
// and is exercised end to end by tests/e2e/septad/vcluster_test.sh). No
// ticker thread: each test advances the fake clock and calls Tick().
#include "services/vcp/simulated_control_planes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <future>
#include <thread>

#include "services/kube/client.h"
#include "services/kube/resources.h"
#include "services/kube/watch.h"
#include "services/kubesim/objects.h"
#include "tests/support/fake_clock.h"
#include "tests/support/fake_virtual_object_store.h"
#include "tests/support/seeded_random.h"
#include "tests/unit/services/vcp/vcp_test_objects.h"

namespace septa::vcp {
namespace {

using nlohmann::json;
using ::testing::UnorderedElementsAre;
using namespace std::chrono_literals;

using kube::kConfigMaps;
using kube::kDeployments;
using kube::kNamespaces;
using kube::kPods;
using kube::kServiceAccounts;

using test::ConfigMap;

std::vector<std::string> Names(const kube::ListPage& page) {
  std::vector<std::string> names;
  for (const auto& item : page.items) names.emplace_back(item.Name());
  return names;
}

class SimulatedControlPlanesTest : public ::testing::Test {
 protected:
  void SetUp() override { Restart(); }

  // A new SimulatedControlPlanes on the same store: a septad restart.
  void Restart() {
    planes_.reset();
    planes_ = std::make_unique<SimulatedControlPlanes>(
        store_,
        SimulatedControlPlanesOptions{.tick_interval = 0ms, .idle_after = 10min, .clock = &clock_, .random = &random_});
    ASSERT_TRUE(planes_->Start().ok());
  }

  kube::ClientConfig Config(const std::string& tenant, const std::string& vcluster) {
    auto kubeconfig = planes_->AdminKubeconfig(tenant, vcluster);
    EXPECT_TRUE(kubeconfig.ok()) << kubeconfig.status().message();
    auto config = kube::ParseKubeconfig(*kubeconfig);
    EXPECT_TRUE(config.ok()) << config.status().message();
    return *config;
  }

  std::unique_ptr<kube::Client> Client(kube::ClientConfig config) {
    kube::ClientOptions options;
    options.max_retries = 0;  // a refused write shows as it is
    auto client = kube::Client::Create(std::move(config), options);
    EXPECT_TRUE(client.ok());
    return std::move(*client);
  }

  std::unique_ptr<kube::Client> Client(const std::string& tenant, const std::string& vcluster) {
    return Client(Config(tenant, vcluster));
  }

  FakeClock clock_;
  SeededRandom random_{7};
  test::FakeVirtualObjectStore store_;
  std::unique_ptr<SimulatedControlPlanes> planes_;
};

TEST_F(SimulatedControlPlanesTest, EnsureServesASeededClusterAndIsIdempotent) {
  auto first = planes_->Ensure("acme", "dev");
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_TRUE(first->serving);
  EXPECT_EQ(first->endpoint, "https://127.0.0.1:" + std::to_string(planes_->port()) + "/vc/acme/dev");
  auto again = planes_->Ensure("acme", "dev");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->endpoint, first->endpoint);
  auto listed = planes_->List();
  ASSERT_TRUE(listed.ok());
  EXPECT_THAT(*listed, UnorderedElementsAre(std::pair<std::string, std::string>{"acme", "dev"}));

  auto client = Client("acme", "dev");
  EXPECT_EQ(client->config().server, first->endpoint);
  auto namespaces = client->List(kNamespaces, "");
  ASSERT_TRUE(namespaces.ok()) << namespaces.status().message();
  EXPECT_THAT(Names(*namespaces), UnorderedElementsAre("default", "kube-system", "kube-public", "kube-node-lease"));
  auto account = client->Get(kServiceAccounts, "default", "default");
  EXPECT_TRUE(account.ok()) << account.status().message();
}

TEST_F(SimulatedControlPlanesTest, OnEveryAddressTheEndpointsNameTheAdvertisedOneWhichTheCertificateCovers) {
  planes_.reset();
  planes_ =
      std::make_unique<SimulatedControlPlanes>(store_, SimulatedControlPlanesOptions{.host = "0.0.0.0",
                                                                                     .advertise_host = "127.0.0.2",
                                                                                     .tick_interval = 0ms,
                                                                                     .clock = &clock_,
                                                                                     .random = &random_});
  ASSERT_TRUE(planes_->Start().ok());
  auto state = planes_->Ensure("acme", "dev");
  ASSERT_TRUE(state.ok()) << state.status().message();
  EXPECT_EQ(state->endpoint, "https://127.0.0.2:" + std::to_string(planes_->port()) + "/vc/acme/dev");
  EXPECT_EQ(planes_->endpoint_host(), "127.0.0.2");
  // The client verifies the serving certificate for 127.0.0.2.
  auto namespaces = Client("acme", "dev")->List(kNamespaces, "");
  ASSERT_TRUE(namespaces.ok()) << namespaces.status().message();
  EXPECT_FALSE(namespaces->items.empty());
}

// Tenant credentials carry the groups of tenancy::kVclusterRoles; every virtual
// cluster binds them to cluster-admin, edit and view, and a load restores a
// binding deleted inside it.
TEST_F(SimulatedControlPlanesTest, TheCredentialGroupsAreBoundToTheBuiltInClusterRoles) {
  ASSERT_TRUE(planes_->Ensure("acme", "dev").ok());
  const kube::Resource bindings{"rbac.authorization.k8s.io", "v1", "clusterrolebindings", false};
  auto client = Client("acme", "dev");
  for (const auto& [name, role] :
       {std::pair{"admin", "cluster-admin"}, std::pair{"edit", "edit"}, std::pair{"view", "view"}}) {
    auto binding = client->Get(bindings, "", "septa-" + std::string(name));
    ASSERT_TRUE(binding.ok()) << name << ": " << binding.status().message();
    EXPECT_EQ((*binding)["roleRef"]["name"], role);
    const json subject = {
        {"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "Group"}, {"name", "septa:" + std::string(name)}};
    EXPECT_EQ((*binding)["subjects"], json::array({subject}));
  }
  ASSERT_TRUE(client->Delete(bindings, "", "septa-view").ok());
  Restart();
  EXPECT_TRUE(Client("acme", "dev")->Get(bindings, "", "septa-view").ok());
}

// Every service account may ask for a TokenReview, so a workload's own
// token can have itself checked (Vault's Kubernetes auth without a reviewer
// token, vault::VaultWorkloadAccess).
TEST_F(SimulatedControlPlanesTest, AServiceAccountsOwnTokenReviewsItself) {
  ASSERT_TRUE(planes_->Ensure("acme", "dev").ok());
  auto admin = Client("acme", "dev");
  auto requested = admin->CreateSubresource(
      kServiceAccounts, "default", "default", "token",
      {{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "TokenRequest"}, {"spec", json::object()}});
  ASSERT_TRUE(requested.ok()) << requested.status().message();
  const std::string token = (*requested)["status"].value("token", "");
  kube::ClientConfig config = Config("acme", "dev");
  config.token = token;
  config.client_certificate_pem.clear();
  config.client_key_pem.clear();
  auto review = Client(config)->Create(
      kube::kTokenReviews, "",
      {{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "TokenReview"}, {"spec", {{"token", token}}}});
  ASSERT_TRUE(review.ok()) << review.status().message();
  EXPECT_TRUE((*review)["status"].value("authenticated", false)) << review->dump();
  EXPECT_EQ((*review)["status"]["user"].value("username", ""), "system:serviceaccount:default:default");
}

TEST_F(SimulatedControlPlanesTest, BadNamesAreRefusedNamingTheField) {
  auto bad_tenant = planes_->Ensure("Acme_Corp", "dev");
  EXPECT_EQ(bad_tenant.status().code(), Code::kInvalidArgument);
  EXPECT_THAT(bad_tenant.status().message(), ::testing::StartsWith("tenant:"));
  auto bad_vcluster = planes_->Ensure("acme", "");
  EXPECT_EQ(bad_vcluster.status().code(), Code::kInvalidArgument);
  EXPECT_THAT(bad_vcluster.status().message(), ::testing::StartsWith("vcluster:"));
  EXPECT_EQ(planes_->Remove("acme", "a/b").code(), Code::kInvalidArgument);
  auto listed = planes_->List();
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE(listed->empty());
}

TEST_F(SimulatedControlPlanesTest, ObjectsAndTokensSurviveARestartAndVersionsKeepIncreasing) {
  ASSERT_TRUE(planes_->Ensure("acme", "dev").ok());
  kube::ClientConfig config = Config("acme", "dev");
  auto created = Client(config)->Create(kConfigMaps, "default", ConfigMap("settings", "one"));
  ASSERT_TRUE(created.ok()) << created.status().message();
  std::uint64_t before = std::stoull((*created)["metadata"]["resourceVersion"].get<std::string>());
  ASSERT_TRUE(Client(config)->Delete(kConfigMaps, "default", "settings").ok());
  auto kept = Client(config)->Create(kConfigMaps, "default", ConfigMap("kept", "two"));
  ASSERT_TRUE(kept.ok());

  Restart();
  config.server = planes_->endpoint("acme", "dev");  // a new port; same CA and token
  auto client = Client(config);
  auto got = client->Get(kConfigMaps, "default", "kept");
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ((*got)["data"]["value"], "two");
  EXPECT_EQ(client->Get(kConfigMaps, "default", "settings").status().code(), Code::kNotFound);
  auto after = client->Create(kConfigMaps, "default", ConfigMap("after", "three"));
  ASSERT_TRUE(after.ok());
  // Past the delete too, which left no row behind.
  EXPECT_GT(std::stoull((*after)["metadata"]["resourceVersion"].get<std::string>()), before + 2);
}

TEST_F(SimulatedControlPlanesTest, CustomResourcesAreServedAgainAfterARestart) {
  ASSERT_TRUE(planes_->Ensure("acme", "dev").ok());
  kube::ClientConfig config = Config("acme", "dev");
  json crd = {{"apiVersion", "apiextensions.k8s.io/v1"},
              {"kind", "CustomResourceDefinition"},
              {"metadata", {{"name", "widgets.example.com"}}},
              {"spec",
               {{"group", "example.com"},
                {"scope", "Namespaced"},
                {"names", {{"plural", "widgets"}, {"singular", "widget"}, {"kind", "Widget"}}},
                {"versions", json::array({{{"name", "v1"}, {"served", true}, {"storage", true}}})}}}};
  const kube::Resource crds{"apiextensions.k8s.io", "v1", "customresourcedefinitions", false};
  const kube::Resource widgets{"example.com", "v1", "widgets", true};
  ASSERT_TRUE(Client(config)->Create(crds, "", crd).ok());
  json widget = {{"apiVersion", "example.com/v1"},
                 {"kind", "Widget"},
                 {"metadata", {{"name", "w1"}, {"namespace", "default"}}},
                 {"spec", {{"size", 3}}}};
  ASSERT_TRUE(Client(config)->Create(widgets, "default", widget).ok());

  Restart();
  config.server = planes_->endpoint("acme", "dev");
  auto got = Client(config)->Get(widgets, "default", "w1");
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ((*got)["spec"]["size"], 3);
}

TEST_F(SimulatedControlPlanesTest, VirtualClustersAreIsolated) {
  ASSERT_TRUE(planes_->Ensure("acme", "dev").ok());
  ASSERT_TRUE(planes_->Ensure("acme", "prod").ok());
  ASSERT_TRUE(planes_->Ensure("globex", "dev").ok());
  kube::ClientConfig dev = Config("acme", "dev");
  ASSERT_TRUE(Client(dev)->Create(kConfigMaps, "default", ConfigMap("same", "dev")).ok());
  ASSERT_TRUE(Client("acme", "prod")->Create(kConfigMaps, "default", ConfigMap("same", "prod")).ok());
  auto in_dev = Client(dev)->Get(kConfigMaps, "default", "same");
  ASSERT_TRUE(in_dev.ok());
  EXPECT_EQ((*in_dev)["data"]["value"], "dev");
  EXPECT_EQ(Client("globex", "dev")->Get(kConfigMaps, "default", "same").status().code(), Code::kNotFound);

  // acme/dev's token, sent to acme/prod and to another tenant's "dev": 401.
  for (const auto& [tenant, vcluster] : {std::pair{"acme", "prod"}, std::pair{"globex", "dev"}}) {
    kube::ClientConfig stolen = dev;
    stolen.server = planes_->endpoint(tenant, vcluster);
    auto refused = Client(stolen)->Get(kConfigMaps, "default", "same");
    EXPECT_EQ(refused.status().code(), Code::kUnauthenticated) << tenant << "/" << vcluster;
  }
  kube::ClientConfig nobody = dev;
  nobody.token = "not-a-token";
  EXPECT_EQ(Client(nobody)->List(kNamespaces, "").status().code(), Code::kUnauthenticated);
}

// The syncer's kubeconfig: derived, not stored, so the same after a restart;
// accepted by its own virtual cluster only, with every right there.
TEST_F(SimulatedControlPlanesTest, TheSyncerKubeconfigIsStableAndAcceptedByItsVirtualClusterOnly) {
  ASSERT_TRUE(planes_->Ensure("acme", "dev").ok());
  ASSERT_TRUE(planes_->Ensure("acme", "prod").ok());
  auto kubeconfig = planes_->SyncerKubeconfig("acme", "dev");
  ASSERT_TRUE(kubeconfig.ok()) << kubeconfig.status().message();
  auto config = kube::ParseKubeconfig(*kubeconfig);
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_TRUE(Client(*config)->Create(kConfigMaps, "default", ConfigMap("synced", "x")).ok());
  EXPECT_TRUE(Client(*config)->List(kNamespaces, "").ok());

  kube::ClientConfig stolen = *config;
  stolen.server = planes_->endpoint("acme", "prod");
  EXPECT_EQ(Client(stolen)->List(kNamespaces, "").status().code(), Code::kUnauthenticated);
  auto prod = planes_->SyncerKubeconfig("acme", "prod");
  ASSERT_TRUE(prod.ok());
  EXPECT_NE(*prod, *kubeconfig);

  Restart();  // on another port (port 0), from the same stored listener CA
  auto again = planes_->SyncerKubeconfig("acme", "dev");
  ASSERT_TRUE(again.ok());
  auto again_config = kube::ParseKubeconfig(*again);
  ASSERT_TRUE(again_config.ok());
  EXPECT_EQ(again_config->token, config->token) << "derived from the stored listener CA: the same after a restart";
  EXPECT_TRUE(Client(*again_config)->Get(kConfigMaps, "default", "synced").ok());
  EXPECT_EQ(planes_->SyncerKubeconfig("acme", "../x").status().code(), Code::kInvalidArgument);
}

TEST_F(SimulatedControlPlanesTest, RemoveDeletesEveryStoredObjectAndIsIdempotent) {
  ASSERT_TRUE(planes_->Ensure("acme", "dev").ok());
  ASSERT_TRUE(planes_->Ensure("acme", "prod").ok());
  kube::ClientConfig config = Config("acme", "dev");
  ASSERT_TRUE(Client(config)->Create(kConfigMaps, "default", ConfigMap("settings", "one")).ok());
  ASSERT_TRUE(planes_->Remove("acme", "dev").ok());
  ASSERT_TRUE(planes_->Remove("acme", "dev").ok());
  auto rows = store_.LoadObjects({"acme", "dev"});
  ASSERT_TRUE(rows.ok());
  EXPECT_TRUE(rows->empty());
  auto listed = planes_->List();
  ASSERT_TRUE(listed.ok());
  EXPECT_THAT(*listed, UnorderedElementsAre(std::pair<std::string, std::string>{"acme", "prod"}));
  // As for any virtual cluster that does not exist (nobody can authenticate to it).
  EXPECT_EQ(Client(config)->List(kNamespaces, "").status().code(), Code::kUnauthenticated);
  auto prod = store_.LoadObjects({"acme", "prod"});
  ASSERT_TRUE(prod.ok());
  EXPECT_FALSE(prod->empty());
}

TEST_F(SimulatedControlPlanesTest, AWriteTheStoreRefusesIsNotAcknowledged) {
  ASSERT_TRUE(planes_->Ensure("acme", "dev").ok());
  auto client = Client("acme", "dev");
  store_.fail_writes = true;
  auto refused = client->Create(kConfigMaps, "default", ConfigMap("settings", "one"));
  EXPECT_EQ(refused.status().code(), Code::kUnavailable) << refused.status().message();
  store_.fail_writes = false;
  EXPECT_EQ(client->Get(kConfigMaps, "default", "settings").status().code(), Code::kNotFound);
  EXPECT_TRUE(client->Create(kConfigMaps, "default", ConfigMap("settings", "one")).ok());
}

TEST_F(SimulatedControlPlanesTest, EnsureFailsWhileSeedingCannotBeStoredAndRepairsOnRetry) {
  store_.fail_writes = true;
  auto refused = planes_->Ensure("acme", "dev");
  EXPECT_EQ(refused.status().code(), Code::kUnavailable) << refused.status().message();
  EXPECT_EQ(planes_->loaded_count(), 0u);
  store_.fail_writes = false;
  auto ensured = planes_->Ensure("acme", "dev");
  ASSERT_TRUE(ensured.ok()) << ensured.status().message();
  auto namespaces = Client("acme", "dev")->List(kNamespaces, "");
  ASSERT_TRUE(namespaces.ok());
  EXPECT_EQ(namespaces->items.size(), 4u);
}

TEST_F(SimulatedControlPlanesTest, IdleControlPlanesAreEvictedAndReloadedOnTheirNextRequest) {
  ASSERT_TRUE(planes_->Ensure("acme", "dev").ok());
  ASSERT_TRUE(planes_->Ensure("acme", "prod").ok());
  auto dev = Client("acme", "dev");
  ASSERT_TRUE(dev->Create(kConfigMaps, "default", ConfigMap("settings", "one")).ok());
  clock_.Advance(9min);
  ASSERT_TRUE(Client("acme", "prod")->List(kNamespaces, "").ok());
  clock_.Advance(2min);
  planes_->Tick();
  EXPECT_EQ(planes_->loaded_count(), 1u);  // prod was used 2 minutes ago
  auto got = dev->Get(kConfigMaps, "default", "settings");
  ASSERT_TRUE(got.ok()) << got.status().message();
  EXPECT_EQ((*got)["data"]["value"], "one");
  EXPECT_EQ(planes_->loaded_count(), 2u);
}

TEST_F(SimulatedControlPlanesTest, AnOpenWatchKeepsAControlPlaneLoaded) {
  ASSERT_TRUE(planes_->Ensure("acme", "dev").ok());
  kube::ClientConfig config = Config("acme", "dev");
  ASSERT_TRUE(Client(config)->Create(kConfigMaps, "default", ConfigMap("seen", "one")).ok());
  auto watch_client = Client(config);
  kube::StreamCancel cancel;
  std::promise<void> first_event;
  std::thread watcher([&] {
    kube::WatchOptions options;
    options.timeout_seconds = 24 * 3600;  // the fake clock moves on by hours
    bool signalled = false;
    (void)kube::WatchOnce(
        *watch_client, kConfigMaps, "default", options,
        [&](const kube::WatchEvent&) {
          if (!signalled) first_event.set_value();
          signalled = true;
          return true;
        },
        &cancel);
    if (!signalled) first_event.set_value();
  });
  first_event.get_future().wait();  // the watch is registered once it sent the current objects
  clock_.Advance(11min);
  planes_->Tick();
  EXPECT_EQ(planes_->loaded_count(), 1u);
  cancel.Cancel();
  watcher.join();
}

// Events expire an hour after they were last written, as with kube-apiserver's
// --event-ttl, so the events the syncer copies in never pile up against the
// virtual cluster's api_limits.objects.
TEST_F(SimulatedControlPlanesTest, EventsExpireAnHourAfterTheirLastWrite) {
  ASSERT_TRUE(planes_->Ensure("acme", "dev").ok());
  auto client = Client("acme", "dev");
  auto event = [&](const std::string& name) {
    return json{{"apiVersion", "v1"},
                {"kind", "Event"},
                {"metadata", {{"name", name}, {"namespace", "default"}}},
                {"involvedObject", {{"kind", "Pod"}, {"name", "p"}, {"namespace", "default"}}},
                {"reason", "Scheduled"},
                {"lastTimestamp", FormatRfc3339(clock_.Now())}};
  };
  ASSERT_TRUE(client->Create(kube::kEvents, "default", event("old")).ok());
  clock_.Advance(50min);
  ASSERT_TRUE(client->Create(kube::kEvents, "default", event("young")).ok());
  clock_.Advance(11min);  // "old" written 61 minutes ago, "young" 11
  planes_->Tick();
  auto left = client->List(kube::kEvents, "default");
  ASSERT_TRUE(left.ok());
  EXPECT_THAT(Names(*left), UnorderedElementsAre("young"));
  // Written again, an event lives on.
  json again = event("young");
  clock_.Advance(55min);
  again["lastTimestamp"] = FormatRfc3339(clock_.Now());
  auto current = client->Get(kube::kEvents, "default", "young");
  ASSERT_TRUE(current.ok());
  again["metadata"]["resourceVersion"] = (*current)["metadata"]["resourceVersion"];
  ASSERT_TRUE(client->Update(kube::kEvents, "default", again).ok());
  clock_.Advance(10min);
  planes_->Tick();
  left = client->List(kube::kEvents, "default");
  ASSERT_TRUE(left.ok());
  EXPECT_THAT(Names(*left), UnorderedElementsAre("young"));
}

TEST_F(SimulatedControlPlanesTest, DeploymentsGetPendingPodsWithoutNodes) {
  ASSERT_TRUE(planes_->Ensure("acme", "dev").ok());
  auto client = Client("acme", "dev");
  json deployment = {{"apiVersion", "apps/v1"},
                     {"kind", "Deployment"},
                     {"metadata", {{"name", "web"}}},
                     {"spec",
                      {{"replicas", 2},
                       {"selector", {{"matchLabels", {{"app", "web"}}}}},
                       {"template",
                        {{"metadata", {{"labels", {{"app", "web"}}}}},
                         {"spec", {{"containers", json::array({{{"name", "c"}, {"image", "nginx"}}})}}}}}}}};
  ASSERT_TRUE(client->Create(kDeployments, "default", deployment).ok());
  for (int i = 0; i < 3; ++i) {
    clock_.Advance(1s);
    planes_->Tick();
  }
  auto pods = client->List(kPods, "default");
  ASSERT_TRUE(pods.ok());
  ASSERT_EQ(pods->items.size(), 2u);
  for (const auto& pod : pods->items) EXPECT_EQ(pod.StringAt("/status/phase"), "Pending");
}

}  // namespace
}  // namespace septa::vcp
