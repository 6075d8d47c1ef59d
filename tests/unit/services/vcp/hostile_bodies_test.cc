// Hostile bodies against a virtual control plane through its real HTTPS
// listener (issue 28, C1 and H1): a body nested 100,000 deep crashed septad
// (stack overflow) and a 442-byte YAML alias bomb took 20 s and 3 GB; both
// are now a 400 Status in kube-apiserver's words, and the plane keeps
// serving. Objects an older septad stored deeper than the bound are not
// served and do not stop a list.
#include <gtest/gtest.h>

#include <chrono>

#include "common/documents.h"
#include "services/kube/client.h"
#include "services/kube/resources.h"
#include "services/kube/watch.h"
#include "services/vcp/simulated_control_planes.h"
#include "tests/support/fake_clock.h"
#include "tests/support/fake_virtual_object_store.h"
#include "tests/support/hostile_documents.h"
#include "tests/support/seeded_random.h"

namespace septa::vcp {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

using test::NestedArrays;

// The finding's bomb: seven levels of anchors, each ten aliases of the one below.
std::string AliasBombConfigMap() {
  return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\ndata:\n" + test::YamlAliasBomb(7, "  ");
}

class HostileBodiesTest : public ::testing::Test {
 protected:
  void SetUp() override { Restart(); }

  void Restart() {
    planes_.reset();
    planes_ = std::make_unique<SimulatedControlPlanes>(
        store_,
        SimulatedControlPlanesOptions{.tick_interval = 0ms, .idle_after = 10min, .clock = &clock_, .random = &random_});
    ASSERT_TRUE(planes_->Start().ok());
  }

  std::unique_ptr<kube::Client> Client() {
    auto kubeconfig = planes_->AdminKubeconfig("acme", "dev");
    EXPECT_TRUE(kubeconfig.ok()) << kubeconfig.status().message();
    auto config = kube::ParseKubeconfig(*kubeconfig);
    EXPECT_TRUE(config.ok()) << config.status().message();
    kube::ClientOptions options;
    options.max_retries = 0;
    auto client = kube::Client::Create(*std::move(config), options);
    EXPECT_TRUE(client.ok());
    return std::move(*client);
  }

  // POSTs `body` to the config maps of namespace default, as sent.
  kube::HttpResponse Post(kube::Client& client, std::string body, const std::string& content_type) {
    auto response = client.Call({"POST", client.Path(kube::kConfigMaps, "default"), std::move(body), content_type},
                                /*idempotent=*/false);
    EXPECT_TRUE(response.ok()) << response.status().message();
    return response.ok() ? *response : kube::HttpResponse{};
  }

  FakeClock clock_;
  SeededRandom random_{7};
  test::FakeVirtualObjectStore store_;
  std::unique_ptr<SimulatedControlPlanes> planes_;
};

void ExpectBadRequest(const kube::HttpResponse& response, const std::string& fragment) {
  EXPECT_EQ(response.status, 400) << response.body;
  auto status = ParseJson(response.body);
  ASSERT_TRUE(status.ok()) << response.body;
  EXPECT_EQ((*status)["kind"], "Status");
  EXPECT_EQ((*status)["reason"], "BadRequest");
  EXPECT_EQ((*status)["code"], 400);
  const std::string message = (*status)["message"];
  EXPECT_EQ(message.rfind("the object provided is unrecognized (must be of type ConfigMap): ", 0), 0u) << message;
  EXPECT_NE(message.find(fragment), std::string::npos) << message;
}

TEST_F(HostileBodiesTest, ADeepBodyAndAnAliasBombAre400AndThePlaneKeepsServing) {
  ASSERT_TRUE(planes_->Ensure("acme", "dev").ok());
  auto client = Client();
  const std::string deep =
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"data":{"a":)" + NestedArrays(100'000) + "}}";
  const auto start = std::chrono::steady_clock::now();
  ExpectBadRequest(Post(*client, deep, "application/json"), "json parse error: the document nests deeper than 128");
  ExpectBadRequest(Post(*client, AliasBombConfigMap(), "application/yaml"),
                   "error converting YAML to JSON: the document expands excessively through aliases");
  ExpectBadRequest(Post(*client, "apiVersion: v1\nkind: ConfigMap\ndata: &a {b: [*a]}\n", "application/yaml"),
                   "an alias refers to a node that contains it");
  // A YAML string that is not UTF-8, and metadata that is not an object,
  // were 500s carrying nlohmann's exception text (found by
  // fuzz/kube_body_fuzzer.cc): a client's mistake is a 400.
  ExpectBadRequest(Post(*client, "apiVersion: v1\nkind: ConfigMap\ndata:\n  a: \"x\xac\"\n", "application/yaml"),
                   "a string is not valid UTF-8 at line 4");
  ExpectBadRequest(Post(*client, "apiVersion: v1\nkind: ConfigMap\nmetadata: 5\n", "application/yaml"),
                   "metadata must be an object");
  // Deep as YAML too, and through a patch.
  ExpectBadRequest(Post(*client, "data: " + NestedArrays(100'000), "application/yaml"), "nests deeper than 128");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);  // the bomb alone took 20 s

  // The plane still serves: a write and a list of the same kind.
  json fine = {{"apiVersion", "v1"},
               {"kind", "ConfigMap"},
               {"metadata", {{"name", "fine"}, {"namespace", "default"}}},
               {"data", {{"a", "1"}}}};
  ASSERT_TRUE(client->Create(kube::kConfigMaps, "default", fine).ok());
  auto patched = client->Patch(kube::kConfigMaps, "default", "fine", kube::PatchType::kMerge,
                               R"({"data":{"b":)" + NestedArrays(100'000) + "}}");
  ASSERT_FALSE(patched.ok());
  EXPECT_EQ(patched.status().code(), Code::kInvalidArgument) << patched.status().message();
  // DeleteOptions are a body too.
  auto deleted =
      client->Call({"DELETE", client->Path(kube::kConfigMaps, "default", "fine"),
                    R"({"kind":"DeleteOptions","preconditions":)" + NestedArrays(100'000) + "}", "application/json"},
                   /*idempotent=*/false);
  ASSERT_TRUE(deleted.ok()) << deleted.status().message();
  EXPECT_EQ(deleted->status, 400) << deleted->body;
  auto listed = client->ListAll(kube::kConfigMaps, "default");
  ASSERT_TRUE(listed.ok()) << listed.status().message();
  ASSERT_EQ(listed->items.size(), 1u);
  EXPECT_EQ(listed->items[0].Name(), "fine");
}

// L6: more than Kubernetes' 1 MiB of data is refused at the virtual side,
// as kube-apiserver refuses it, instead of being accepted and never copied.
TEST_F(HostileBodiesTest, AConfigMapOverOneMebibyteIsRefusedAsKubernetesRefusesIt) {
  ASSERT_TRUE(planes_->Ensure("acme", "dev").ok());
  auto client = Client();
  const auto config_map = [](std::size_t bytes) {
    return json{{"apiVersion", "v1"},
                {"kind", "ConfigMap"},
                {"metadata", {{"name", "big"}, {"namespace", "default"}}},
                {"data", {{"a", std::string(bytes, 'x')}}}};
  };
  auto refused = client->Create(kube::kConfigMaps, "default", config_map(1048577));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Code::kInvalidArgument);
  EXPECT_NE(
      refused.status().message().find(R"(ConfigMap "big" is invalid: []: Too long: must have at most 1048576 bytes)"),
      std::string::npos)
      << refused.status().message();
  EXPECT_TRUE(client->Create(kube::kConfigMaps, "default", config_map(1048576)).ok());
}

TEST_F(HostileBodiesTest, ObjectsStoredDeeperThanTheBoundAreNotServedAndDoNotStopAList) {
  ASSERT_TRUE(planes_->Ensure("acme", "dev").ok());
  {
    auto client = Client();
    ASSERT_TRUE(client
                    ->Create(kube::kConfigMaps, "default",
                             {{"apiVersion", "v1"},
                              {"kind", "ConfigMap"},
                              {"metadata", {{"name", "fine"}, {"namespace", "default"}}},
                              {"data", {{"a", "1"}}}})
                    .ok());
  }
  // What an older septad accepted and stored: 2,000 levels (it took 50,000).
  const core::VirtualClusterKey key{"acme", "dev"};
  auto version = store_.ResourceVersion(key);
  ASSERT_TRUE(version.ok() && version->has_value());
  const std::uint64_t next = **version + 1;
  const std::string deep =
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep","namespace":"default","uid":"u-deep",)"
      R"("resourceVersion":")" +
      std::to_string(next) + R"("},"data":{"a":)" + NestedArrays(2000) + "}}";
  ASSERT_TRUE(store_.PutObject(key, {"configmaps", "default", "deep", next, deep}, **version).ok());

  Restart();  // a septad restart loads the plane from the store
  auto client = Client();
  auto listed = client->ListAll(kube::kConfigMaps, "default");
  ASSERT_TRUE(listed.ok()) << listed.status().message();  // was: The JSON document was too deep
  ASSERT_EQ(listed->items.size(), 1u);
  EXPECT_EQ(listed->items[0].Name(), "fine");
  EXPECT_TRUE(listed->left_out.empty());
  EXPECT_EQ(client->Get(kube::kConfigMaps, "default", "deep").status().code(), Code::kNotFound);
  // An informer, as the syncer's, syncs.
  kube::Informer informer(*client, kube::kConfigMaps, "", {}, {});
  informer.Start();
  EXPECT_TRUE(informer.WaitForSync(10s)) << informer.last_list_error().ToString();
  informer.Stop();
  // An object of that name written now replaces the stored one.
  ASSERT_TRUE(client
                  ->Create(kube::kConfigMaps, "default",
                           {{"apiVersion", "v1"},
                            {"kind", "ConfigMap"},
                            {"metadata", {{"name", "deep"}, {"namespace", "default"}}},
                            {"data", {{"a", "2"}}}})
                  .ok());
  Restart();
  auto again = Client()->Get(kube::kConfigMaps, "default", "deep");
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ((*again)["data"]["a"], "2");
}

}  // namespace
}  // namespace septa::vcp
