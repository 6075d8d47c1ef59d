// The bounds of the virtual clusters' listener (hostile-tenant findings M7,
// L3, L4) through its real interface: HTTPS on port 0 and the Kubernetes
// client, the in-memory VirtualObjectStore (which can stall one virtual
// cluster's writes, as a slow PostgreSQL, and fail reads, as one that is
// down), a fake clock and Tick() by hand. A tenant's callers here are
// service-account tokens bound to cluster-admin (counted against the
// limits); the admin token (system:masters) is not counted.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "services/kube/client.h"
#include "services/kube/resources.h"
#include "services/kube/watch.h"
#include "services/vcp/simulated_control_planes.h"
#include "tests/support/fake_clock.h"
#include "tests/support/fake_virtual_object_store.h"
#include "tests/support/seeded_random.h"
#include "tests/unit/services/vcp/vcp_test_objects.h"

namespace septa::vcp {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;
using namespace std::chrono_literals;

using test::kBound;

json ConfigMapOfSize(const std::string& name, std::size_t bytes = 1) {
  return test::ConfigMap(name, std::string(bytes, 'v'));
}

// Lets held writes go when a test ends, so that its pending requests end too
// (declared after them, it runs before they are waited for).
struct ReleaseAtEnd {
  explicit ReleaseAtEnd(test::FakeVirtualObjectStore& store) : store(store) {}
  ~ReleaseAtEnd() { store.ReleaseWrites(); }
  test::FakeVirtualObjectStore& store;
};

class ApiLimitsTest : public ::testing::Test {
 protected:
  void SetUp() override { Restart(); }

  // A new SimulatedControlPlanes on the same store: a septad restart.
  void Restart(FairQueueOptions fairness = {}) {
    planes_.reset();
    SimulatedControlPlanesOptions options{
        .tick_interval = 0ms, .idle_after = 10min, .clock = &clock_, .random = &random_};
    options.api_limits = [this](const core::VirtualClusterKey& key) -> Result<tenancy::ApiLimits> {
      std::lock_guard lock(mu_);
      if (key.vcluster == "absent") return NotFound("no such virtual cluster");
      return limits_[key.tenant];
    };
    options.fairness = fairness;
    planes_ = std::make_unique<SimulatedControlPlanes>(store_, std::move(options));
    ASSERT_TRUE(planes_->Start().ok());
  }

  void SetLimits(const std::string& tenant, tenancy::ApiLimits limits) {
    {
      std::lock_guard lock(mu_);
      limits_[tenant] = limits;
    }
    planes_->LimitsChanged(tenant, "dev");  // as the NOTIFY of the virtual cluster's row
    planes_->Tick();
  }

  kube::ClientConfig AdminConfig(const std::string& tenant, const std::string& vcluster = "dev") {
    auto kubeconfig = planes_->AdminKubeconfig(tenant, vcluster);
    EXPECT_TRUE(kubeconfig.ok()) << kubeconfig.status().message();
    auto config = kube::ParseKubeconfig(*kubeconfig);
    EXPECT_TRUE(config.ok()) << config.status().message();
    return *config;
  }

  // A tenant's caller: the token of the service account default/default,
  // bound to cluster-admin.
  kube::ClientConfig TenantConfig(const std::string& tenant) {
    kube::ClientConfig config = AdminConfig(tenant);
    auto admin = Client(config);
    const kube::Resource bindings{"rbac.authorization.k8s.io", "v1", "clusterrolebindings", false};
    json binding = {
        {"apiVersion", "rbac.authorization.k8s.io/v1"},
        {"kind", "ClusterRoleBinding"},
        {"metadata", {{"name", "default-admin"}}},
        {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", "cluster-admin"}}},
        {"subjects", json::array({{{"kind", "ServiceAccount"}, {"name", "default"}, {"namespace", "default"}}})}};
    auto bound = admin->Create(bindings, "", binding);
    EXPECT_TRUE(bound.ok() || kube::KubeReason(bound.status()) == "AlreadyExists") << bound.status().message();
    auto requested = admin->CreateSubresource(
        kube::kServiceAccounts, "default", "default", "token",
        {{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "TokenRequest"}, {"spec", json::object()}});
    EXPECT_TRUE(requested.ok()) << requested.status().message();
    config.token = (*requested)["status"].value("token", "");
    return config;
  }

  static std::unique_ptr<kube::Client> Client(kube::ClientConfig config,
                                              std::chrono::milliseconds timeout = std::chrono::milliseconds(kBound)) {
    kube::ClientOptions options;
    options.max_retries = 0;  // a refusal shows as it is
    options.request_timeout = timeout;
    auto client = kube::Client::Create(std::move(config), options);
    EXPECT_TRUE(client.ok());
    return std::move(*client);
  }

  // A raw request: the status, headers and body as the listener sent them.
  static kube::HttpResponse Raw(kube::ClientConfig config, const std::string& target, const std::string& method = "GET",
                                const std::string& body = "") {
    auto answer =
        Client(std::move(config))->Call({method, target, body, body.empty() ? "" : "application/json"}, false);
    EXPECT_TRUE(answer.ok()) << answer.status().message();
    return answer.ok() ? *answer : kube::HttpResponse{};
  }

  std::size_t StoredObjects(const std::string& tenant) { return store_.LoadObjects({tenant, "dev"})->size(); }
  std::uint64_t StoredBytes(const std::string& tenant) {
    auto objects = store_.LoadObjects({tenant, "dev"});
    std::uint64_t bytes = 0;
    for (const auto& object : *objects) bytes += object.body.size();
    return bytes;
  }

  FakeClock clock_;
  SeededRandom random_{11};
  test::FakeVirtualObjectStore store_;
  std::mutex mu_;
  std::map<std::string, tenancy::ApiLimits> limits_;  // by tenant
  std::unique_ptr<SimulatedControlPlanes> planes_;
};

// Finding L3: an unauthenticated or foreign caller learns nothing of which
// virtual clusters exist, and nothing is loaded for it.
TEST_F(ApiLimitsTest, ACallerWithoutACredentialOfTheClusterGetsOne401WhetherItExistsOrNotAndLoadsNothing) {
  ASSERT_TRUE(planes_->Ensure("acme", "dev").ok());
  kube::ClientConfig acme = AdminConfig("acme");
  ASSERT_TRUE(planes_->Ensure("globex", "dev").ok());
  kube::ClientConfig globex = AdminConfig("globex");
  Restart();  // nothing loaded; a new port
  acme.server = planes_->endpoint("acme", "dev");
  kube::ClientConfig nobody = acme;
  nobody.token.clear();
  std::vector<std::string> bodies;
  for (const std::string vcluster : {"dev", "zzz", "absent"}) {
    nobody.server = planes_->endpoint("acme", vcluster);
    const kube::HttpResponse none = Raw(nobody, "/api");
    EXPECT_EQ(none.status, 401) << vcluster;
    bodies.push_back(none.body);
    kube::ClientConfig foreign = globex;  // another tenant's valid token
    foreign.server = planes_->endpoint("acme", vcluster);
    const kube::HttpResponse refused = Raw(foreign, "/api/v1/namespaces");
    EXPECT_EQ(refused.status, 401) << vcluster;
    bodies.push_back(refused.body);
  }
  for (const std::string& body : bodies) EXPECT_EQ(body, bodies.front());
  EXPECT_THAT(bodies.front(), Not(HasSubstr("/vc/")));
  EXPECT_EQ(json::parse(bodies.front())["reason"], "Unauthorized");
  EXPECT_EQ(planes_->loaded_count(), 0u) << "loaded for a caller that cannot authenticate to it";
  // A path that names no virtual cluster is not found, without echoing it.
  nobody.server = "https://127.0.0.1:" + std::to_string(planes_->port());
  const kube::HttpResponse elsewhere = Raw(nobody, "/somewhere/else");
  EXPECT_EQ(elsewhere.status, 404);
  EXPECT_THAT(elsewhere.body, Not(HasSubstr("somewhere")));
  // The owner's credential loads it and is served.
  EXPECT_TRUE(Client(acme)->List(kube::kNamespaces, "").ok());
  EXPECT_EQ(planes_->loaded_count(), 1u);
}

// Finding L4: a server fault reaches the client as a fixed message with a
// request id (and Retry-After); the detail goes to the log only.
TEST_F(ApiLimitsTest, AServerFaultIsAFixedMessageWithARequestIdAndNoDetail) {
  ASSERT_TRUE(planes_->Ensure("acme", "dev").ok());
  kube::ClientConfig acme = AdminConfig("acme");
  Restart();
  acme.server = planes_->endpoint("acme", "dev");
  store_.FailReads(Unavailable("cannot connect to PostgreSQL at postgresql:///septa?host=%2Ftmp%2Fsecret&user=septa"));
  kube::HttpResponse failed = Raw(acme, "/api/v1/namespaces");
  EXPECT_EQ(failed.status, 503);
  EXPECT_THAT(failed.body, Not(HasSubstr("PostgreSQL")));
  EXPECT_THAT(failed.body, Not(HasSubstr("secret")));
  ASSERT_TRUE(failed.headers.contains("audit-id"));
  EXPECT_THAT(json::parse(failed.body)["message"].get<std::string>(),
              ::testing::EndsWith("(request id " + failed.headers["audit-id"] + ")"));
  EXPECT_EQ(failed.headers["retry-after"], "1");
  // Without a credential: 401 at once, nothing read.
  kube::ClientConfig nobody = acme;
  nobody.token.clear();
  EXPECT_EQ(Raw(nobody, "/api/v1/namespaces").status, 401);
  store_.FailReads(Status::Ok());
  EXPECT_TRUE(Client(acme)->List(kube::kNamespaces, "").ok());
}

TEST_F(ApiLimitsTest, ACreatePastTheObjectLimitIsForbiddenAsAResourceQuotaRefusesItAndNothingIsWritten) {
  ASSERT_TRUE(planes_->Ensure("acme", "dev").ok());
  auto tenant = Client(TenantConfig("acme"));
  ASSERT_TRUE(tenant->Create(kube::kConfigMaps, "default", ConfigMapOfSize("c1")).ok());
  const std::size_t stored = StoredObjects("acme");
  SetLimits("acme", {.objects = static_cast<std::int64_t>(stored) + 1});
  ASSERT_TRUE(tenant->Create(kube::kConfigMaps, "default", ConfigMapOfSize("c2")).ok());
  auto refused = tenant->Create(kube::kConfigMaps, "default", ConfigMapOfSize("c3"));
  EXPECT_EQ(refused.status().code(), Code::kPermissionDenied);
  EXPECT_EQ(kube::KubeReason(refused.status()), "Forbidden");
  const std::string n = std::to_string(stored + 1);
  EXPECT_THAT(refused.status().message(),
              HasSubstr("configmaps \"c3\" is forbidden: exceeded quota: api_limits, requested: objects=1, used: "
                        "objects=" +
                        n + ", limited: objects=" + n));
  EXPECT_EQ(StoredObjects("acme"), stored + 1);  // nothing of c3 stored
  EXPECT_EQ(tenant->Get(kube::kConfigMaps, "default", "c3").status().code(), Code::kNotFound);
  // Updates still pass, a delete makes room, and the admin's token is bound too (it is the storage's bound).
  ASSERT_TRUE(tenant->Delete(kube::kConfigMaps, "default", "c1").ok());
  EXPECT_TRUE(tenant->Create(kube::kConfigMaps, "default", ConfigMapOfSize("c3")).ok());
  EXPECT_EQ(Client(AdminConfig("acme"))->Create(kube::kConfigMaps, "default", ConfigMapOfSize("c4")).status().code(),
            Code::kPermissionDenied);
}

TEST_F(ApiLimitsTest, AWriteThatGrowsTheStoredBytesPastTheLimitIsForbidden) {
  ASSERT_TRUE(planes_->Ensure("acme", "dev").ok());
  auto tenant = Client(TenantConfig("acme"));
  ASSERT_TRUE(tenant->Create(kube::kConfigMaps, "default", ConfigMapOfSize("small", 10)).ok());
  const std::uint64_t bytes = StoredBytes("acme");
  SetLimits("acme", {.object_bytes = static_cast<std::int64_t>(bytes) + 500});
  auto big = tenant->Create(kube::kConfigMaps, "default", ConfigMapOfSize("big", 1000));
  EXPECT_EQ(big.status().code(), Code::kPermissionDenied);
  EXPECT_THAT(big.status().message(), HasSubstr(", used: object_bytes=" + std::to_string(bytes) +
                                                ", limited: object_bytes=" + std::to_string(bytes + 500)));
  EXPECT_EQ(StoredBytes("acme"), bytes);
  EXPECT_TRUE(tenant->Create(kube::kConfigMaps, "default", ConfigMapOfSize("fits", 10)).ok());
}

TEST_F(ApiLimitsTest, AWatchPastTheLimitIs429WithRetryAfterAndTheSyncersAreNotCounted) {
  ASSERT_TRUE(planes_->Ensure("acme", "dev").ok());
  kube::ClientConfig config = TenantConfig("acme");
  SetLimits("acme", {.watches = 2});
  std::vector<std::unique_ptr<kube::Client>> clients;
  std::vector<std::unique_ptr<kube::StreamCancel>> cancels;
  std::vector<std::thread> watchers;
  auto open = [&](kube::ClientConfig c) {
    clients.push_back(Client(std::move(c)));
    cancels.push_back(std::make_unique<kube::StreamCancel>());
    auto started = std::make_shared<std::promise<void>>();
    auto future = started->get_future();
    watchers.emplace_back([client = clients.back().get(), cancel = cancels.back().get(), started] {
      bool signalled = false;
      kube::WatchOptions options;
      options.allow_bookmarks = false;
      (void)kube::WatchOnce(
          *client, kube::kNamespaces, "", options,
          [&](const kube::WatchEvent&) {
            if (!signalled) started->set_value();
            signalled = true;
            return true;
          },
          cancel);
      if (!signalled) started->set_value();
    });
    EXPECT_EQ(future.wait_for(kBound), std::future_status::ready);
  };
  open(config);
  open(config);
  kube::HttpResponse third = Raw(config, "/api/v1/namespaces?watch=true");
  EXPECT_EQ(third.status, 429);
  EXPECT_EQ(third.headers["retry-after"], "1");
  const json status = json::parse(third.body);
  EXPECT_EQ(status["reason"], "TooManyRequests");
  EXPECT_THAT(status["message"].get<std::string>(), HasSubstr("api_limits.watches"));
  // Lists and gets are not watches; the syncer's watch is not counted.
  EXPECT_TRUE(Client(config)->List(kube::kNamespaces, "").ok());
  auto syncer = kube::ParseKubeconfig(*planes_->SyncerKubeconfig("acme", "dev"));
  ASSERT_TRUE(syncer.ok());
  open(*syncer);
  // A closed watch gives its place back.
  cancels[0]->Cancel();
  watchers[0].join();
  auto watch_client = Client(config);
  Status reopened = ResourceExhausted("not tried");
  const auto deadline = std::chrono::steady_clock::now() + kBound;
  while (reopened.code() == Code::kResourceExhausted && std::chrono::steady_clock::now() < deadline) {
    // Until the server saw the connection close; accepted, it ends at the first event.
    reopened = kube::WatchOnce(*watch_client, kube::kNamespaces, "", {}, [](const kube::WatchEvent&) { return false; });
  }
  EXPECT_TRUE(reopened.ok()) << reopened.ToString();
  for (std::size_t i = 1; i < watchers.size(); ++i) {
    cancels[i]->Cancel();
    watchers[i].join();
  }
}

TEST_F(ApiLimitsTest, RequestsInFlightPastTheLimitAre429AndTheyNeverTouchTheStore) {
  ASSERT_TRUE(planes_->Ensure("acme", "dev").ok());
  kube::ClientConfig config = TenantConfig("acme");
  SetLimits("acme", {.requests_in_flight = 1});
  store_.HoldWrites({"acme", "dev"});
  auto first = std::async(std::launch::async,
                          [&] { return Client(config)->Create(kube::kConfigMaps, "default", ConfigMapOfSize("a")); });
  ReleaseAtEnd release(store_);  // before `first` waits for its write, if an assertion returns early
  ASSERT_TRUE(store_.AwaitHeld(1, kBound));
  kube::HttpResponse second = Raw(config, "/api/v1/namespaces/default/configmaps");
  EXPECT_EQ(second.status, 429);
  EXPECT_EQ(second.headers["retry-after"], "1");
  EXPECT_THAT(json::parse(second.body)["message"].get<std::string>(), HasSubstr("api_limits.requests_in_flight"));
  store_.ReleaseWrites();
  EXPECT_TRUE(first.get().ok());
  EXPECT_TRUE(Client(config)->List(kube::kConfigMaps, "default").ok());  // answered: its place is free again
}

// One tenant whose writes stall (as on a slow PostgreSQL) holds at most its
// share of the workers and a bounded queue; the rest of its requests are
// 429, and another tenant's reads and writes are answered meanwhile. Before,
// requests ran on the listener's two I/O threads, which two stalled writes
// held: every other tenant's request waited for them.
TEST_F(ApiLimitsTest, OneTenantsStalledWritesNeverHoldUpAnotherTenantsRequests) {
  Restart({.workers = 3, .flow_concurrency = 2, .flow_queue = 2});
  std::vector<kube::ClientConfig> mallory;
  for (const char* vcluster : {"m1", "m2"}) {
    ASSERT_TRUE(planes_->Ensure("mallory", vcluster).ok());
    mallory.push_back(AdminConfig("mallory", vcluster));
    ASSERT_TRUE(Client(mallory.back())->List(kube::kNamespaces, "").ok());  // in use: its credentials are known
  }
  ASSERT_TRUE(planes_->Ensure("victim", "dev").ok());
  auto victim = Client(AdminConfig("victim"), 5s);
  ASSERT_TRUE(victim->Create(kube::kConfigMaps, "default", ConfigMapOfSize("mine")).ok());

  store_.HoldWrites({"mallory", "m1"});
  store_.HoldWrites({"mallory", "m2"});
  std::vector<std::future<Result<json>>> flood;
  auto create = [&](const kube::ClientConfig& config, const std::string& name) {
    flood.push_back(std::async(std::launch::async, [config, name] {
      return Client(config)->Create(kube::kConfigMaps, "default", ConfigMapOfSize(name));
    }));
  };
  create(mallory[0], "f1");
  create(mallory[1], "f2");
  ReleaseAtEnd release(store_);
  ASSERT_TRUE(store_.AwaitHeld(2, kBound));  // both running, stalled

  auto read = victim->Get(kube::kConfigMaps, "default", "mine");
  EXPECT_TRUE(read.ok()) << read.status().ToString();
  auto written = victim->Create(kube::kConfigMaps, "default", ConfigMapOfSize("also"));
  EXPECT_TRUE(written.ok()) << written.status().ToString();

  create(mallory[0], "f3");
  create(mallory[1], "f4");
  const auto deadline = std::chrono::steady_clock::now() + kBound;
  while (planes_->waiting("mallory") < 2 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  ASSERT_EQ(planes_->waiting("mallory"), 2u);  // queued behind its share
  kube::HttpResponse over = Raw(mallory[1], "/api/v1/namespaces/default/configmaps");
  EXPECT_EQ(over.status, 429);
  EXPECT_EQ(over.headers["retry-after"], "1");

  store_.ReleaseWrites();
  for (auto& f : flood) EXPECT_TRUE(f.get().ok());
}

}  // namespace
}  // namespace septa::vcp
