#include "tenancy/capacity.h"
#include "tests/unit/tenancy/capacities.h"

#include <gtest/gtest.h>

#include <string>

namespace septa::tenancy {
namespace {

using gpu::Tier;

const gpu::Catalog& Catalog() { return gpu::Catalog::Default(); }

using test::Mig;
using test::Shared;
using test::Whole;

// The one violation of a refusal: its code and field.
void ExpectRefused(const Status& st, Code code, const std::string& field) {
  ASSERT_FALSE(st.ok()) << field;
  EXPECT_EQ(st.code(), code) << st.ToString();
  ASSERT_EQ(st.violations().size(), 1u) << st.ToString();
  EXPECT_EQ(st.violations()[0].field, field) << st.ToString();
}

TEST(ValidateCapacity, EachTierHoldsItsKind) {
  EXPECT_TRUE(ValidateCapacity(Shared(1500, 20000), Tier::kShared, Catalog()).ok());
  EXPECT_TRUE(ValidateCapacity(Shared(1), Tier::kShared, Catalog()).ok());
  EXPECT_TRUE(ValidateCapacity(Mig({{"3g.40gb", 2, ""}, {"1g.10gb", 4, ""}}), Tier::kIsolated, Catalog()).ok());
  EXPECT_TRUE(ValidateCapacity(Mig({{"3g.40gb", 2, "H100-80GB"}}), Tier::kIsolated, Catalog()).ok());
  EXPECT_TRUE(ValidateCapacity(Whole(Tier::kDedicated, "H100-80GB", 2), Tier::kDedicated, Catalog()).ok());
  EXPECT_TRUE(ValidateCapacity(Whole(Tier::kDedicated, "", 2), Tier::kDedicated, Catalog()).ok());
  EXPECT_TRUE(ValidateCapacity(Whole(Tier::kExclusive, "H100-80GB", 1), Tier::kExclusive, Catalog()).ok());
  // Non-MIG models are fine for whole GPUs and nodes.
  EXPECT_TRUE(ValidateCapacity(Whole(Tier::kDedicated, "T4", 1), Tier::kDedicated, Catalog()).ok());
}

TEST(ValidateCapacity, AKindTheTierDoesNotHoldIsAFailedPreconditionNamingItAndWhatTheTierHolds) {
  const struct {
    Capacity capacity;
    Tier tier;
    std::string field;
    std::string allowed;
  } cases[] = {
      {Whole(Tier::kDedicated, "H100-80GB", 2), Tier::kIsolated, "capacity.gpus", "capacity.mig"},
      {Mig({{"3g.40gb", 1, ""}}), Tier::kShared, "capacity.mig", "capacity.shared"},
      {Shared(500), Tier::kExclusive, "capacity.shared", "capacity.nodes"},
      {Whole(Tier::kExclusive, "H100-80GB", 1), Tier::kDedicated, "capacity.nodes", "capacity.gpus"},
      // Stronger isolation than the tier's is refused too: the tier says what it holds.
      {Whole(Tier::kExclusive, "H100-80GB", 1), Tier::kShared, "capacity.nodes", "capacity.shared"},
  };
  for (const auto& c : cases) {
    Status st = ValidateCapacity(c.capacity, c.tier, Catalog());
    ExpectRefused(st, Code::kFailedPrecondition, c.field);
    EXPECT_NE(st.message().find(std::string(gpu::TierName(c.tier)) + " tier"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find("holds " + c.allowed), std::string::npos) << st.message();
  }
}

TEST(ValidateCapacity, NothingOrMoreThanOneKindIsInvalid) {
  Status none = ValidateCapacity(Capacity{}, Tier::kIsolated, Catalog());
  ExpectRefused(none, Code::kInvalidArgument, "capacity");
  EXPECT_NE(none.message().find("capacity.mig"), std::string::npos) << none.message();

  Capacity both = Mig({{"3g.40gb", 1, ""}});
  both.milli_gpu = 500;
  ExpectRefused(ValidateCapacity(both, Tier::kIsolated, Catalog()), Code::kInvalidArgument, "capacity");
  Capacity mislabelled = Shared(500);
  mislabelled.tier = Tier::kDedicated;
  ExpectRefused(ValidateCapacity(mislabelled, Tier::kDedicated, Catalog()), Code::kInvalidArgument, "capacity");
}

TEST(ValidateCapacity, SharedBudgetsNeedMilliGpuWithinBounds) {
  ExpectRefused(ValidateCapacity(Shared(0, 20000), Tier::kShared, Catalog()), Code::kInvalidArgument,
                "capacity.shared.milli_gpu");
  ExpectRefused(ValidateCapacity(Shared(-5), Tier::kShared, Catalog()), Code::kInvalidArgument,
                "capacity.shared.milli_gpu");
  EXPECT_TRUE(ValidateCapacity(Shared(kMaxSharedMilliGpu), Tier::kShared, Catalog()).ok());
  Status huge = ValidateCapacity(Shared(kMaxSharedMilliGpu + 1), Tier::kShared, Catalog());
  ExpectRefused(huge, Code::kInvalidArgument, "capacity.shared.milli_gpu");
  EXPECT_EQ(huge.violations()[0].description, "must be between 1 and 4096000, got 4096001");
  ExpectRefused(ValidateCapacity(Shared(1000, -1), Tier::kShared, Catalog()), Code::kInvalidArgument,
                "capacity.shared.gpu_memory_mib");
  ExpectRefused(ValidateCapacity(Shared(1000, kMaxSharedGpuMemoryMib + 1), Tier::kShared, Catalog()),
                Code::kInvalidArgument, "capacity.shared.gpu_memory_mib");
}

TEST(ValidateCapacity, MigEntriesNameTheBadField) {
  Status unknown = ValidateCapacity(Mig({{"3g.40gb", 1, ""}, {"9g.99gb", 1, ""}}), Tier::kIsolated, Catalog());
  ExpectRefused(unknown, Code::kInvalidArgument, "capacity.mig[1].profile");
  EXPECT_NE(unknown.message().find("unknown MIG profile \"9g.99gb\"; known profiles: "), std::string::npos);

  Status lacks = ValidateCapacity(Mig({{"3g.20gb", 1, "H100-80GB"}}), Tier::kIsolated, Catalog());
  ExpectRefused(lacks, Code::kInvalidArgument, "capacity.mig[0].profile");
  EXPECT_NE(lacks.message().find("H100-80GB has no MIG profile \"3g.20gb\"; its profiles: 1g.10gb,"), std::string::npos)
      << lacks.message();

  ExpectRefused(ValidateCapacity(Mig({{"3g.40gb", 1, "H900-1TB"}}), Tier::kIsolated, Catalog()), Code::kInvalidArgument,
                "capacity.mig[0].model");
  Status not_mig = ValidateCapacity(Mig({{"3g.40gb", 1, "T4"}}), Tier::kIsolated, Catalog());
  ExpectRefused(not_mig, Code::kInvalidArgument, "capacity.mig[0].model");
  EXPECT_NE(not_mig.message().find("T4 is not MIG-capable"), std::string::npos) << not_mig.message();

  ExpectRefused(ValidateCapacity(Mig({{"", 1, ""}}), Tier::kIsolated, Catalog()), Code::kInvalidArgument,
                "capacity.mig[0].profile");
  for (int bad : {0, -1, kMaxMigInstances + 1}) {
    ExpectRefused(ValidateCapacity(Mig({{"1g.10gb", 1, ""}, {"3g.40gb", bad, ""}}), Tier::kIsolated, Catalog()),
                  Code::kInvalidArgument, "capacity.mig[1].count");
  }
  Status twice =
      ValidateCapacity(Mig({{"3g.40gb", 1, ""}, {"1g.10gb", 1, ""}, {"3g.40gb", 2, ""}}), Tier::kIsolated, Catalog());
  ExpectRefused(twice, Code::kInvalidArgument, "capacity.mig[2]");
  EXPECT_NE(twice.message().find("repeats capacity.mig[0]"), std::string::npos) << twice.message();
  // The same profile on two named models is two requests.
  EXPECT_TRUE(
      ValidateCapacity(Mig({{"3g.40gb", 1, "H100-80GB"}, {"3g.40gb", 1, "A100-80GB"}}), Tier::kIsolated, Catalog())
          .ok());
  std::vector<MigCapacity> many(kMaxMigEntries + 1, MigCapacity{"1g.10gb", 1, ""});
  ExpectRefused(ValidateCapacity(Mig(many), Tier::kIsolated, Catalog()), Code::kInvalidArgument, "capacity.mig");
}

TEST(ValidateCapacity, UserTextInMessagesIsEscaped) {
  Status st = ValidateCapacity(Mig({{"3g\x1b[2J", 1, ""}}), Tier::kIsolated, Catalog());
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message().find('\x1b'), std::string::npos);
  EXPECT_NE(st.message().find("3g\\u001b[2J"), std::string::npos) << st.message();
}

TEST(ValidateCapacity, WholeGpusAndNodesNameTheBadField) {
  ExpectRefused(ValidateCapacity(Whole(Tier::kDedicated, "H900-1TB", 1), Tier::kDedicated, Catalog()),
                Code::kInvalidArgument, "capacity.gpus.model");
  ExpectRefused(ValidateCapacity(Whole(Tier::kExclusive, "H900-1TB", 1), Tier::kExclusive, Catalog()),
                Code::kInvalidArgument, "capacity.nodes.model");
  for (int bad : {0, -2, kMaxGpus + 1}) {
    ExpectRefused(ValidateCapacity(Whole(Tier::kDedicated, "H100-80GB", bad), Tier::kDedicated, Catalog()),
                  Code::kInvalidArgument, "capacity.gpus.count");
  }
  EXPECT_TRUE(ValidateCapacity(Whole(Tier::kDedicated, "", kMaxGpus), Tier::kDedicated, Catalog()).ok());
  ExpectRefused(ValidateCapacity(Whole(Tier::kExclusive, "H100-80GB", kMaxNodes + 1), Tier::kExclusive, Catalog()),
                Code::kInvalidArgument, "capacity.nodes.count");
  EXPECT_TRUE(ValidateCapacity(Whole(Tier::kExclusive, "", kMaxNodes), Tier::kExclusive, Catalog()).ok());
}

// ---- GPU-equivalents ----

gpu::InventoryNode NodeOfGpus(std::string name, std::string model, int gpus) {
  gpu::InventoryNode node;
  node.name = std::move(name);
  for (int i = 0; i < gpus; ++i) {
    gpu::InventoryGpu gpu;
    gpu.model = model;
    gpu.index = i;
    node.gpus.push_back(gpu);
  }
  return node;
}

TEST(GpuMilli, OfRequests) {
  const std::vector<gpu::InventoryNode> nodes = {NodeOfGpus("h100-a", "H100-80GB", 8),
                                                 NodeOfGpus("h100-b", "H100-80GB", 4), NodeOfGpus("t4-a", "T4", 2)};
  EXPECT_EQ(*CapacityGpuMilli(Shared(1500, 20000), Catalog(), nodes), 1500);
  EXPECT_EQ(*CapacityGpuMilli(Whole(Tier::kDedicated, "H100-80GB", 2), Catalog(), nodes), 2000);
  // A node counts the GPUs on it: the largest node of the model is charged.
  EXPECT_EQ(*CapacityGpuMilli(Whole(Tier::kExclusive, "H100-80GB", 2), Catalog(), nodes), 16000);
  EXPECT_EQ(*CapacityGpuMilli(Whole(Tier::kExclusive, "T4", 1), Catalog(), nodes), 2000);
  EXPECT_EQ(*CapacityGpuMilli(Whole(Tier::kExclusive, "", 1), Catalog(), nodes), 8000);
  EXPECT_EQ(*CapacityGpuMilli(Whole(Tier::kExclusive, "A100-80GB", 1), Catalog(), nodes), 0);
  // MIG: compute slices over the GPU's 7; 3/7 + 4/7 is exactly one GPU.
  EXPECT_EQ(*CapacityGpuMilli(Mig({{"3g.40gb", 1, ""}}), Catalog(), nodes), 429);   // 428.57 rounded up
  EXPECT_EQ(*CapacityGpuMilli(Mig({{"1g.10gb", 7, ""}}), Catalog(), nodes), 1000);  // a full GPU of 1g
  EXPECT_EQ(*CapacityGpuMilli(Mig({{"3g.40gb", 1, ""}, {"4g.40gb", 1, ""}}), Catalog(), nodes), 1000);
  EXPECT_EQ(*CapacityGpuMilli(Mig({{"3g.40gb", 2, ""}, {"1g.10gb", 4, ""}}), Catalog(), nodes), 1429);  // 10/7
  EXPECT_EQ(*CapacityGpuMilli(Mig({{"7g.80gb", 3, "H100-80GB"}}), Catalog(), nodes), 3000);
  // A30 has 4 compute slices: its 2g is half a GPU.
  EXPECT_EQ(*CapacityGpuMilli(Mig({{"2g.12gb", 1, ""}}), Catalog(), nodes), 500);
  EXPECT_EQ(*CapacityGpuMilli(Mig({{"2g.12gb", 1, ""}, {"1g.10gb", 1, ""}}), Catalog(), nodes), 643);  // 1/2 + 1/7
}

Reservation Held(Tier tier) {
  Reservation r;
  r.tenant = "acme";
  r.vcluster = "vc";
  r.tier = tier;
  return r;
}

TEST(GpuMilli, OfReservations) {
  std::vector<gpu::InventoryNode> nodes = {NodeOfGpus("h100-a", "H100-80GB", 8), NodeOfGpus("a30-a", "A30-24GB", 4),
                                           NodeOfGpus("big", "H100-80GB", 8)};
  Reservation shared = Held(Tier::kShared);
  shared.shares = {{"h100-a", 0, 700, 0}, {"h100-a", 1, 800, 0}};
  EXPECT_EQ(*ReservationGpuMilli(shared, Catalog(), nodes), 1500);
  Reservation mig = Held(Tier::kIsolated);
  mig.mig = {{"h100-a", 2, "4g.40gb", 0, 4}, {"h100-a", 2, "3g.40gb", 4, 4}, {"a30-a", 0, "2g.12gb", 0, 2}};
  EXPECT_EQ(*ReservationGpuMilli(mig, Catalog(), nodes), 1500);  // 3/7 + 4/7 + 2/4
  Reservation whole = Held(Tier::kDedicated);
  whole.gpus = {{"h100-a", 3}, {"h100-a", 4}};
  EXPECT_EQ(*ReservationGpuMilli(whole, Catalog(), nodes), 2000);
  Reservation exclusive = Held(Tier::kExclusive);
  exclusive.nodes = {"big", "a30-a"};
  EXPECT_EQ(*ReservationGpuMilli(exclusive, Catalog(), nodes), 12000);

  Reservation unknown_node = Held(Tier::kExclusive);
  unknown_node.nodes = {"gone"};
  auto missing = ReservationGpuMilli(unknown_node, Catalog(), nodes);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Code::kNotFound);
  EXPECT_NE(missing.status().message().find("\"gone\""), std::string::npos);
  Reservation unknown_gpu = Held(Tier::kIsolated);
  unknown_gpu.mig = {{"h100-a", 9, "3g.40gb", 0, 4}};
  EXPECT_EQ(ReservationGpuMilli(unknown_gpu, Catalog(), nodes).status().code(), Code::kNotFound);
  Reservation wrong_profile = Held(Tier::kIsolated);
  wrong_profile.mig = {{"a30-a", 0, "3g.40gb", 0, 4}};
  EXPECT_EQ(ReservationGpuMilli(wrong_profile, Catalog(), nodes).status().code(), Code::kNotFound);
}

TEST(GpuMilli, FormatsThousandths) {
  EXPECT_EQ(FormatMilli(2500), "2.500");
  EXPECT_EQ(FormatMilli(0), "0.000");
  EXPECT_EQ(FormatMilli(7), "0.007");
  EXPECT_EQ(FormatMilli(-1250), "-1.250");
}

}  // namespace
}  // namespace septa::tenancy
