#include "tenancy/quota.h"

#include <gtest/gtest.h>

#include <string>

namespace septa::tenancy {
namespace {

WorkloadQuota Limits(std::int64_t cpu_milli, std::int64_t memory_mib, std::int64_t pods) {
  WorkloadQuota q;
  q.cpu_milli = cpu_milli;
  q.memory_mib = memory_mib;
  q.pods = pods;
  return q;
}

TEST(ValidateWorkloadQuota, ZeroIsNoLimitAndEachFieldIsBounded) {
  EXPECT_TRUE(ValidateWorkloadQuota(Limits(0, 0, 0)).ok());
  EXPECT_TRUE(ValidateWorkloadQuota(Limits(kMaxCpuMilli, kMaxMemoryMib, kMaxPods)).ok());
  const struct {
    WorkloadQuota quota;
    std::string field;
  } bad[] = {
      {Limits(-1, 0, 0), "quota.cpu_milli"},  {Limits(kMaxCpuMilli + 1, 0, 0), "quota.cpu_milli"},
      {Limits(0, -1, 0), "quota.memory_mib"}, {Limits(0, kMaxMemoryMib + 1, 0), "quota.memory_mib"},
      {Limits(0, 0, -1), "quota.pods"},       {Limits(0, 0, kMaxPods + 1), "quota.pods"},
  };
  for (const auto& b : bad) {
    Status st = ValidateWorkloadQuota(b.quota);
    ASSERT_FALSE(st.ok()) << b.field;
    EXPECT_EQ(st.code(), Code::kInvalidArgument);
    EXPECT_EQ(st.violations()[0].field, b.field);
  }
  EXPECT_EQ(ValidateWorkloadQuota(Limits(0, 0, -1)).violations()[0].description,
            "must be between 0 and 150000 (0: no limit), got -1");
}

TEST(ValidateTenantQuota, AbsentIsUnlimitedZeroAllowsNoneAndEachFieldIsBounded) {
  EXPECT_TRUE(ValidateTenantQuota("quota", TenantQuota{}).ok());
  TenantQuota zero{0, 0, 0, 0, 0};
  EXPECT_TRUE(ValidateTenantQuota("quota", zero).ok());
  TenantQuota negative;
  negative.pods = -3;
  Status st = ValidateTenantQuota("quota", negative);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.violations()[0].field, "quota.pods");
  TenantQuota huge;
  huge.gpu_milli = kMaxGpuMilli + 1;
  EXPECT_EQ(ValidateTenantQuota("tenant.quota", huge).violations()[0].field, "tenant.quota.gpu_milli");
  TenantQuota many;
  many.vclusters = kMaxVirtualClusters + 1;
  EXPECT_EQ(ValidateTenantQuota("quota", many).violations()[0].field, "quota.vclusters");
}

TEST(TenantUsage, OneVirtualClusterCountsItsLimitsAndItself) {
  TenantUsage total;
  total += UsageOf(1500, Limits(4000, 8192, 20));
  total += UsageOf(429, Limits(1000, 0, 5));
  EXPECT_EQ(total, (TenantUsage{1929, 5000, 8192, 25, 2}));
}

TEST(CheckTenantQuota, AnUnlimitedQuotaAdmitsAnything) {
  EXPECT_TRUE(
      CheckTenantQuota(TenantQuota{}, TenantUsage{9'000'000, 1, 1, 1, 9999}, UsageOf(4000, Limits(0, 0, 0))).ok());
}

TEST(CheckTenantQuota, AQuantityOverItsQuotaIsResourceExhaustedNamingItWithTheNumbers) {
  TenantQuota quota;
  quota.gpu_milli = 3000;
  const TenantUsage others = UsageOf(2000, Limits(0, 0, 0));
  EXPECT_TRUE(CheckTenantQuota(quota, others, UsageOf(1000, Limits(0, 0, 0))).ok());  // exactly fills it
  Status st = CheckTenantQuota(quota, others, UsageOf(2500, Limits(0, 0, 0)));
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), Code::kResourceExhausted);
  ASSERT_EQ(st.violations().size(), 1u);
  EXPECT_EQ(st.violations()[0].field, "tenant.quota.gpu_milli");
  EXPECT_EQ(st.message(), "tenant.quota.gpu_milli: 2.500 GPU-equivalents requested, 2.000 of 3.000 in use, 1.000 left");
}

TEST(CheckTenantQuota, EveryQuantityOverItsQuotaIsNamed) {
  const TenantQuota quota{4000, 8000, 65536, 100, 3};
  const TenantUsage others{1000, 6000, 60000, 90, 3};
  Status st = CheckTenantQuota(quota, others, UsageOf(3000, Limits(4000, 8192, 20)));  // GPUs fit exactly
  ASSERT_EQ(st.code(), Code::kResourceExhausted) << st.ToString();
  ASSERT_EQ(st.violations().size(), 4u) << st.ToString();
  EXPECT_EQ(st.violations()[0].field, "tenant.quota.cpu_milli");
  EXPECT_EQ(st.violations()[0].description, "4.000 CPUs requested, 6.000 of 8.000 in use, 2.000 left");
  EXPECT_EQ(st.violations()[1].field, "tenant.quota.memory_mib");
  EXPECT_EQ(st.violations()[1].description, "8192 MiB requested, 60000 of 65536 in use, 5536 left");
  EXPECT_EQ(st.violations()[2].description, "20 pods requested, 90 of 100 in use, 10 left");
  EXPECT_EQ(st.violations()[3].field, "tenant.quota.vclusters");
  EXPECT_EQ(st.violations()[3].description, "1 virtual cluster requested, 3 of 3 in use, 0 left");
}

TEST(CheckTenantQuota, ZeroAllowsNothing) {
  TenantQuota frozen;
  frozen.vclusters = 0;
  Status st = CheckTenantQuota(frozen, TenantUsage{}, UsageOf(500, Limits(0, 0, 0)));
  ASSERT_EQ(st.code(), Code::kResourceExhausted);
  EXPECT_EQ(st.violations()[0].description, "1 virtual cluster requested, 0 of 0 in use, 0 left");
}

TEST(CheckTenantQuota, ABoundedQuantityNeedsALimitOnTheVirtualCluster) {
  TenantQuota quota;
  quota.cpu_milli = 8000;
  quota.pods = 100;
  Status st = CheckTenantQuota(quota, TenantUsage{}, UsageOf(1000, Limits(0, 4096, 0)));
  ASSERT_EQ(st.code(), Code::kFailedPrecondition) << st.ToString();
  ASSERT_EQ(st.violations().size(), 2u);
  EXPECT_EQ(st.violations()[0].field, "quota.cpu_milli");
  EXPECT_EQ(st.violations()[0].description, "must be set: the tenant's quota allows 8.000 CPUs in all");
  EXPECT_EQ(st.violations()[1].field, "quota.pods");
  EXPECT_TRUE(CheckTenantQuota(quota, TenantUsage{}, UsageOf(1000, Limits(2000, 0, 10))).ok());
}

TEST(CheckTenantQuota, AResizeIsCheckedOnlyOnWhatItGrows) {
  TenantQuota quota{2000, 4000, std::nullopt, std::nullopt, 2};
  // The admin lowered the quota below what the tenant holds: 2 GPUs and 3 clusters elsewhere.
  const TenantUsage others{2000, 3000, 0, 0, 2};
  const TenantUsage before = UsageOf(1000, Limits(1000, 0, 0));
  // Shrinking GPUs, same CPU, same one cluster: nothing grows, nothing is refused.
  EXPECT_TRUE(CheckTenantQuota(quota, others, UsageOf(500, Limits(1000, 0, 0)), &before).ok());
  // Growing CPU past the quota is refused on CPU alone.
  Status st = CheckTenantQuota(quota, others, UsageOf(500, Limits(1500, 0, 0)), &before);
  ASSERT_EQ(st.code(), Code::kResourceExhausted);
  ASSERT_EQ(st.violations().size(), 1u);
  EXPECT_EQ(st.violations()[0].field, "tenant.quota.cpu_milli");
  EXPECT_EQ(st.violations()[0].description, "1.500 CPUs requested, 3.000 of 4.000 in use, 1.000 left");
  // Dropping a CPU limit is growing it without bound.
  Status unbounded = CheckTenantQuota(quota, others, UsageOf(500, Limits(0, 0, 0)), &before);
  ASSERT_EQ(unbounded.code(), Code::kFailedPrecondition);
  EXPECT_EQ(unbounded.violations()[0].field, "quota.cpu_milli");
  // Setting a limit where there was none shrinks it, however large the limit.
  const TenantUsage unlimited_before = UsageOf(1000, Limits(0, 0, 0));
  EXPECT_TRUE(CheckTenantQuota(quota, others, UsageOf(1000, Limits(3500, 0, 0)), &unlimited_before).ok());
  // Growing GPUs where the others already use the whole quota: none left.
  Status gpus = CheckTenantQuota(quota, others, UsageOf(1500, Limits(1000, 0, 0)), &before);
  ASSERT_EQ(gpus.code(), Code::kResourceExhausted);
  EXPECT_EQ(gpus.violations()[0].description, "1.500 GPU-equivalents requested, 2.000 of 2.000 in use, 0.000 left");
}

}  // namespace
}  // namespace septa::tenancy
