// Every trust tier under every scheduler, rendered and compared byte for
// byte with golden/ (regenerate: SEPTA_UPDATE_GOLDEN=1, see CMakeLists.txt).
#include <gtest/gtest.h>

#include <algorithm>

#include "tenancy/host/render.h"
#include "tests/support/golden.h"
#include "tests/unit/tenancy/host/sample_inputs.h"

namespace septa::tenancy::host {
namespace {

// Compares `text` with golden/<file>, or writes it there when SEPTA_UPDATE_GOLDEN is set.
void ExpectGolden(const std::string& file, const std::string& text) {
  test::ExpectGolden(std::string(SEPTA_HOST_GOLDEN_DIR) + "/" + file, text);
}

std::string Serialized(const nlohmann::json& j) { return j.dump(2) + "\n"; }

TEST(HostGolden, EveryTierUnderEveryScheduler) {
  for (const SampleCase& c : SampleCases()) {
    for (Scheduler scheduler : {Scheduler::kDefault, Scheduler::kKai, Scheduler::kKueue}) {
      RenderConfig config;
      config.scheduler = scheduler;
      auto rendered = RenderHostObjects(c.tier, c.vcluster, c.reservation, SampleNodes(), config);
      ASSERT_TRUE(rendered.ok()) << c.name << ": " << rendered.status().message();
      ExpectGolden(c.name + "-" + std::string(SchedulerName(scheduler)) + ".json", Serialized(ObjectList(*rendered)));
      if (scheduler == Scheduler::kDefault && !rendered->node_patches.empty()) {
        ExpectGolden(c.name + "-nodes.json", Serialized(NodePatchesJson(rendered->node_patches)));
      }
    }
  }
}

TEST(HostGolden, SameInputsGiveTheSameBytesWhateverTheRowOrder) {
  for (SampleCase c : SampleCases()) {
    RenderConfig config;
    config.scheduler = Scheduler::kKueue;
    auto first = RenderHostObjects(c.tier, c.vcluster, c.reservation, SampleNodes(), config);
    ASSERT_TRUE(first.ok()) << first.status().message();
    Reservation& r = c.reservation;
    std::reverse(r.shares.begin(), r.shares.end());
    std::reverse(r.mig.begin(), r.mig.end());
    std::reverse(r.gpus.begin(), r.gpus.end());
    std::reverse(r.nodes.begin(), r.nodes.end());
    auto nodes = SampleNodes();
    std::reverse(nodes.begin(), nodes.end());
    auto second = RenderHostObjects(c.tier, c.vcluster, r, nodes, config);
    ASSERT_TRUE(second.ok()) << second.status().message();
    EXPECT_EQ(Serialized(ObjectList(*first)), Serialized(ObjectList(*second))) << c.name;
    EXPECT_EQ(first->node_patches, second->node_patches) << c.name;
  }
}

}  // namespace
}  // namespace septa::tenancy::host
