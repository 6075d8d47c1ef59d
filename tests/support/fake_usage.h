// UsageRepository in memory (FakeStore), with the checks of
// migrations/0023_usage.sql that the contract tests check, and the same
// arithmetic: a scrape's rows are summed per bucket, then added to what the
// bucket holds.
#pragma once

#include "services/core/store.h"
#include "tests/support/fake_work.h"

namespace septa::core {

class FakeUsage final : public UsageRepository {
 public:
  explicit FakeUsage(FakeWork& w) : w_(w) {}
  Result<std::optional<TimePoint>> Cursor(const std::string& node) override;
  Status Record(const UsageScrapeBatch& batch) override;
  Result<std::vector<UsageIdleState>> IdleStates(const std::string& node) override;
  Result<std::vector<UsageIdleState>> AllIdleStates() override;
  Result<std::vector<UsageBucket>> Query(const UsageQuery& query) override;
  Result<std::vector<UsagePoolBucket>> QueryPool(const UsagePoolQuery& query) override;
  Result<std::vector<GpuPrice>> Prices() override;
  Status PutPrice(const GpuPrice& price) override;
  Result<int> DeleteMinutesBefore(TimePoint cutoff, int limit) override;

 private:
  FakeWork& w_;
};

}  // namespace septa::core
