#include "tenancy/usage/held_capacity.h"

#include <gtest/gtest.h>

namespace septa::tenancy::usage {
namespace {

const gpu::GpuModel& H100() { return *gpu::Catalog::Default().Find("H100-80GB"); }

// Two H100s on node "gpu-a" (the second laid out in MIG), one on "gpu-b".
std::vector<gpu::InventoryNode> Nodes() {
  gpu::InventoryNode a;
  a.name = "gpu-a";
  a.gpus.push_back({.model = "H100-80GB", .index = 0, .uuid = "GPU-a0", .mig_enabled = false, .mig_layout = {}});
  a.gpus.push_back({.model = "H100-80GB", .index = 1, .uuid = "GPU-a1", .mig_enabled = true, .mig_layout = {}});
  gpu::InventoryNode b;
  b.name = "gpu-b";
  b.gpus.push_back({.model = "H100-80GB", .index = 0, .uuid = "GPU-b0", .mig_enabled = false, .mig_layout = {}});
  return {a, b};
}

Reservation Held(const std::string& tenant, const std::string& vcluster, gpu::Tier tier) {
  Reservation reservation;
  reservation.tenant = tenant;
  reservation.vcluster = vcluster;
  reservation.tier = tier;
  return reservation;
}

const TimeRange kHeld{.start = TimePoint(std::chrono::hours(500'000)), .end = TimePoint(std::chrono::hours(500'024))};

TEST(usageHeldCapacity, EachKindWithItsWeightKeyAndReservedMemory) {
  Reservation reservation = Held("acme", "dev", gpu::Tier::kDedicated);
  reservation.gpus = {{.node = "gpu-a", .gpu = 0}};
  reservation.mig = {{.node = "gpu-a", .gpu = 1, .profile = "3g.40gb", .start = 4, .slices = 4}};
  reservation.shares = {{.node = "gpu-b", .gpu = 0, .milli_gpu = 250, .gpu_memory_mib = 0},
                        {.node = "gpu-a", .gpu = 0, .milli_gpu = 500, .gpu_memory_mib = 16384}};
  reservation.nodes = {"gpu-b"};
  const std::vector<MigInstanceId> ids = {{.node = "gpu-a", .gpu = 1, .start = 0, .gi_id = 1},
                                          {.node = "gpu-a", .gpu = 1, .start = 4, .gi_id = 2}};
  const auto entities = HeldEntities(reservation, Nodes(), gpu::Catalog::Default(), ids, kHeld, "acme-dev");
  ASSERT_TRUE(entities.ok()) << entities.status().ToString();
  ASSERT_EQ(entities->size(), 5u);
  const Holder holder{.tenant = "acme", .vcluster = "dev", .tier = gpu::Tier::kDedicated};

  const HeldEntity& whole = (*entities)[0];
  EXPECT_EQ(whole.holder, holder);
  EXPECT_EQ(whole.kind, HeldKind::kWholeGpu);
  EXPECT_EQ(whole.gpu_uuid, "GPU-a0");
  EXPECT_EQ(whole.weight, 1);
  EXPECT_EQ(whole.reserved_memory_mib, H100().memory_mib);
  EXPECT_EQ(whole.held, kHeld);
  EXPECT_EQ(whole.host_namespace, "acme-dev");

  const HeldEntity& exclusive = (*entities)[1];  // every GPU of gpu-b
  EXPECT_EQ(exclusive.kind, HeldKind::kWholeGpu);
  EXPECT_EQ(exclusive.node, "gpu-b");
  EXPECT_EQ(exclusive.gpu_uuid, "GPU-b0");

  const HeldEntity& mig = (*entities)[2];
  EXPECT_EQ(mig.kind, HeldKind::kMigInstance);
  EXPECT_EQ(mig.gpu_uuid, "GPU-a1");  // the parent's, as the exporter labels it
  EXPECT_EQ(mig.gi_id, 2);
  EXPECT_DOUBLE_EQ(mig.weight, 3.0 / 7.0);
  EXPECT_EQ(mig.reserved_memory_mib, H100().FindProfile("3g.40gb")->memory_mib);

  const HeldEntity& quarter = (*entities)[3];
  EXPECT_EQ(quarter.kind, HeldKind::kShare);
  EXPECT_EQ(quarter.milli_gpu, 250);
  EXPECT_DOUBLE_EQ(quarter.weight, 0.25);
  EXPECT_DOUBLE_EQ(quarter.reserved_memory_mib, H100().memory_mib * 0.25);  // no memory reserved: its share
  EXPECT_EQ(quarter.pods_running, std::nullopt);
  EXPECT_DOUBLE_EQ((*entities)[4].reserved_memory_mib, 16384);
}

TEST(usageHeldCapacity, WhatCannotBeMatchedToASeriesIsRefusedByName) {
  const auto refused = [](const Reservation& reservation, const std::vector<MigInstanceId>& ids = {},
                          std::vector<gpu::InventoryNode> nodes = Nodes()) {
    const auto entities = HeldEntities(reservation, nodes, gpu::Catalog::Default(), ids, kHeld, "ns");
    EXPECT_FALSE(entities.ok());
    return entities.status();
  };
  Reservation unknown_node = Held("acme", "dev", gpu::Tier::kDedicated);
  unknown_node.gpus = {{.node = "gpu-z", .gpu = 0}};
  EXPECT_EQ(refused(unknown_node).code(), Code::kNotFound);
  EXPECT_EQ(refused(unknown_node).message(), "reservation of acme/dev: node \"gpu-z\" is not in the inventory");

  Reservation unknown_gpu = Held("acme", "dev", gpu::Tier::kDedicated);
  unknown_gpu.gpus = {{.node = "gpu-a", .gpu = 7}};
  EXPECT_EQ(refused(unknown_gpu).code(), Code::kNotFound);

  Reservation mig = Held("acme", "dev", gpu::Tier::kIsolated);
  mig.mig = {{.node = "gpu-a", .gpu = 1, .profile = "3g.40gb", .start = 4, .slices = 4}};
  const Status no_id = refused(mig, {{.node = "gpu-a", .gpu = 1, .start = 0, .gi_id = 1}});
  EXPECT_EQ(no_id.code(), Code::kFailedPrecondition);
  EXPECT_NE(no_id.message().find("has no GPU-instance id observed"), std::string::npos) << no_id.message();
  mig.mig[0].profile = "5g.50gb";
  EXPECT_EQ(refused(mig, {{.node = "gpu-a", .gpu = 1, .start = 4, .gi_id = 2}}).code(), Code::kNotFound);

  std::vector<gpu::InventoryNode> no_uuid = Nodes();
  no_uuid[0].gpus[0].uuid.clear();
  Reservation dedicated = Held("acme", "dev", gpu::Tier::kDedicated);
  dedicated.gpus = {{.node = "gpu-a", .gpu = 0}};
  EXPECT_EQ(refused(dedicated, {}, no_uuid).code(), Code::kFailedPrecondition);
}

}  // namespace
}  // namespace septa::tenancy::usage
