#include "tenancy/validation.h"

#include <gtest/gtest.h>

#include <string>

namespace septa::tenancy {
namespace {

QueueSettings Queue(int priority, int weight) {
  QueueSettings q;
  q.priority = priority;
  q.over_quota_weight = weight;
  return q;
}

TEST(ValidateQueueSettings, PriorityAndWeightStayInTheRangesBothSchedulersShare) {
  EXPECT_TRUE(ValidateQueueSettings(QueueSettings{}).ok());  // KAI's defaults: 100 and 1
  EXPECT_TRUE(ValidateQueueSettings(Queue(kMinPriority, 0)).ok());
  EXPECT_TRUE(ValidateQueueSettings(Queue(kMaxPriority, kMaxOverQuotaWeight)).ok());
  const struct {
    QueueSettings queue;
    std::string field;
  } bad[] = {
      {Queue(-1, 1), "queue.priority"},
      {Queue(kMaxPriority + 1, 1), "queue.priority"},
      {Queue(100, -1), "queue.over_quota_weight"},
      {Queue(100, kMaxOverQuotaWeight + 1), "queue.over_quota_weight"},
  };
  for (const auto& b : bad) {
    Status st = ValidateQueueSettings(b.queue);
    ASSERT_FALSE(st.ok()) << b.field;
    EXPECT_EQ(st.code(), Code::kInvalidArgument);
    EXPECT_EQ(st.violations()[0].field, b.field);
  }
  EXPECT_EQ(ValidateQueueSettings(Queue(1001, 1)).message(), "queue.priority: must be between 0 and 1000, got 1001");
}

VirtualCluster Valid() {
  VirtualCluster vc;
  vc.tenant = "acme";
  vc.name = "train";
  vc.display_name = "Training";
  vc.capacity.tier = gpu::Tier::kIsolated;
  vc.capacity.mig = {{"3g.40gb", 2, ""}};
  vc.quota.cpu_milli = 8000;
  return vc;
}

TEST(ValidateVirtualClusterSpec, ChecksEveryFieldAClientWrites) {
  const gpu::Catalog& catalog = gpu::Catalog::Default();
  EXPECT_TRUE(ValidateVirtualClusterSpec(Valid(), gpu::Tier::kIsolated, catalog).ok());

  VirtualCluster bad_name = Valid();
  bad_name.name = "Train!";
  EXPECT_EQ(ValidateVirtualClusterSpec(bad_name, gpu::Tier::kIsolated, catalog).violations()[0].field, "name");
  VirtualCluster bad_display = Valid();
  bad_display.display_name = "a\nb";
  EXPECT_EQ(ValidateVirtualClusterSpec(bad_display, gpu::Tier::kIsolated, catalog).violations()[0].field,
            "display_name");
  VirtualCluster bad_quota = Valid();
  bad_quota.quota.pods = -1;
  EXPECT_EQ(ValidateVirtualClusterSpec(bad_quota, gpu::Tier::kIsolated, catalog).violations()[0].field, "quota.pods");
  VirtualCluster bad_queue = Valid();
  bad_queue.queue.priority = 5000;
  EXPECT_EQ(ValidateVirtualClusterSpec(bad_queue, gpu::Tier::kIsolated, catalog).violations()[0].field,
            "queue.priority");
  VirtualCluster bad_capacity = Valid();
  bad_capacity.capacity.mig[0].count = 0;
  EXPECT_EQ(ValidateVirtualClusterSpec(bad_capacity, gpu::Tier::kIsolated, catalog).violations()[0].field,
            "capacity.mig[0].count");
  Status wrong_tier = ValidateVirtualClusterSpec(Valid(), gpu::Tier::kDedicated, catalog);
  EXPECT_EQ(wrong_tier.code(), Code::kFailedPrecondition);
  EXPECT_EQ(wrong_tier.violations()[0].field, "capacity.mig");
  // A malformed field is reported as such even when the capacity is also of the wrong kind.
  EXPECT_EQ(ValidateVirtualClusterSpec(bad_queue, gpu::Tier::kDedicated, catalog).code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace septa::tenancy
