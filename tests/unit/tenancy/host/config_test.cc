#include "tenancy/host/config.h"

#include <gtest/gtest.h>

namespace septa::tenancy::host {
namespace {

TEST(HostRenderConfig, PsaLevelsDefaultByTierAndAreConfigurablePerTier) {
  RenderConfig config;
  TrustTier tier;
  for (auto [gpu_tier, level] :
       {std::pair{gpu::Tier::kShared, "baseline"}, std::pair{gpu::Tier::kIsolated, "baseline"},
        std::pair{gpu::Tier::kDedicated, "restricted"}, std::pair{gpu::Tier::kExclusive, "restricted"}}) {
    tier.name = std::string(gpu::TierName(gpu_tier));
    tier.gpu_sharing = gpu_tier;
    EXPECT_EQ(PsaLevel(config, tier), level) << tier.name;
  }
  // An admin-defined tier follows its GPU sharing unless configured.
  tier.name = "partners";
  tier.gpu_sharing = gpu::Tier::kIsolated;
  EXPECT_EQ(PsaLevel(config, tier), "baseline");
  config.psa_levels["partners"] = "restricted";
  EXPECT_EQ(PsaLevel(config, tier), "restricted");
  tier.name = "shared";
  tier.gpu_sharing = gpu::Tier::kShared;
  EXPECT_EQ(PsaLevel(config, tier), "baseline");
}

TEST(HostRenderConfig, EveryBadFieldIsNamed) {
  EXPECT_TRUE(ValidateRenderConfig(RenderConfig{}).ok());
  struct Bad {
    RenderConfig config;
    std::string field;
  };
  std::vector<Bad> bad(9);
  bad[0].config.psa_levels["shared"] = "strict";
  bad[0].field = "psa_levels.shared";
  bad[1].config.virtual_api_address = "";
  bad[1].field = "virtual_api_address";
  bad[2].config.virtual_api_address = "api.example.com";
  bad[2].field = "virtual_api_address";
  bad[3].config.virtual_api_port = 0;
  bad[3].field = "virtual_api_port";
  bad[4].config.dns_port = 65536;
  bad[4].field = "dns_port";
  bad[5].config.field_manager = "";
  bad[5].field = "field_manager";
  bad[6].config.syncer_user = "";
  bad[6].field = "syncer_user";
  bad[7].config.default_request_memory_mib = 0;
  bad[7].field = "default_request_memory_mib";
  bad[8].config.syncer_user = "septa\nsyncer";
  bad[8].field = "syncer_user";
  for (const Bad& b : bad) {
    Status st = ValidateRenderConfig(b.config);
    ASSERT_EQ(st.code(), Code::kInvalidArgument) << b.field;
    ASSERT_EQ(st.violations().size(), 1u);
    EXPECT_EQ(st.violations()[0].field, b.field);
  }
}

TEST(HostRenderConfig, SchedulerNamesRoundTrip) {
  for (Scheduler s : {Scheduler::kDefault, Scheduler::kKai, Scheduler::kKueue}) {
    auto parsed = ParseScheduler("scheduler", SchedulerName(s));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, s);
  }
  auto bad = ParseScheduler("scheduler", "volcano");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "scheduler: must be one of kai, kueue, default");
}

}  // namespace
}  // namespace septa::tenancy::host
