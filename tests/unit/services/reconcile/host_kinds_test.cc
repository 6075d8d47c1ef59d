// Which virtual cluster a host object belongs to, and when applying an
// object would change nothing.
#include "services/reconcile/host_kinds.h"

#include <gtest/gtest.h>

namespace septa::reconcile {
namespace {

using nlohmann::json;

TEST(reconcileHostKinds, AnObjectLeadsBackToItsVirtualClusterOnlyByAllOfSeptasLabels) {
  const json labels = {
      {"app.kubernetes.io/managed-by", "septa"}, {"septa.dev/tenant", "ann"}, {"septa.dev/vcluster", "train"}};
  EXPECT_EQ(VClusterKeyOf({{"metadata", {{"labels", labels}}}}), (tenancy::VirtualClusterRef{"ann", "train"}));
  json foreign = labels;
  foreign["app.kubernetes.io/managed-by"] = "helm";
  EXPECT_EQ(VClusterKeyOf({{"metadata", {{"labels", foreign}}}}), std::nullopt);
  EXPECT_EQ(VClusterKeyOf({{"metadata",
                            {{"labels", {{"app.kubernetes.io/managed-by", "septa"}, {"septa.dev/shared", "true"}}}}}}),
            std::nullopt)
      << "shared objects belong to nobody";
  EXPECT_EQ(VClusterKeyOf({{"metadata", {{"name", "x"}}}}), std::nullopt);
  EXPECT_EQ(VClusterKeyOf(json::array()), std::nullopt);
  EXPECT_EQ(VClusterSelector("ann", "train"),
            "app.kubernetes.io/managed-by=septa,septa.dev/tenant=ann,septa.dev/vcluster=train");
}

TEST(reconcileHostKinds, CoversWhenEveryRenderedFieldHasItsValue) {
  const json desired = {{"metadata", {{"name", "q"}, {"labels", {{"a", "1"}}}}}, {"spec", {{"hard", {{"pods", "5"}}}}}};
  json live = desired;
  live["metadata"]["resourceVersion"] = "7";
  live["metadata"]["labels"]["other"] = "x";
  live["status"] = {{"used", {{"pods", "1"}}}};
  EXPECT_TRUE(Covers(live, desired)) << "fields the server or others added do not count";
  live["spec"]["hard"]["pods"] = "6";
  EXPECT_FALSE(Covers(live, desired));
  live = desired;
  live["metadata"]["labels"].erase("a");
  EXPECT_FALSE(Covers(live, desired));
  EXPECT_FALSE(Covers(json{{"list", {1, 2, 3}}}, json{{"list", {1, 2}}})) << "lists are compared whole";
  const json containers = {{"containers", json::array({{{"name", "a"}, {"image", "x"}}})}};
  json defaulted = containers;
  defaulted["containers"][0]["terminationMessagePath"] = "/dev/termination-log";
  EXPECT_TRUE(Covers(defaulted, containers)) << "fields the server defaults inside list elements do not count";
  defaulted["containers"][0]["image"] = "y";
  EXPECT_FALSE(Covers(defaulted, containers));
}

TEST(reconcileHostKinds, UpToDateUnlessApplyingWouldRemoveAFieldTheManagerApplied) {
  const json desired = {{"metadata", {{"name", "q"}}}, {"spec", {{"hard", {{"cpu", "4"}}}}}};
  json live = desired;
  live["spec"]["hard"]["pods"] = "30";
  EXPECT_TRUE(UpToDate(live, desired, "septa")) << "nobody's field: apply leaves it";
  live["metadata"]["managedFields"] = json::array(
      {{{"manager", "septa"},
        {"operation", "Apply"},
        {"fieldsType", "FieldsV1"},
        {"fieldsV1", {{"f:spec", {{"f:hard", {{"f:cpu", json::object()}, {"f:pods", json::object()}}}}}}}}});
  EXPECT_FALSE(UpToDate(live, desired, "septa")) << "septa applied pods before: apply removes it now";
  EXPECT_TRUE(UpToDate(live, desired, "someone-else"));
  live["metadata"]["managedFields"][0]["operation"] = "Update";
  EXPECT_TRUE(UpToDate(live, desired, "septa")) << "only what the manager applied is removed by its apply";
  live["metadata"]["managedFields"][0]["operation"] = "Apply";
  json more = desired;
  more["spec"]["hard"]["pods"] = "30";
  EXPECT_TRUE(UpToDate(live, more, "septa"));
  more["spec"]["hard"]["pods"] = "31";
  EXPECT_FALSE(UpToDate(live, more, "septa")) << "and a changed value, as Covers";
}

TEST(reconcileHostKinds, AChangeOfStatusAloneIsNoReasonToReconcile) {
  const json before = {{"metadata", {{"name", "q"}, {"resourceVersion", "7"}, {"labels", {{"a", "1"}}}}},
                       {"spec", {{"hard", {{"pods", "30"}}}}},
                       {"status", {{"used", {{"pods", "0"}}}}}};
  json after = before;
  after["status"]["used"]["pods"] = "2";
  after["metadata"]["resourceVersion"] = "8";
  after["metadata"]["managedFields"] = json::array({{{"manager", "quota-controller"}}});
  EXPECT_FALSE(ChangedBeyondStatus(before, after));
  json relabelled = after;
  relabelled["metadata"]["labels"]["a"] = "2";
  EXPECT_TRUE(ChangedBeyondStatus(before, relabelled));
  json respecced = after;
  respecced["spec"]["hard"]["pods"] = "31";
  EXPECT_TRUE(ChangedBeyondStatus(before, respecced));
}

TEST(reconcileHostKinds, KindsPerSchedulerAndTheirResources) {
  EXPECT_EQ(ManagedHostKinds(tenancy::host::Scheduler::kDefault).size(), 7u);
  EXPECT_EQ(ManagedHostKinds(tenancy::host::Scheduler::kKai).back().kind, "Queue");
  EXPECT_EQ(ManagedHostKinds(tenancy::host::Scheduler::kKueue).size(), 11u);
  auto queue = ResourceOfKind("scheduling.run.ai/v2", "Queue");
  ASSERT_TRUE(queue.has_value());
  EXPECT_EQ(queue->resource, "queues");
  EXPECT_FALSE(queue->namespaced);
  EXPECT_FALSE(ResourceOfKind("scheduling.run.ai/v1", "Queue").has_value()) << "the version must match";
  EXPECT_TRUE(ResourceOfKind("kueue.x-k8s.io/v1beta2", "LocalQueue")->namespaced);
}

}  // namespace
}  // namespace septa::reconcile
