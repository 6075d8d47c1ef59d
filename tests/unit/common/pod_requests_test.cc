// A pod's effective amounts as kube-scheduler counts them (KEP-753's
// examples): containers and sidecars add up, a plain init container counts
// with the sidecars started before it.
#include "common/pod_requests.h"

#include <gtest/gtest.h>

namespace septa {
namespace {

using Amounts = std::map<std::string, long long>;

ContainerAmounts<long long> C(ContainerRole role, Amounts amounts) { return {role, std::move(amounts)}; }

constexpr ContainerRole kContainer = ContainerRole::kContainer;
constexpr ContainerRole kInit = ContainerRole::kInit;
constexpr ContainerRole kSidecar = ContainerRole::kSidecar;

TEST(PodRequests, RolesFollowTheListAndRestartPolicy) {
  EXPECT_EQ(RoleOf(false, ""), kContainer);
  EXPECT_EQ(RoleOf(false, "Always"), kContainer) << "a regular container's restartPolicy is not a sidecar's";
  EXPECT_EQ(RoleOf(true, ""), kInit);
  EXPECT_EQ(RoleOf(true, "Always"), kSidecar);
}

TEST(PodRequests, ContainersAndSidecarsAddUp) {
  EXPECT_EQ(EffectivePodAmounts<long long>({C(kContainer, {{"gpu", 1}}), C(kSidecar, {{"gpu", 1}})}),
            (Amounts{{"gpu", 2}}));
  EXPECT_EQ(EffectivePodAmounts<long long>({C(kContainer, {{"cpu", 500}}), C(kContainer, {{"cpu", 250}})}),
            (Amounts{{"cpu", 750}}));
  EXPECT_TRUE(EffectivePodAmounts<long long>({}).empty());
}

TEST(PodRequests, APlainInitContainerCountsWithTheSidecarsStartedBeforeIt) {
  // Alone before the sidecar: max(1 + 1, 2).
  EXPECT_EQ(
      EffectivePodAmounts<long long>({C(kInit, {{"gpu", 2}}), C(kSidecar, {{"gpu", 1}}), C(kContainer, {{"gpu", 1}})}),
      (Amounts{{"gpu", 2}}));
  // After it: the sidecar runs beside it, 1 + 2.
  EXPECT_EQ(
      EffectivePodAmounts<long long>({C(kSidecar, {{"gpu", 1}}), C(kInit, {{"gpu", 2}}), C(kContainer, {{"gpu", 1}})}),
      (Amounts{{"gpu", 3}}));
  // Per resource: each its own maximum.
  EXPECT_EQ(EffectivePodAmounts<long long>(
                {C(kInit, {{"cpu", 4000}}), C(kSidecar, {{"memory", 64}}), C(kContainer, {{"cpu", 1000}})}),
            (Amounts{{"cpu", 4000}, {"memory", 64}}));
}

}  // namespace
}  // namespace septa
