#include "services/reconcile/informer_trigger.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <prometheus/registry.h>

#include "tests/support/fake_clock.h"
#include "tests/unit/services/kube/sim_fixture.h"
#include "tests/unit/services/reconcile/recording_reconciler.h"

namespace septa::reconcile {
namespace {

using namespace std::chrono_literals;
using kube::kConfigMaps;
using kube::testing::ConfigMap;
using ::testing::UnorderedElementsAre;

TEST(reconcileInformerTrigger, TheKeyOfAnObjectIsNamespaceSlashName) {
  EXPECT_EQ(ObjectKey({{"metadata", {{"namespace", "default"}, {"name", "a"}}}}), "default/a");
  EXPECT_EQ(ObjectKey({{"metadata", {{"name", "node-1"}}}}), "node-1") << "cluster-scoped";
  EXPECT_EQ(ObjectKey({{"metadata", {{"namespace", "default"}}}}), std::nullopt);
  EXPECT_EQ(ObjectKey({{"metadata", {{"name", 7}}}}), std::nullopt);
  EXPECT_EQ(ObjectKey({{"metadata", "x"}}), std::nullopt);
  EXPECT_EQ(ObjectKey(nlohmann::json::array()), std::nullopt);
}

class reconcileInformer : public kube::testing::SimTest {};

// A real informer on kubesim: adds, updates and deletes each enqueue the
// object's key, and the controller reconciles it.
TEST_F(reconcileInformer, InformerEventsEnqueueTheKeysOfTheirObjects) {
  ASSERT_TRUE(client_->Create(kConfigMaps, "default", ConfigMap("before")).ok());
  FakeClock clock;
  prometheus::Registry registry;
  testing::RecordingReconciler reconciler;
  Controller<std::string> controller({.name = "configmaps"}, reconciler, clock, registry);
  controller.Start();
  kube::Informer informer(*client_, kConfigMaps, "default", {}, EnqueueOnChange(controller));
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(10s));
  ASSERT_TRUE(reconciler.AwaitCalls([](const auto& calls) { return calls.size() >= 1; }));
  ASSERT_TRUE(controller.AwaitIdle(10s));
  EXPECT_THAT(reconciler.calls(), UnorderedElementsAre("default/before"));

  ASSERT_TRUE(client_->Create(kConfigMaps, "default", ConfigMap("after")).ok());
  ASSERT_TRUE(reconciler.AwaitCalls([](const auto& calls) { return calls.size() >= 2; }));
  ASSERT_TRUE(controller.AwaitIdle(10s));
  ASSERT_TRUE(client_->Patch(kConfigMaps, "default", "after", kube::PatchType::kMerge, R"({"data":{"a":"b"}})").ok());
  ASSERT_TRUE(reconciler.AwaitCalls([](const auto& calls) { return calls.size() >= 3; }));
  ASSERT_TRUE(controller.AwaitIdle(10s));
  ASSERT_TRUE(client_->Delete(kConfigMaps, "default", "before").ok());
  ASSERT_TRUE(reconciler.AwaitCalls([](const auto& calls) { return calls.size() >= 4; }));
  informer.Stop();
  controller.Stop();
  EXPECT_EQ(reconciler.calls(),
            (std::vector<std::string>{"default/before", "default/after", "default/after", "default/before"}));
}

}  // namespace
}  // namespace septa::reconcile
