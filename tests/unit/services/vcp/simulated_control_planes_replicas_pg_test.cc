// Two septad replicas serving the same virtual cluster: two
// SimulatedControlPlanes, each with its own PgVirtualObjectStore and NOTIFY
// listener (as septad wires them), on the test run's PostgreSQL, reached by
// the Kubernetes client over HTTPS with one admin token. What one replica
// wrote is read, listed and watched through the other; concurrent
// conditional updates of one object through both: exactly one wins, the
// other gets 409 Conflict; resource versions never repeat.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <set>
#include <thread>

#include "services/kube/client.h"
#include "services/kube/resources.h"
#include "services/kube/watch.h"
#include "services/store/notification_listener.h"
#include "services/store/pg_virtual_object_store.h"
#include "services/vcp/simulated_control_planes.h"
#include "tests/support/test_database.h"
#include "tests/unit/services/vcp/vcp_test_objects.h"

namespace septa::vcp {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

using test::kBound;

using test::ConfigMap;

std::uint64_t VersionOf(const json& object) {
  return std::stoull(object["metadata"]["resourceVersion"].get<std::string>());
}

struct Replica {
  explicit Replica(const std::string& url)
      : store({.database_url = url, .pool_size = 4}), planes(store, {.tick_interval = 10ms, .idle_after = 0ms}) {
    EXPECT_TRUE(planes.Start().ok());
    changes = std::make_unique<store::NotificationListener>(
        url, "septa_virtual_objects",
        [this](const std::string& key) { planes.Changed(key.substr(0, key.find('/')), key.substr(key.find('/') + 1)); },
        [this] { planes.ChangedAll(); });
  }
  ~Replica() { changes.reset(); }

  store::PgVirtualObjectStore store;
  SimulatedControlPlanes planes;
  std::unique_ptr<store::NotificationListener> changes;
};

// Collects a watch's events on its own thread until cancelled.
class Watcher {
 public:
  explicit Watcher(kube::Client& client) {
    thread_ = std::thread([this, &client] {
      kube::WatchOptions options;
      options.allow_bookmarks = false;
      (void)kube::WatchOnce(
          client, kube::kConfigMaps, "default", options,
          [this](const kube::WatchEvent& event) {
            std::lock_guard lock(mu_);
            events_.push_back(event.type + " " + event.object["metadata"].value("name", "") + " " +
                              event.object["metadata"].value("resourceVersion", ""));
            changed_.notify_all();
            return true;
          },
          &cancel_);
    });
  }
  ~Watcher() {
    cancel_.Cancel();
    thread_.join();
  }
  // Waits (bounded) until `event` ("TYPE name rv") arrived.
  bool Await(const std::string& event) {
    std::unique_lock lock(mu_);
    return changed_.wait_for(lock, kBound, [&] { return std::ranges::find(events_, event) != events_.end(); });
  }
  std::vector<std::string> events() {
    std::lock_guard lock(mu_);
    return events_;
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  std::vector<std::string> events_;
  kube::StreamCancel cancel_;
  std::thread thread_;
};

class vcpReplicas : public ::testing::Test {
 protected:
  void SetUp() override {
    auto database = test::TestDatabase::CreateMigrated();
    ASSERT_TRUE(database.ok()) << database.status().ToString();
    database_ = std::move(*database);
    a_ = std::make_unique<Replica>(database_->url());
    b_ = std::make_unique<Replica>(database_->url());
    ASSERT_TRUE(a_->planes.Ensure("acme", "dev").ok());
    // One admin token, issued through A; the same kubeconfig pointed at B.
    auto kubeconfig = a_->planes.AdminKubeconfig("acme", "dev");
    ASSERT_TRUE(kubeconfig.ok()) << kubeconfig.status().ToString();
    auto config = kube::ParseKubeconfig(*kubeconfig);
    ASSERT_TRUE(config.ok());
    via_a_ = Client(*config);
    config->server = b_->planes.endpoint("acme", "dev");
    via_b_ = Client(*config);
  }
  void TearDown() override {
    b_.reset();
    a_.reset();
  }

  static std::unique_ptr<kube::Client> Client(kube::ClientConfig config) {
    kube::ClientOptions options;
    options.max_retries = 0;  // a refused write shows as it is
    auto client = kube::Client::Create(std::move(config), options);
    EXPECT_TRUE(client.ok());
    return std::move(*client);
  }

  std::unique_ptr<test::TestDatabase> database_;
  std::unique_ptr<Replica> a_, b_;
  std::unique_ptr<kube::Client> via_a_, via_b_;
};

TEST_F(vcpReplicas, WritesThroughOneReplicaAreReadListedAndWatchedThroughTheOther) {
  auto watch_client = Client(via_b_->config());
  ASSERT_TRUE(via_b_->List(kube::kConfigMaps, "default").ok()) << "B has the virtual cluster loaded before A writes";
  Watcher watch(*watch_client);

  auto created = via_a_->Create(kube::kConfigMaps, "default", ConfigMap("shared", "one"));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  const std::string rv = (*created)["metadata"]["resourceVersion"];
  // Read and list through B at once: each request finds the stored version moved.
  auto read = via_b_->Get(kube::kConfigMaps, "default", "shared");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ((*read)["data"]["value"], "one");
  EXPECT_EQ((*read)["metadata"]["resourceVersion"], rv);
  auto listed = via_b_->List(kube::kConfigMaps, "default");
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->items.size(), 1u);
  EXPECT_EQ(listed->items[0].Name(), "shared");
  EXPECT_TRUE(watch.Await("ADDED shared " + rv)) << ::testing::PrintToString(watch.events());

  // The other way round: B updates, A reads; B's watcher sees its own replica's write too.
  json update = *read;
  update["data"]["value"] = "two";
  auto updated = via_b_->Update(kube::kConfigMaps, "default", update);
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  EXPECT_GT(VersionOf(*updated), VersionOf(*read));
  auto reread = via_a_->Get(kube::kConfigMaps, "default", "shared");
  ASSERT_TRUE(reread.ok());
  EXPECT_EQ((*reread)["data"]["value"], "two");
  EXPECT_TRUE(watch.Await("MODIFIED shared " + std::string((*updated)["metadata"]["resourceVersion"])));

  // A deletes; B's watcher is told by NOTIFY (nobody asks B anything).
  ASSERT_TRUE(via_a_->Delete(kube::kConfigMaps, "default", "shared").ok());
  auto gone = *a_->store.ResourceVersion({"acme", "dev"});
  ASSERT_TRUE(gone.has_value());
  EXPECT_TRUE(watch.Await("DELETED shared " + std::to_string(*gone))) << ::testing::PrintToString(watch.events());
  EXPECT_EQ(via_b_->Get(kube::kConfigMaps, "default", "shared").status().code(), Code::kNotFound);
}

TEST_F(vcpReplicas, ConcurrentUpdatesOfOneObjectThroughBothReplicas_ExactlyOneWins) {
  auto created = via_a_->Create(kube::kConfigMaps, "default", ConfigMap("contended", "start"));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  std::set<std::uint64_t> versions = {VersionOf(*created)};
  std::uint64_t last = VersionOf(*created);
  for (int round = 0; round < 20; ++round) {
    auto current = via_b_->Get(kube::kConfigMaps, "default", "contended");
    ASSERT_TRUE(current.ok());
    json by_a = *current, by_b = *current;
    by_a["data"]["value"] = "a-" + std::to_string(round);
    by_b["data"]["value"] = "b-" + std::to_string(round);
    std::promise<void> go;
    std::shared_future<void> start = go.get_future().share();
    auto through_a = std::async(std::launch::async, [&] {
      start.wait();
      return via_a_->Update(kube::kConfigMaps, "default", by_a);
    });
    auto through_b = std::async(std::launch::async, [&] {
      start.wait();
      return via_b_->Update(kube::kConfigMaps, "default", by_b);
    });
    go.set_value();
    auto ra = through_a.get();
    auto rb = through_b.get();
    ASSERT_NE(ra.ok(), rb.ok()) << "round " << round << ": " << ra.status().ToString() << " / "
                                << rb.status().ToString();
    const auto& lost = ra.ok() ? rb.status() : ra.status();
    const auto& won = ra.ok() ? *ra : *rb;
    EXPECT_EQ(kube::KubeReason(lost), "Conflict") << lost.ToString();
    EXPECT_TRUE(versions.insert(VersionOf(won)).second) << "resource version " << VersionOf(won) << " repeated";
    EXPECT_GT(VersionOf(won), last);
    last = VersionOf(won);
    // Both replicas read the winner.
    for (kube::Client* client : {via_a_.get(), via_b_.get()}) {
      auto read = client->Get(kube::kConfigMaps, "default", "contended");
      ASSERT_TRUE(read.ok());
      EXPECT_EQ((*read)["data"], won["data"]);
      EXPECT_EQ(VersionOf(*read), VersionOf(won));
    }
  }
}

TEST_F(vcpReplicas, CreatesRacingThroughBothReplicasNeverRepeatAResourceVersion) {
  // Two writers, one per replica, each creating its own objects; a create
  // refused because the other replica wrote first is retried, as clients
  // retry a 409 Conflict.
  constexpr int kEach = 25;
  auto writer = [](kube::Client& client, const std::string& prefix) {
    std::vector<std::uint64_t> versions;
    for (int i = 0; i < kEach; ++i) {
      for (int attempt = 0; attempt < 50; ++attempt) {
        auto created = client.Create(kube::kConfigMaps, "default", ConfigMap(prefix + std::to_string(i), prefix));
        if (created.ok()) {
          versions.push_back(VersionOf(*created));
          break;
        }
        if (kube::KubeReason(created.status()) != "Conflict") {
          ADD_FAILURE() << created.status().ToString();
          return versions;
        }
      }
    }
    return versions;
  };
  auto from_a = std::async(std::launch::async, writer, std::ref(*via_a_), "a-");
  auto from_b = std::async(std::launch::async, writer, std::ref(*via_b_), "b-");
  std::vector<std::uint64_t> all = from_a.get();
  const auto b_versions = from_b.get();
  all.insert(all.end(), b_versions.begin(), b_versions.end());
  ASSERT_EQ(all.size(), 2u * kEach);
  EXPECT_EQ(std::set<std::uint64_t>(all.begin(), all.end()).size(), all.size()) << "a resource version repeated";
  // Both replicas list all of them, each at the version its create returned.
  for (kube::Client* client : {via_a_.get(), via_b_.get()}) {
    auto listed = client->List(kube::kConfigMaps, "default");
    ASSERT_TRUE(listed.ok());
    std::set<std::uint64_t> seen;
    for (const auto& item : listed->items) seen.insert(VersionOf(item.ToJson()));
    EXPECT_EQ(seen, std::set<std::uint64_t>(all.begin(), all.end()));
  }
  // A replica started afterwards (a restart) continues above every one of them.
  Replica c(database_->url());
  auto config = via_a_->config();
  config.server = c.planes.endpoint("acme", "dev");
  auto created = Client(config)->Create(kube::kConfigMaps, "default", ConfigMap("after", "c"));
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_GT(VersionOf(*created), *std::ranges::max_element(all));
}

// One replica alone never answers 409 to a create that conflicts with
// nothing (kubectl create and Helm do not retry it): its own writes racing
// its own refreshes (each request's, and the tick's after its own NOTIFY)
// must not look like another replica's. 4 writers of new namespaces, as in
// the hostile-tenant finding L5 (7 of 200 got "the object has been modified").
TEST_F(vcpReplicas, OneReplicaAloneNeverRefusesAConcurrentCreateAsAConflict) {
  b_.reset();
  constexpr int kWriters = 4, kEach = 100;
  std::vector<std::string> refused[kWriters];
  std::atomic<bool> done{false};
  // Reads refresh the copy too (each request first reads the stored version).
  std::thread reader([&] {
    auto client = Client(via_a_->config());
    while (!done) (void)client->List(kube::kNamespaces, "");
  });
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      auto client = Client(via_a_->config());
      for (int i = 0; i < kEach; ++i) {
        const std::string name = "q" + std::to_string(w) + "-" + std::to_string(i);
        json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}};
        auto created = client->Create(kube::kNamespaces, "", ns);
        if (!created.ok()) refused[w].push_back(name + ": " + created.status().ToString());
      }
    });
  }
  for (auto& writer : writers) writer.join();
  done = true;
  reader.join();
  for (const auto& lost : refused) EXPECT_THAT(lost, ::testing::IsEmpty());
  auto listed = via_a_->List(kube::kNamespaces, "");
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->items.size(), 4u + kWriters * kEach);  // the seeded four and every one created
}

}  // namespace
}  // namespace septa::vcp
