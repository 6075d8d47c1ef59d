// Real-world virtual pods (fixtures/) translated for each tier and backend
// that matters, compared byte for byte with golden/ (regenerate:
// SEPTA_UPDATE_GOLDEN=1, see CMakeLists.txt).
#include <gtest/gtest.h>

#include "tests/support/golden.h"
#include "tests/unit/tenancy/sync/sample_views.h"

namespace septa::tenancy::sync {
namespace {

void ExpectGolden(const std::string& file, const std::string& text) {
  test::ExpectGolden(std::string(SEPTA_SYNC_TEST_DIR) + "/golden/" + file, text);
}

struct Case {
  std::string name;  // golden file suffix: <tier>-<backend>
  gpu::Tier tier;
  SyncSettings settings;
};

std::vector<Case> Cases() {
  SyncSettings kai;
  kai.virtual_api_host = "10.96.12.34";
  kai.virtual_api_port = 443;
  kai.dns_nameserver = "10.96.12.53";
  SyncSettings hami = kai;
  hami.scheduler = host::Scheduler::kDefault;
  hami.fraction_backend = FractionBackend::kHami;
  SyncSettings kueue = kai;
  kueue.scheduler = host::Scheduler::kKueue;
  SyncSettings plain = kai;
  plain.scheduler = host::Scheduler::kDefault;
  return {{"isolated-kai", gpu::Tier::kIsolated, kai},
          {"shared-kai", gpu::Tier::kShared, kai},
          {"shared-hami", gpu::Tier::kShared, hami},
          {"dedicated-kueue", gpu::Tier::kDedicated, kueue},
          {"exclusive-default", gpu::Tier::kExclusive, plain}};
}

TEST(SyncGolden, FixturesForEveryTierAndBackend) {
  for (const char* fixture : {"training-job", "inference-server"}) {
    const std::string text = test::ReadTestFile(std::string(SEPTA_SYNC_TEST_DIR) + "/fixtures/" + fixture + ".json");
    ASSERT_FALSE(text.empty()) << fixture;
    const nlohmann::json pod = nlohmann::json::parse(text);
    for (const Case& c : Cases()) {
      VirtualClusterView view = SampleView(c.tier);
      view.psa_level = "baseline";  // the fixtures are ordinary workloads, not hardened ones
      auto out = TranslatePodDown(c.settings, view, pod, {});
      ASSERT_TRUE(std::holds_alternative<HostPod>(out))
          << fixture << " " << c.name << ": " << std::get<Refusal>(out).field << ": " << std::get<Refusal>(out).message;
      ExpectGolden(std::string(fixture) + "-" + c.name + ".json", std::get<HostPod>(out).object.dump(2) + "\n");
    }
  }
}

}  // namespace
}  // namespace septa::tenancy::sync
