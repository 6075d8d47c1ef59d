// Acting on hoarders (core::HoardingActor) on the FakeStore, through the
// accounting's idle runs: a hoarder is flagged at its tier's threshold with
// a condition that says why, put to sleep once its tier's grace period has
// passed (only when the tier opts in; audited), unflagged when used again or
// no longer measured, and never touches a virtual cluster that is not one
// or that another replica owns.
#include <gtest/gtest.h>

#include "services/core/usage_hoarding.h"
#include "tenancy/usage/hoarding_action.h"
#include "tests/unit/services/core/usage_fixture.h"

namespace septa::core {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

class UsageHoardingTest : public UsageTest {
 protected:
  static HoardingSettings Settings(std::map<std::string, seconds> sleep_after) {
    return {.thresholds = {.dedicated = seconds(120)},
            .idle_stale_after = seconds(120),
            .sleep_after = std::move(sleep_after)};
  }

  HoardingPass MustPass(HoardingActor& actor) {
    auto pass = actor.RunOnce([](const tenancy::VirtualClusterRef&) { return true; });
    EXPECT_TRUE(pass.ok()) << pass.status().ToString();
    return pass.ok() ? *pass : HoardingPass{};
  }

  tenancy::VirtualCluster Stored(const std::string& tenant) {
    tenancy::VirtualCluster vc;
    EXPECT_TRUE(store
                    .Transact(TxMode::kReadOnly,
                              [&](Tx& tx) -> Status {
                                SEPTA_ASSIGN_OR_RETURN(vc, tx.VirtualClusters().Get(tenant, "train"));
                                return Status::Ok();
                              })
                    .ok());
    return vc;
  }

  static const tenancy::Condition* HoardingOf(const tenancy::VirtualCluster& vc) {
    return tenancy::FindCondition(vc.conditions, tenancy::usage::kHoarding);
  }

  std::vector<AuditRecord> AuditOf(const std::string& tenant) {
    std::vector<AuditRecord> records;
    EXPECT_TRUE(store
                    .Transact(TxMode::kReadOnly,
                              [&](Tx& tx) -> Status {
                                SEPTA_ASSIGN_OR_RETURN(
                                    records, tx.Audit().List(tenancy::VirtualClusterResource(tenant, "train"), 100));
                                return Status::Ok();
                              })
                    .ok());
    return records;
  }
};

TEST_F(UsageHoardingTest, AHoarderIsFlaggedAtItsThresholdWithWhyAndWhenItWillSleep) {
  HoardingActor actor(store, clock, Settings({{"dedicated", minutes(5)}}));
  Run(minutes(1), 0.5);
  EXPECT_EQ(MustPass(actor).flagged, 0) << "beta has idled under the 120 s threshold";
  EXPECT_EQ(HoardingOf(Stored("beta")), nullptr) << "no condition on a virtual cluster never flagged";

  Run(minutes(2), 0.5);
  const HoardingPass pass = MustPass(actor);
  EXPECT_EQ(pass.hoarders, 1);
  EXPECT_EQ(pass.flagged, 1);
  ASSERT_EQ(pass.flagged_now.size(), 1u);
  EXPECT_EQ(pass.flagged_now[0].hoarder.holder.tenant, "beta");
  const tenancy::VirtualCluster beta = Stored("beta");
  const tenancy::Condition* flagged = HoardingOf(beta);
  ASSERT_NE(flagged, nullptr);
  EXPECT_EQ(flagged->status, tenancy::ConditionStatus::kTrue);
  EXPECT_EQ(flagged->reason, "IdleHoldingMemory");
  EXPECT_EQ(flagged->last_transition_time, Now(clock));
  EXPECT_NE(flagged->message.find("put to sleep at " + FormatRfc3339(Now(clock) + minutes(5))), std::string::npos)
      << flagged->message;
  EXPECT_EQ(HoardingOf(Stored("acme")), nullptr) << "acme computes";

  Run(minutes(1), 0.5);
  const HoardingPass again = MustPass(actor);
  EXPECT_EQ(again.flagged + again.unflagged + again.slept, 0);
  EXPECT_EQ(Stored("beta").version, beta.version) << "a flagged virtual cluster is not rewritten at every pass";
}

TEST_F(UsageHoardingTest, AfterItsTiersGracePeriodItIsPutToSleepAuditedAndToldWhy) {
  HoardingActor actor(store, clock, Settings({{"dedicated", minutes(5)}}));
  Run(minutes(3), 0.5);
  ASSERT_EQ(MustPass(actor).flagged, 1);
  const TimePoint flagged_at = Now(clock);
  Run(minutes(4), 0.5);
  EXPECT_EQ(MustPass(actor).slept, 0) << "4 of the 5 minutes of grace";
  Run(minutes(1), 0.5);
  ASSERT_GE(Now(clock), flagged_at + minutes(5));
  const tenancy::VirtualCluster acme_before = Stored("acme");
  EXPECT_EQ(MustPass(actor).slept, 1);

  const tenancy::VirtualCluster beta = Stored("beta");
  EXPECT_EQ(beta.state, tenancy::VirtualClusterState::kSleeping);
  const tenancy::Condition* why = HoardingOf(beta);
  ASSERT_NE(why, nullptr);
  EXPECT_EQ(why->status, tenancy::ConditionStatus::kFalse);
  EXPECT_EQ(why->reason, "PutToSleep");
  EXPECT_NE(why->message.find("septactl vcluster wake train --tenant beta"), std::string::npos) << why->message;
  const std::vector<AuditRecord> audit = AuditOf("beta");
  ASSERT_FALSE(audit.empty());
  EXPECT_EQ(audit.front().action, "vcluster.sleep_idle");
  EXPECT_EQ(audit.front().principal, "system:usage");

  const tenancy::VirtualCluster acme_after = Stored("acme");
  EXPECT_EQ(acme_after.version, acme_before.version) << "the tenant that computes is untouched";
  EXPECT_EQ(acme_after.state, tenancy::VirtualClusterState::kReady);

  Run(minutes(1), 0.5);
  const HoardingPass asleep = MustPass(actor);
  EXPECT_EQ(asleep.flagged + asleep.unflagged + asleep.slept, 0) << "a sleeping virtual cluster is left alone";
}

TEST_F(UsageHoardingTest, ATierThatDoesNotOptInIsFlaggedButNeverSlept) {
  HoardingActor actor(store, clock, Settings({{"shared", minutes(1)}}));  // beta's tier is dedicated
  Run(minutes(3), 0.5);
  ASSERT_EQ(MustPass(actor).flagged, 1);
  Run(minutes(30), 0.5);
  EXPECT_EQ(MustPass(actor).slept, 0);
  const tenancy::VirtualCluster beta = Stored("beta");
  EXPECT_EQ(beta.state, tenancy::VirtualClusterState::kReady);
  ASSERT_NE(HoardingOf(beta), nullptr);
  EXPECT_NE(HoardingOf(beta)->message.find("trust tier dedicated does not put idle virtual clusters to sleep"),
            std::string::npos);
}

TEST_F(UsageHoardingTest, UsedAgainOrNoLongerMeasuredItIsUnflagged) {
  HoardingActor actor(store, clock, Settings({}));
  Run(minutes(3), 0.0);  // acme idles too, without memory
  ASSERT_EQ(MustPass(actor).flagged, 2);
  EXPECT_EQ(HoardingOf(Stored("acme"))->reason, "Idle");

  Run(minutes(1), 0.5);
  EXPECT_EQ(MustPass(actor).unflagged, 1);
  const tenancy::VirtualCluster acme_now = Stored("acme");
  const tenancy::Condition* acme = HoardingOf(acme_now);
  ASSERT_NE(acme, nullptr);
  EXPECT_EQ(acme->status, tenancy::ConditionStatus::kFalse);
  EXPECT_EQ(acme->reason, "InUse");

  clock.Advance(minutes(5));  // nobody scrapes any more: unknown is never idle
  EXPECT_EQ(MustPass(actor).unflagged, 1);
  EXPECT_EQ(HoardingOf(Stored("beta"))->status, tenancy::ConditionStatus::kFalse);
}

TEST_F(UsageHoardingTest, AReplicaActsOnlyOnTheVirtualClustersItsShardsHold) {
  HoardingActor actor(store, clock, Settings({{"dedicated", minutes(1)}}));
  Run(minutes(3), 0.0);
  auto pass = actor.RunOnce([](const tenancy::VirtualClusterRef& ref) { return ref.tenant == "acme"; });
  ASSERT_TRUE(pass.ok());
  EXPECT_EQ(pass->hoarders, 2);
  EXPECT_EQ(pass->flagged, 1);
  EXPECT_NE(HoardingOf(Stored("acme")), nullptr);
  EXPECT_EQ(HoardingOf(Stored("beta")), nullptr) << "beta's shard is another replica's";
}

}  // namespace
}  // namespace septa::core
