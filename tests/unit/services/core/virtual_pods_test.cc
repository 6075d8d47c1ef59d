// Why a virtual pod does not run, as the portal shows it
// (services/core/virtual_pods.h): the deciding reason from the pod itself,
// and the list of one virtual cluster's pods, paged, for its tenant only.
#include "services/core/virtual_pods.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/fake_virtual_object_store.h"
#include "tests/unit/services/core/core_fixture.h"

namespace septa::core {
namespace {

using nlohmann::json;

json Pod(const std::string& ns, const std::string& name, json status) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"namespace", ns}, {"name", name}, {"creationTimestamp", "2026-11-29T10:00:00Z"}}},
          {"status", std::move(status)}};
}

json Refused() {
  return {{"phase", "Pending"},
          {"conditions",
           {{{"type", "PodScheduled"},
             {"status", "False"},
             {"reason", "SyncRefused"},
             {"message", "spec.hostNetwork: a tenant's pod may not use the host's network"},
             {"lastTransitionTime", "2026-11-29T10:00:01Z"}}}}};
}

TEST(VirtualPod, TheDecidingReasonComesFromThePodItself) {
  auto refused = DescribeVirtualPod(Pod("default", "web", Refused()).dump());
  ASSERT_TRUE(refused.ok()) << refused.status().ToString();
  EXPECT_EQ(refused->reason, "SyncRefused");
  EXPECT_THAT(refused->message, ::testing::HasSubstr("hostNetwork"));
  EXPECT_EQ(refused->since, "2026-11-29T10:00:01Z");
  EXPECT_EQ(refused->create_time, "2026-11-29T10:00:00Z");
  EXPECT_FALSE(refused->Running());

  const json unschedulable = {
      {"phase", "Pending"},
      {"conditions",
       {{{"type", "Ready"}, {"status", "False"}},
        {{"type", "PodScheduled"}, {"status", "False"}, {"reason", "Unschedulable"}, {"message", "0/3 nodes"}}}}};
  EXPECT_EQ(DescribeVirtualPod(Pod("a", "b", unschedulable).dump())->reason, "Unschedulable");

  const json pulling = {
      {"phase", "Pending"},
      {"conditions", {{{"type", "PodScheduled"}, {"status", "True"}}}},
      {"containerStatuses",
       {{{"name", "main"}, {"state", {{"waiting", {{"reason", "ImagePullBackOff"}, {"message", "no such image"}}}}}}}}};
  auto backoff = DescribeVirtualPod(Pod("a", "b", pulling).dump());
  EXPECT_EQ(backoff->reason, "ImagePullBackOff");
  EXPECT_EQ(backoff->message, "no such image");

  const json failed = {{"phase", "Failed"}, {"reason", "Evicted"}, {"message", "low on memory"}};
  EXPECT_EQ(DescribeVirtualPod(Pod("a", "b", failed).dump())->reason, "Evicted");

  auto running = DescribeVirtualPod(Pod("a", "b", {{"phase", "Running"}}).dump());
  EXPECT_TRUE(running->Running());
  EXPECT_EQ(running->reason, "");
  EXPECT_EQ(DescribeVirtualPod(Pod("a", "b", json::object()).dump())->phase, "Pending");
}

// A tenant stores what it likes: odd shapes describe what they can, and
// what is not a pod at all is an error, never a crash.
TEST(VirtualPod, OddBodiesAreReadSafely) {
  EXPECT_FALSE(DescribeVirtualPod("[]").ok());
  EXPECT_FALSE(DescribeVirtualPod("{\"metadata\": 5}").ok());
  EXPECT_FALSE(DescribeVirtualPod(std::string(5000, '[') + std::string(5000, ']')).ok());
  const json odd = {{"metadata", {{"name", "x"}}},
                    {"status", {{"phase", 7}, {"conditions", "no"}, {"containerStatuses", {{{"state", 1}}}}}}};
  auto read = DescribeVirtualPod(odd.dump());
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->phase, "Pending");
}

class VirtualPodServiceTest : public CoreTest {
 protected:
  VirtualPodServiceTest() : pods(store, objects, true) {}

  void SetUp() override {
    MustCreate("acme", "dedicated");
    MustCreate("beta");
    tenancy::VirtualCluster vc;
    vc.tenant = "acme";
    vc.name = "train";
    ASSERT_TRUE(store.Transact(TxMode::kReadWrite, [&](Tx& tx) { return tx.VirtualClusters().Insert(vc); }).ok());
    const tenancy::VirtualClusterRef key{"acme", "train"};
    ASSERT_TRUE(objects.CreateControlPlane(key, {}).ok());
    std::uint64_t version = 0;
    auto put = [&](const std::string& type, const std::string& ns, const std::string& name, const json& body) {
      ASSERT_TRUE(objects.PutObject(key, {type, ns, name, version + 1, body.dump()}, version).ok());
      ++version;
    };
    put("pods", "default", "web", Pod("default", "web", Refused()));
    put("pods", "default", "api", Pod("default", "api", {{"phase", "Running"}}));
    put("pods", "a-b", "job", Pod("a-b", "job", {{"phase", "Pending"}}));
    put("pods", "a", "z", Pod("a", "z", {{"phase", "Pending"}}));
    put("configmaps", "default", "cfg", {{"data", {{"k", "v"}}}});
    put("pods", "default", "junk", json::array());
  }

  std::vector<std::string> Names(const VirtualPodPage& page) {
    std::vector<std::string> out;
    for (const auto& p : page.pods) out.push_back(p.ns + "/" + p.name);
    return out;
  }

  test::FakeVirtualObjectStore objects;
  VirtualPodService pods;
};

TEST_F(VirtualPodServiceTest, ListsTheClustersPodsInOrderAndPages) {
  auto all = pods.List(TenantCtx("acme", Role::kViewer), "acme", "train", {});
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_THAT(Names(*all), ::testing::ElementsAre("a/z", "a-b/job", "default/api", "default/web"));
  auto waiting = pods.List(TenantCtx("acme"), "acme", "train", {.not_running = true});
  EXPECT_THAT(Names(*waiting), ::testing::ElementsAre("a/z", "a-b/job", "default/web"));
  EXPECT_EQ(waiting->pods.back().reason, "SyncRefused");

  std::vector<std::string> paged;
  std::string token;
  int pages = 0;
  do {
    auto page = pods.List(Admin(), "acme", "train", {.page_size = 1, .page_token = token});
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    for (const auto& name : Names(*page)) paged.push_back(name);
    token = page->next_page_token;
  } while (!token.empty() && ++pages < 10);
  EXPECT_EQ(paged, Names(*all));
}

TEST_F(VirtualPodServiceTest, OnlyItsTenantAndAdminsSeeThem) {
  EXPECT_EQ(pods.List(TenantCtx("beta"), "acme", "train", {}).status().code(), Code::kNotFound);
  EXPECT_EQ(pods.List(TenantCtx("acme"), "acme", "nope", {}).status().code(), Code::kNotFound);
  EXPECT_EQ(pods.List(TenantCtx("acme"), "acme", "Bad_Name", {}).status().code(), Code::kNotFound);
  EXPECT_EQ(pods.List(TenantCtx("acme"), "acme", "train", {.page_size = 501}).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(pods.List(TenantCtx("acme"), "acme", "train", {.page_token = "garbage"}).status().code(),
            Code::kInvalidArgument);
  VirtualPodService on_host(store, objects, false);
  EXPECT_EQ(on_host.List(TenantCtx("acme"), "acme", "train", {}).status().code(), Code::kFailedPrecondition);
}

}  // namespace
}  // namespace septa::core
