// The contract of the capacity repositories (virtual clusters, the GPU
// inventory, reservations; services/core/store.h), run against every store
// beside StoreContract: the fake must refuse every double booking that
// PostgreSQL refuses (migrations/0003_capacity.sql), with the same codes.
// Included by the same test files as store_contract.h.
#pragma once

#include "tests/unit/services/store/store_contract.h"

namespace septa::core::contract {

using tenancy::Reservation;
using tenancy::VirtualCluster;
using tenancy::VirtualClusterState;

inline VirtualCluster MakeVirtualCluster(std::string tenant, std::string name, gpu::Tier tier) {
  VirtualCluster v;
  v.tenant = std::move(tenant);
  v.name = std::move(name);
  v.display_name = "VC " + v.name;
  v.capacity.tier = tier;
  v.create_time = At(1'800'000'000);
  v.update_time = v.create_time;
  return v;
}

inline gpu::InventoryNode MakeNode(std::string name, int gpus, bool mig_enabled = false) {
  gpu::InventoryNode n;
  n.name = std::move(name);
  n.cpu_milli = 64000;
  n.memory_mib = 512000;
  n.labels = {{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"}};
  for (int i = 0; i < gpus; ++i) {
    gpu::InventoryGpu g;
    g.model = "H100-80GB";
    g.index = i;
    g.uuid = "GPU-" + n.name + "-" + std::to_string(i);
    g.mig_enabled = mig_enabled;
    n.gpus.push_back(std::move(g));
  }
  return n;
}

// The virtual cluster of `tenant` named after its tier ("shared", "isolated", ...).
inline Reservation MakeReservation(const std::string& tenant, gpu::Tier tier) {
  Reservation r;
  r.tenant = tenant;
  r.vcluster = std::string(gpu::TierName(tier));
  r.tier = tier;
  return r;
}
inline Reservation Mig(const std::string& tenant, std::vector<tenancy::ReservedMig> mig) {
  Reservation r = MakeReservation(tenant, gpu::Tier::kIsolated);
  r.mig = std::move(mig);
  return r;
}
inline Reservation Shares(const std::string& tenant, std::vector<tenancy::ReservedShare> shares) {
  Reservation r = MakeReservation(tenant, gpu::Tier::kShared);
  r.shares = std::move(shares);
  return r;
}
inline Reservation Whole(const std::string& tenant, std::vector<tenancy::ReservedGpu> gpus) {
  Reservation r = MakeReservation(tenant, gpu::Tier::kDedicated);
  r.gpus = std::move(gpus);
  return r;
}
inline Reservation Exclusive(const std::string& tenant, std::vector<std::string> nodes) {
  Reservation r = MakeReservation(tenant, gpu::Tier::kExclusive);
  r.nodes = std::move(nodes);
  return r;
}

template <typename Env>
class CapacityContract : public StoreContract<Env> {
 protected:
  // Tenants ann and bob, each with one virtual cluster per tier (named after
  // it); nodes n1 (4 GPUs, 0 and 1 MIG-enabled) and n2 (2 GPUs).
  void SetUp() override {
    StoreContract<Env>::SetUp();
    const Status seeded = this->Write([](Tx& tx) {
      for (const std::string tenant : {"ann", "bob"}) {
        SEPTA_RETURN_IF_ERROR(tx.Tenants().Insert(MakeTenant(tenant, "isolated")));
        for (gpu::Tier tier :
             {gpu::Tier::kShared, gpu::Tier::kIsolated, gpu::Tier::kDedicated, gpu::Tier::kExclusive}) {
          SEPTA_RETURN_IF_ERROR(
              tx.VirtualClusters().Insert(MakeVirtualCluster(tenant, std::string(gpu::TierName(tier)), tier)));
        }
      }
      gpu::InventoryNode n1 = MakeNode("n1", 4);
      n1.gpus[0].mig_enabled = n1.gpus[1].mig_enabled = true;
      SEPTA_RETURN_IF_ERROR(tx.Inventory().PutNode(n1, At(1)));
      return tx.Inventory().PutNode(MakeNode("n2", 2), At(1));
    });
    ASSERT_TRUE(seeded.ok()) << seeded.ToString();
  }

  Status Reserve(const Reservation& r) {
    return this->Write([&](Tx& tx) { return tx.Reservations().Insert(r); });
  }
  Status Release(const std::string& tenant, gpu::Tier tier) {
    return this->Write([&](Tx& tx) { return tx.Reservations().Delete(tenant, std::string(gpu::TierName(tier))); });
  }
  Result<Reservation> GetReservation(const std::string& tenant, const std::string& vcluster) {
    return this->template Read<Reservation>([&](Tx& tx) { return tx.Reservations().Get(tenant, vcluster); });
  }
  Result<VirtualCluster> GetVirtualCluster(const std::string& tenant, const std::string& name) {
    return this->template Read<VirtualCluster>([&](Tx& tx) { return tx.VirtualClusters().Get(tenant, name); });
  }
  Result<std::vector<VirtualCluster>> ListVirtualClusters(const VirtualClusterQuery& q) {
    return this->template Read<std::vector<VirtualCluster>>([&](Tx& tx) { return tx.VirtualClusters().List(q); });
  }
  Result<gpu::InventoryNode> GetNode(const std::string& name) {
    return this->template Read<gpu::InventoryNode>([&](Tx& tx) { return tx.Inventory().GetNode(name); });
  }
  Status PutNode(const gpu::InventoryNode& node) {
    return this->Write([&](Tx& tx) { return tx.Inventory().PutNode(node, At(2)); });
  }
  Status DeleteNode(const std::string& name) {
    return this->Write([&](Tx& tx) { return tx.Inventory().DeleteNode(name); });
  }

  // Eight virtual clusters of `tier` race, each in its own transaction, to
  // reserve `racer(i)`; returns how many won (the others must be kAborted).
  int Race(gpu::Tier tier, const std::function<Reservation(int)>& racer) {
    constexpr int kRacers = 8;
    const Status created = this->Write([&](Tx& tx) {
      for (int i = 0; i < kRacers; ++i) {
        SEPTA_RETURN_IF_ERROR(
            tx.VirtualClusters().Insert(MakeVirtualCluster("bob", "racer-" + std::to_string(i), tier)));
      }
      return Status::Ok();
    });
    EXPECT_TRUE(created.ok()) << created.ToString();
    std::vector<Status> outcomes(kRacers);
    std::vector<std::thread> threads;
    for (int i = 0; i < kRacers; ++i) {
      threads.emplace_back([&, i] {
        Reservation r = racer(i);
        r.vcluster = "racer-" + std::to_string(i);
        outcomes[i] = this->Write([&](Tx& tx) { return tx.Reservations().Insert(r); });
      });
    }
    for (auto& t : threads) t.join();
    int won = 0;
    for (const Status& st : outcomes) {
      if (st.ok()) {
        ++won;
      } else {
        EXPECT_EQ(st.code(), Code::kAborted) << st.ToString();
      }
    }
    return won;
  }
};

inline VirtualClusterQuery Query(std::string tenant, std::optional<VirtualClusterState> state, std::string after_tenant,
                                 std::string after_name, int limit = 50) {
  VirtualClusterQuery q;
  q.tenant = std::move(tenant);
  q.state = state;
  q.after_tenant = std::move(after_tenant);
  q.after_name = std::move(after_name);
  q.limit = limit;
  return q;
}

inline std::vector<std::string> Keys(const std::vector<VirtualCluster>& vclusters) {
  std::vector<std::string> keys;
  for (const auto& v : vclusters) keys.push_back(v.tenant + "/" + v.name);
  return keys;
}

TYPED_TEST_SUITE_P(CapacityContract);

TYPED_TEST_P(CapacityContract, VirtualClusterRoundTripsEveryField) {
  VirtualCluster v = MakeVirtualCluster("ann", "train-1", gpu::Tier::kIsolated);
  v.capacity.mig = {{"3g.40gb", 2, "H100-80GB"}, {"1g.10gb", 4, ""}};
  v.quota = {16000, 65536, 100};
  v.queue = {200, 3};
  v.api_limits = {0, std::int64_t{1} << 40, std::nullopt, 7};  // 0 allows none, absent is the tier's: kept apart
  v.state = VirtualClusterState::kSleeping;
  v.conditions = {{"CapacityReady", tenancy::ConditionStatus::kTrue, "CapacityReserved", "2 x 3g.40gb on n1",
                   At(1'800'000'001, 123'456'789), 4},
                  {"Ready", tenancy::ConditionStatus::kFalse, "MigRelayoutPending", "n1 GPU 2", At(1'800'000'002), 4}};
  v.host_namespace = "septa-ann-train-1";
  v.endpoint = "https://127.0.0.1:6443/vc/ann/train-1";
  v.generation = 4;
  v.version = 9;
  v.create_time = At(1'800'000'000, 999'999);
  v.update_time = At(1'800'000'005, 1);
  v.on_host = true;
  ASSERT_TRUE(this->Write([&](Tx& tx) { return tx.VirtualClusters().Insert(v); }).ok());
  auto got = this->GetVirtualCluster("ann", "train-1");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  VirtualCluster want = v;
  want.conditions[0].last_transition_time = AtMicros(1'800'000'001, 123'456'789);
  want.create_time = AtMicros(1'800'000'000, 999'999);
  want.update_time = AtMicros(1'800'000'005, 1);
  EXPECT_EQ(got->capacity, want.capacity);
  EXPECT_EQ(got->quota, want.quota);
  EXPECT_EQ(got->queue, want.queue);
  EXPECT_EQ(got->api_limits, want.api_limits);
  EXPECT_EQ(got->state, want.state);
  EXPECT_EQ(got->conditions, want.conditions);
  EXPECT_EQ(std::tie(got->tenant, got->name, got->display_name, got->host_namespace, got->endpoint, got->generation,
                     got->version, got->create_time, got->update_time, got->on_host),
            std::tie(want.tenant, want.name, want.display_name, want.host_namespace, want.endpoint, want.generation,
                     want.version, want.create_time, want.update_time, want.on_host));
  EXPECT_EQ(this->GetVirtualCluster("ann", "nope").status().code(), Code::kNotFound);
  EXPECT_EQ(this->GetVirtualCluster("bob", "train-1").status().code(), Code::kNotFound);
}

TYPED_TEST_P(CapacityContract, VirtualClusterRowsAreChecked) {
  auto insert = [&](const VirtualCluster& v) {
    return this->Write([&](Tx& tx) { return tx.VirtualClusters().Insert(v); });
  };
  EXPECT_EQ(insert(MakeVirtualCluster("nobody", "a", gpu::Tier::kShared)).code(), Code::kNotFound);
  EXPECT_EQ(insert(MakeVirtualCluster("ann", "shared", gpu::Tier::kShared)).code(), Code::kAlreadyExists);
  for (const std::string& bad : {std::string("Bad"), std::string(""), std::string("a.b"), std::string(41, 'a')}) {
    const Status st = insert(MakeVirtualCluster("ann", bad, gpu::Tier::kShared));
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << bad;
    EXPECT_THAT(st.violations(), ElementsAre(testing::Field(&FieldViolation::field, "name"))) << bad;
  }
  VirtualCluster negative = MakeVirtualCluster("ann", "neg", gpu::Tier::kShared);
  negative.quota.pods = -1;
  const Status st = insert(negative);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_THAT(st.violations(), ElementsAre(testing::Field(&FieldViolation::field, "quota.pods")));
  for (const auto& [field, member] :
       {std::pair{"api_limits.objects", &tenancy::ApiLimits::objects},
        std::pair{"api_limits.object_bytes", &tenancy::ApiLimits::object_bytes},
        std::pair{"api_limits.watches", &tenancy::ApiLimits::watches},
        std::pair{"api_limits.requests_in_flight", &tenancy::ApiLimits::requests_in_flight}}) {
    VirtualCluster limited = MakeVirtualCluster("ann", "neg", gpu::Tier::kShared);
    limited.api_limits.*member = -1;
    EXPECT_THAT(insert(limited).violations(), ElementsAre(FieldViolation{field, "must not be negative"}));
  }
  EXPECT_TRUE(insert(MakeVirtualCluster("ann", std::string(40, 'z'), gpu::Tier::kShared)).ok());
}

// migrations/0016: two virtual clusters never share a host namespace (the
// finding M2: deleting one deleted the other's pods), whether the second
// is inserted with it or updated to it; rows without one yet may be many.
TYPED_TEST_P(CapacityContract, TwoVirtualClustersNeverShareAHostNamespace) {
  auto with_namespace = [](std::string tenant, std::string name, std::string host_namespace) {
    VirtualCluster v = MakeVirtualCluster(std::move(tenant), std::move(name), gpu::Tier::kShared);
    v.host_namespace = std::move(host_namespace);
    return v;
  };
  auto insert = [&](const VirtualCluster& v) {
    return this->Write([&](Tx& tx) { return tx.VirtualClusters().Insert(v); });
  };
  ASSERT_TRUE(insert(with_namespace("ann", "first", "septa-ann-x-first")).ok());
  for (const VirtualCluster& second :
       {with_namespace("ann", "second", "septa-ann-x-first"), with_namespace("bob", "first", "septa-ann-x-first")}) {
    const Status refused = insert(second);
    EXPECT_EQ(refused.code(), Code::kAlreadyExists) << refused.ToString();
    EXPECT_THAT(refused.violations(), ElementsAre(testing::Field(&FieldViolation::field, "host_namespace")));
    EXPECT_EQ(this->GetVirtualCluster(second.tenant, second.name).status().code(), Code::kNotFound);
  }
  ASSERT_TRUE(insert(with_namespace("ann", "second", "septa-ann-x-second")).ok());
  auto second = this->GetVirtualCluster("ann", "second");
  ASSERT_TRUE(second.ok());
  VirtualCluster moved = *second;
  moved.host_namespace = "septa-ann-x-first";
  moved.version = second->version + 1;
  const Status update = this->Write([&](Tx& tx) { return tx.VirtualClusters().Update(moved, second->version); });
  EXPECT_EQ(update.code(), Code::kAlreadyExists) << update.ToString();
  EXPECT_EQ(this->GetVirtualCluster("ann", "second")->host_namespace, "septa-ann-x-second");
  // The seeded rows have none yet (rows of an older septad): no conflict among them.
  EXPECT_EQ(this->GetVirtualCluster("ann", "shared")->host_namespace, "");
  EXPECT_EQ(this->GetVirtualCluster("bob", "shared")->host_namespace, "");
  // Its own row keeps it through an update.
  VirtualCluster same = *this->GetVirtualCluster("ann", "first");
  same.display_name = "renamed";
  same.version++;
  EXPECT_TRUE(this->Write([&](Tx& tx) { return tx.VirtualClusters().Update(same, same.version - 1); }).ok());
}

TYPED_TEST_P(CapacityContract, ListVirtualClustersFiltersAndPaginatesByTenantAndName) {
  ASSERT_TRUE(this->Write([](Tx& tx) {
                    VirtualCluster ready = MakeVirtualCluster("bob", "api", gpu::Tier::kShared);
                    ready.state = VirtualClusterState::kReady;
                    SEPTA_RETURN_IF_ERROR(tx.VirtualClusters().Insert(ready));
                    ready.tenant = "ann";
                    return tx.VirtualClusters().Insert(ready);
                  })
                  .ok());
  auto all = this->ListVirtualClusters(Query("", std::nullopt, "", "", 100));
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_THAT(Keys(*all), ElementsAre("ann/api", "ann/dedicated", "ann/exclusive", "ann/isolated", "ann/shared",
                                      "bob/api", "bob/dedicated", "bob/exclusive", "bob/isolated", "bob/shared"));
  auto page = this->ListVirtualClusters(Query("", std::nullopt, "ann", "isolated", 3));
  ASSERT_TRUE(page.ok());
  EXPECT_THAT(Keys(*page), ElementsAre("ann/shared", "bob/api", "bob/dedicated"));
  auto bobs = this->ListVirtualClusters(Query("bob", std::nullopt, "bob", "dedicated"));
  ASSERT_TRUE(bobs.ok());
  EXPECT_THAT(Keys(*bobs), ElementsAre("bob/exclusive", "bob/isolated", "bob/shared"));
  auto ready = this->ListVirtualClusters(Query("", VirtualClusterState::kReady, "", ""));
  ASSERT_TRUE(ready.ok());
  EXPECT_THAT(Keys(*ready), ElementsAre("ann/api", "bob/api"));
  EXPECT_EQ(this->ListVirtualClusters(Query("", std::nullopt, "", "", 0)).status().code(), Code::kInvalidArgument);
}

TYPED_TEST_P(CapacityContract, UpdateVirtualClusterRequiresTheExpectedVersion) {
  auto current = this->GetVirtualCluster("ann", "isolated");
  ASSERT_TRUE(current.ok());
  VirtualCluster next = *current;
  next.state = VirtualClusterState::kReady;
  next.endpoint = "https://example/vc/ann/isolated";
  next.conditions = {{"Ready", tenancy::ConditionStatus::kTrue, "Provisioned", "", At(5), 1}};
  next.version = 2;
  next.create_time = At(1);  // immutable: ignored
  next.update_time = At(1'800'000'009);
  auto update = [&](std::int64_t expected) {
    return this->Write([&](Tx& tx) { return tx.VirtualClusters().Update(next, expected); });
  };
  EXPECT_EQ(update(7).code(), Code::kAborted);
  ASSERT_TRUE(update(1).ok());
  EXPECT_EQ(update(1).code(), Code::kAborted);
  auto got = this->GetVirtualCluster("ann", "isolated");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->state, VirtualClusterState::kReady);
  EXPECT_EQ(got->endpoint, next.endpoint);
  EXPECT_EQ(got->conditions, next.conditions);
  EXPECT_EQ(got->version, 2);
  EXPECT_EQ(got->create_time, current->create_time);
  EXPECT_EQ(got->update_time, At(1'800'000'009));
  next.name = "missing";
  EXPECT_EQ(update(1).code(), Code::kNotFound);
}

TYPED_TEST_P(CapacityContract, DeleteVirtualClusterWaitsForItsReservation) {
  auto remove = [&](const std::string& name, std::int64_t expected) {
    return this->Write([&](Tx& tx) { return tx.VirtualClusters().Delete("ann", name, expected); });
  };
  ASSERT_TRUE(this->Reserve(Whole("ann", {{"n1", 2}})).ok());
  EXPECT_EQ(remove("dedicated", 2).code(), Code::kAborted);
  EXPECT_EQ(remove("dedicated", 1).code(), Code::kFailedPrecondition);
  ASSERT_TRUE(this->Release("ann", gpu::Tier::kDedicated).ok());
  ASSERT_TRUE(remove("dedicated", 1).ok());
  EXPECT_EQ(this->GetVirtualCluster("ann", "dedicated").status().code(), Code::kNotFound);
  EXPECT_EQ(remove("dedicated", 1).code(), Code::kNotFound);
}

TYPED_TEST_P(CapacityContract, ATenantWithVirtualClustersCannotBeDeleted) {
  EXPECT_EQ(this->Write([](Tx& tx) { return tx.Tenants().Delete("ann", 1); }).code(), Code::kFailedPrecondition);
  ASSERT_TRUE(this->Write([](Tx& tx) {
                    for (gpu::Tier tier :
                         {gpu::Tier::kShared, gpu::Tier::kIsolated, gpu::Tier::kDedicated, gpu::Tier::kExclusive}) {
                      SEPTA_RETURN_IF_ERROR(tx.VirtualClusters().Delete("ann", std::string(gpu::TierName(tier)), 1));
                    }
                    return tx.Tenants().Delete("ann", 1);
                  })
                  .ok());
}

TYPED_TEST_P(CapacityContract, InventoryNodesRoundTripAndReplaceTheirGpus) {
  gpu::InventoryNode n3 = MakeNode("n3.rack-2", 3, true);
  n3.health = gpu::NodeHealth::kNotReady;
  n3.taints = {{"nvidia.com/gpu", "present", "NoSchedule"}};
  n3.mig_config = "all-balanced";
  n3.mig_config_state = "pending";
  n3.gpus[1].mig_layout = {{3, 4}, {0, 0}};  // stored by start slice
  n3.gpus[1].mig_gi_ids = {{0, 0}, {4, 2}};
  n3.gpus[2].mig_enabled = false;
  std::swap(n3.gpus[0], n3.gpus[2]);  // stored by index
  ASSERT_TRUE(this->PutNode(n3).ok());
  auto got = this->GetNode("n3.rack-2");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->health, gpu::NodeHealth::kNotReady);
  EXPECT_EQ(std::tie(got->cpu_milli, got->memory_mib, got->labels, got->taints, got->mig_config, got->mig_config_state),
            std::tie(n3.cpu_milli, n3.memory_mib, n3.labels, n3.taints, n3.mig_config, n3.mig_config_state));
  ASSERT_EQ(got->gpus.size(), 3u);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(got->gpus[i].index, i);
  EXPECT_EQ(got->gpus[0].uuid, "GPU-n3.rack-2-0");
  EXPECT_EQ(got->gpus[0].model, "H100-80GB");
  EXPECT_TRUE(got->gpus[0].mig_enabled);
  EXPECT_FALSE(got->gpus[2].mig_enabled);
  EXPECT_EQ(got->gpus[1].mig_layout, (gpu::MigLayout{{0, 0}, {3, 4}}));
  EXPECT_EQ(got->gpus[1].mig_gi_ids, (std::map<int, int>{{0, 0}, {4, 2}}));

  // Observed again: one GPU gone, a layout changed (one instance's id not
  // known, another GPU's instance with an id the first GPU also has), the node Ready.
  gpu::InventoryNode again = MakeNode("n3.rack-2", 2, true);
  again.gpus[0].mig_layout = {{4, 0}, {0, 4}};
  again.gpus[0].mig_gi_ids = {{4, 9}};
  again.gpus[1].mig_layout = {{0, 0}};
  again.gpus[1].mig_gi_ids = {{0, 9}};
  ASSERT_TRUE(this->PutNode(again).ok());
  got = this->GetNode("n3.rack-2");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->health, gpu::NodeHealth::kReady);
  EXPECT_THAT(got->taints, IsEmpty());
  ASSERT_EQ(got->gpus.size(), 2u);
  EXPECT_EQ(got->gpus[0].mig_layout, (gpu::MigLayout{{4, 0}, {0, 4}}));
  EXPECT_EQ(got->gpus[0].mig_gi_ids, (std::map<int, int>{{4, 9}}));
  EXPECT_EQ(got->gpus[1].mig_layout, (gpu::MigLayout{{0, 0}}));
  EXPECT_EQ(got->gpus[1].mig_gi_ids, (std::map<int, int>{{0, 9}}));
  again.gpus[1].mig_gi_ids.clear();
  ASSERT_TRUE(this->PutNode(again).ok());
  got = this->GetNode("n3.rack-2");
  ASSERT_TRUE(got.ok());
  EXPECT_THAT(got->gpus[1].mig_gi_ids, IsEmpty()) << "ids no longer observed are forgotten";

  auto nodes = this->template Read<std::vector<gpu::InventoryNode>>([](Tx& tx) { return tx.Inventory().ListNodes(); });
  ASSERT_TRUE(nodes.ok());
  std::vector<std::string> names;
  for (const auto& n : *nodes) names.push_back(n.name + ":" + std::to_string(n.gpus.size()));
  EXPECT_THAT(names, ElementsAre("n1:4", "n2:2", "n3.rack-2:2"));
  ASSERT_TRUE(this->DeleteNode("n3.rack-2").ok());
  EXPECT_EQ(this->GetNode("n3.rack-2").status().code(), Code::kNotFound);
  EXPECT_EQ(this->DeleteNode("n3.rack-2").code(), Code::kNotFound);
}

TYPED_TEST_P(CapacityContract, InventoryRowsAreChecked) {
  const Status bad_name = this->PutNode(MakeNode("N_1", 1));
  EXPECT_EQ(bad_name.code(), Code::kInvalidArgument);
  EXPECT_THAT(bad_name.violations(), ElementsAre(testing::Field(&FieldViolation::field, "name")));
  gpu::InventoryNode twice = MakeNode("n9", 2);
  twice.gpus[1].index = 0;
  EXPECT_THAT(this->PutNode(twice).violations(), ElementsAre(testing::Field(&FieldViolation::field, "gpus")));
  gpu::InventoryNode state = MakeNode("n9", 1);
  state.mig_config_state = "done";
  EXPECT_THAT(this->PutNode(state).violations(),
              ElementsAre(testing::Field(&FieldViolation::field, "mig_config_state")));
  gpu::InventoryNode layout = MakeNode("n9", 1, true);
  layout.gpus[0].mig_layout = {{0, 0}, {1, 0}};
  EXPECT_THAT(this->PutNode(layout).violations(),
              ElementsAre(testing::Field(&FieldViolation::field, "gpus.mig_layout")));
  // GPU-instance ids: never negative, one per instance of a GPU, only on an instance.
  gpu::InventoryNode ids = MakeNode("n9", 1, true);
  ids.gpus[0].mig_layout = {{0, 0}, {1, 4}};
  for (const std::map<int, int>& bad : {std::map<int, int>{{0, -1}}, {{0, 3}, {4, 3}}, {{2, 1}}}) {
    ids.gpus[0].mig_gi_ids = bad;
    const Status refused = this->PutNode(ids);
    EXPECT_EQ(refused.code(), Code::kInvalidArgument) << refused.ToString();
    EXPECT_THAT(refused.violations(), ElementsAre(testing::Field(&FieldViolation::field, "gpus.mig_gi_ids")));
  }
  EXPECT_EQ(this->GetNode("n9").status().code(), Code::kNotFound) << "nothing half-written";
}

TYPED_TEST_P(CapacityContract, AReservedNodeStaysInTheInventory) {
  ASSERT_TRUE(this->Reserve(Mig("ann", {{"n1", 0, "3g.40gb", 0, 4}})).ok());
  ASSERT_TRUE(this->Reserve(Exclusive("bob", {"n2"})).ok());
  EXPECT_EQ(this->DeleteNode("n1").code(), Code::kFailedPrecondition);
  EXPECT_EQ(this->DeleteNode("n2").code(), Code::kFailedPrecondition);
  gpu::InventoryNode without_gpu0 = MakeNode("n1", 4);
  without_gpu0.gpus.erase(without_gpu0.gpus.begin());
  EXPECT_EQ(this->PutNode(without_gpu0).code(), Code::kFailedPrecondition);
  // Marked instead; an unreserved GPU may leave.
  gpu::InventoryNode gone = MakeNode("n1", 3);
  gone.health = gpu::NodeHealth::kGone;
  ASSERT_TRUE(this->PutNode(gone).ok());
  EXPECT_EQ(this->GetNode("n1")->health, gpu::NodeHealth::kGone);
  ASSERT_TRUE(this->Release("ann", gpu::Tier::kIsolated).ok());
  ASSERT_TRUE(this->Release("bob", gpu::Tier::kExclusive).ok());
  EXPECT_TRUE(this->DeleteNode("n1").ok());
  EXPECT_TRUE(this->DeleteNode("n2").ok());
}

TYPED_TEST_P(CapacityContract, ReservationsRoundTripInKeyOrder) {
  Reservation shares = Shares("bob", {{"n1", 3, 250, 10000}, {"n1", 2, 500, 20000}});
  ASSERT_TRUE(this->Reserve(shares).ok());
  Reservation mig = Mig("ann", {{"n1", 1, "1g.10gb", 6, 1}, {"n1", 0, "3g.40gb", 4, 4}, {"n1", 0, "3g.40gb", 0, 4}});
  ASSERT_TRUE(this->Reserve(mig).ok());
  ASSERT_TRUE(this->Reserve(Whole("ann", {{"n2", 1}, {"n2", 0}})).ok());
  auto got = this->GetReservation("ann", "isolated");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  Reservation want = mig;
  want.mig = {{"n1", 0, "3g.40gb", 0, 4}, {"n1", 0, "3g.40gb", 4, 4}, {"n1", 1, "1g.10gb", 6, 1}};
  EXPECT_EQ(*got, want);
  auto all = this->template Read<std::vector<Reservation>>([](Tx& tx) { return tx.Reservations().List(); });
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].vcluster, "dedicated");
  EXPECT_EQ((*all)[0].gpus, (std::vector<tenancy::ReservedGpu>{{"n2", 0}, {"n2", 1}}));
  EXPECT_EQ((*all)[1], want);
  EXPECT_EQ((*all)[2].shares, (std::vector<tenancy::ReservedShare>{{"n1", 2, 500, 20000}, {"n1", 3, 250, 10000}}));
  // By node: each reservation holding anything there, whole.
  const auto on = [&](const std::string& node) {
    auto got =
        this->template Read<std::vector<Reservation>>([&](Tx& tx) { return tx.Reservations().ListOnNode(node); });
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    std::vector<std::string> names;
    for (const Reservation& r : got.ok() ? *got : std::vector<Reservation>{})
      names.push_back(r.tenant + "/" + r.vcluster);
    return names;
  };
  EXPECT_EQ(on("n1"), (std::vector<std::string>{"ann/isolated", "bob/shared"}));
  EXPECT_EQ(on("n2"), (std::vector<std::string>{"ann/dedicated"}));
  EXPECT_TRUE(on("n3").empty());

  ASSERT_TRUE(this->Write([](Tx& tx) { return tx.Reservations().MarkReleasing("ann", "isolated"); }).ok());
  EXPECT_TRUE(this->GetReservation("ann", "isolated")->releasing);
  EXPECT_EQ(this->Write([](Tx& tx) { return tx.Reservations().MarkReleasing("ann", "shared"); }).code(),
            Code::kNotFound);
  ASSERT_TRUE(this->Release("ann", gpu::Tier::kIsolated).ok());
  EXPECT_EQ(this->GetReservation("ann", "isolated").status().code(), Code::kNotFound);
  EXPECT_TRUE(this->Release("ann", gpu::Tier::kIsolated).ok()) << "releasing nothing is fine";
}

TYPED_TEST_P(CapacityContract, ReservationsReferToWhatExists) {
  ASSERT_TRUE(this->Reserve(Shares("ann", {{"n1", 2, 100, 0}})).ok());
  EXPECT_EQ(this->Reserve(Shares("ann", {{"n1", 3, 100, 0}})).code(), Code::kAlreadyExists);
  Reservation unknown_vcluster = Whole("ann", {{"n1", 2}});
  unknown_vcluster.vcluster = "nope";
  EXPECT_EQ(this->Reserve(unknown_vcluster).code(), Code::kNotFound);
  EXPECT_EQ(this->Reserve(Whole("bob", {{"n7", 0}})).code(), Code::kNotFound);
  EXPECT_EQ(this->Reserve(Whole("bob", {{"n1", 9}})).code(), Code::kNotFound);
  EXPECT_EQ(this->Reserve(Exclusive("bob", {"n7"})).code(), Code::kNotFound);
  // Rows only of the reservation's tier.
  Reservation mixed = Whole("bob", {});
  mixed.shares = {{"n2", 0, 100, 0}};
  const Status st = this->Reserve(mixed);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_THAT(st.violations(), ElementsAre(testing::Field(&FieldViolation::field, "shares")));
  EXPECT_EQ(this->Reserve(Shares("bob", {{"n2", 0, 0, 0}})).code(), Code::kInvalidArgument);
  EXPECT_EQ(this->Reserve(Mig("bob", {{"n1", 0, "1g.10gb", 7, 2}})).code(), Code::kInvalidArgument);
  EXPECT_EQ(this->GetReservation("bob", "dedicated").status().code(), Code::kNotFound) << "nothing half-written";
}

TYPED_TEST_P(CapacityContract, MigInstancesOfOneGpuNeverOverlap) {
  ASSERT_TRUE(this->Reserve(Mig("ann", {{"n1", 0, "3g.40gb", 0, 4}})).ok());
  EXPECT_EQ(this->Reserve(Mig("bob", {{"n1", 0, "2g.20gb", 2, 2}})).code(), Code::kAborted);
  EXPECT_EQ(this->Reserve(Mig("bob", {{"n1", 0, "1g.10gb", 0, 1}})).code(), Code::kAborted);
  // All or nothing: the free instance on GPU 1 is not kept either.
  EXPECT_EQ(this->Reserve(Mig("bob", {{"n1", 1, "3g.40gb", 0, 4}, {"n1", 0, "3g.40gb", 3, 4}})).code(), Code::kAborted);
  EXPECT_EQ(this->GetReservation("bob", "isolated").status().code(), Code::kNotFound);
  // Adjacent slices of the same GPU, held by another tenant.
  EXPECT_TRUE(this->Reserve(Mig("bob", {{"n1", 0, "3g.40gb", 4, 4}, {"n1", 1, "3g.40gb", 0, 4}})).ok());
  // And a reservation's own instances may not overlap either.
  ASSERT_TRUE(this->Release("ann", gpu::Tier::kIsolated).ok());
  EXPECT_EQ(this->Reserve(Mig("ann", {{"n1", 0, "1g.10gb", 0, 1}, {"n1", 0, "2g.20gb", 0, 2}})).code(), Code::kAborted);
  EXPECT_TRUE(this->Reserve(Mig("ann", {{"n1", 0, "1g.10gb", 0, 1}, {"n1", 0, "2g.20gb", 2, 2}})).ok());
}

TYPED_TEST_P(CapacityContract, AWholeGpuHasNobodyBesideItsHolder) {
  ASSERT_TRUE(this->Reserve(Whole("ann", {{"n1", 2}})).ok());
  EXPECT_EQ(this->Reserve(Whole("bob", {{"n1", 2}})).code(), Code::kAborted);
  EXPECT_EQ(this->Reserve(Shares("bob", {{"n1", 2, 100, 0}})).code(), Code::kAborted);
  EXPECT_EQ(this->Reserve(Mig("bob", {{"n1", 2, "1g.10gb", 0, 1}})).code(), Code::kAborted);
  // Nor is a GPU taken whole where anybody holds it.
  ASSERT_TRUE(this->Reserve(Mig("bob", {{"n1", 0, "1g.10gb", 0, 1}})).ok());
  ASSERT_TRUE(this->Reserve(Shares("bob", {{"n1", 3, 100, 0}})).ok());
  EXPECT_EQ(this->Reserve(Whole("bob", {{"n1", 0}})).code(), Code::kAborted);
  EXPECT_EQ(this->Reserve(Whole("bob", {{"n1", 3}})).code(), Code::kAborted);
  // Two tenants' whole GPUs on one node.
  EXPECT_TRUE(this->Reserve(Whole("bob", {{"n1", 1}})).ok());
}

TYPED_TEST_P(CapacityContract, SharesAndMigInstancesNeverShareAGpu) {
  ASSERT_TRUE(this->Reserve(Mig("ann", {{"n1", 0, "1g.10gb", 0, 1}})).ok());
  EXPECT_EQ(this->Reserve(Shares("bob", {{"n1", 0, 100, 0}})).code(), Code::kAborted);
  ASSERT_TRUE(this->Reserve(Shares("ann", {{"n1", 1, 100, 0}})).ok());
  EXPECT_EQ(this->Reserve(Mig("bob", {{"n1", 1, "1g.10gb", 0, 1}})).code(), Code::kAborted);
  // Once released, a GPU takes any mode again.
  ASSERT_TRUE(this->Release("ann", gpu::Tier::kIsolated).ok());
  EXPECT_TRUE(this->Reserve(Shares("bob", {{"n1", 0, 100, 0}})).ok());
}

TYPED_TEST_P(CapacityContract, TheSharesOfAGpuSumToAtMostOneGpu) {
  ASSERT_TRUE(this->Reserve(Shares("ann", {{"n1", 2, 600, 0}})).ok());
  EXPECT_EQ(this->Reserve(Shares("bob", {{"n1", 3, 100, 0}, {"n1", 2, 401, 0}})).code(), Code::kAborted);
  ASSERT_TRUE(this->Reserve(Shares("bob", {{"n1", 3, 100, 0}, {"n1", 2, 400, 0}})).ok());
  ASSERT_TRUE(this->Release("bob", gpu::Tier::kShared).ok());
  EXPECT_TRUE(this->Reserve(Shares("bob", {{"n1", 2, 400, 0}})).ok()) << "a release frees its part";
}

TYPED_TEST_P(CapacityContract, AnExclusiveNodeHoldsNobodyElse) {
  ASSERT_TRUE(this->Reserve(Exclusive("ann", {"n2"})).ok());
  EXPECT_EQ(this->Reserve(Exclusive("bob", {"n2"})).code(), Code::kAborted);
  EXPECT_EQ(this->Reserve(Whole("bob", {{"n2", 0}})).code(), Code::kAborted);
  EXPECT_EQ(this->Reserve(Shares("bob", {{"n2", 1, 100, 0}})).code(), Code::kAborted);
  ASSERT_TRUE(this->Reserve(Shares("bob", {{"n1", 2, 100, 0}})).ok());
  EXPECT_EQ(this->Reserve(Exclusive("bob", {"n1"})).code(), Code::kAborted);
}

TYPED_TEST_P(CapacityContract, ConcurrentReservationsOfOneGpuBookItOnce) {
  EXPECT_EQ(this->Race(gpu::Tier::kDedicated, [](int) { return Whole("bob", {{"n1", 2}}); }), 1);
  auto all = this->template Read<std::vector<Reservation>>([](Tx& tx) { return tx.Reservations().List(); });
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 1u);
}

TYPED_TEST_P(CapacityContract, ConcurrentSharesNeverOverfillAGpu) {
  // 300 milli each: three fit on the GPU, whoever comes first.
  EXPECT_EQ(this->Race(gpu::Tier::kShared, [](int) { return Shares("bob", {{"n1", 2, 300, 0}}); }), 3);
  auto all = this->template Read<std::vector<Reservation>>([](Tx& tx) { return tx.Reservations().List(); });
  ASSERT_TRUE(all.ok());
  int milli = 0;
  for (const auto& r : *all) {
    for (const auto& s : r.shares) milli += s.milli_gpu;
  }
  EXPECT_EQ(milli, 900);
}

TYPED_TEST_P(CapacityContract, TheEpochMovesWithEveryInventoryOrReservationChangeAndOnlyThen) {
  auto epoch = [&] { return *this->template Read<std::int64_t>([](Tx& tx) { return tx.Reservations().Epoch(); }); };
  std::int64_t last = epoch();
  auto moved = [&](const char* what) {
    const std::int64_t now = epoch();
    EXPECT_GT(now, last) << what;
    last = now;
  };
  ASSERT_TRUE(this->Reserve(Shares("ann", {{"n1", 2, 100, 0}})).ok());
  moved("reservation insert");
  ASSERT_TRUE(this->Write([](Tx& tx) { return tx.Reservations().MarkReleasing("ann", "shared"); }).ok());
  moved("mark releasing");
  ASSERT_TRUE(this->Release("ann", gpu::Tier::kShared).ok());
  moved("reservation delete");
  ASSERT_TRUE(this->PutNode(MakeNode("n3", 1)).ok());
  moved("node put");
  ASSERT_TRUE(this->DeleteNode("n3").ok());
  moved("node delete");
  // Reads and other aggregates leave it alone.
  ASSERT_TRUE(this->GetNode("n1").ok());
  ASSERT_TRUE(this->GetVirtualCluster("ann", "shared").ok());
  ASSERT_TRUE(this->Write([](Tx& tx) { return tx.Tenants().Insert(MakeTenant("cid", "shared")); }).ok());
  EXPECT_EQ(epoch(), last);
}

TYPED_TEST_P(CapacityContract, MigLayoutTargetsRoundTripFollowTheirGpuAndMoveTheEpoch) {
  auto epoch = [&] { return *this->template Read<std::int64_t>([](Tx& tx) { return tx.Reservations().Epoch(); }); };
  auto targets = [&] {
    return *this->template Read<std::vector<tenancy::MigLayoutTarget>>(
        [](Tx& tx) { return tx.Inventory().ListLayoutTargets(); });
  };
  auto put = [&](const tenancy::MigLayoutTarget& t) {
    return this->Write([&](Tx& tx) { return tx.Inventory().PutLayoutTarget(t); });
  };
  const tenancy::MigLayoutTarget n1g1{"n1", 1, {{3, 0}, {3, 4}}, "septa-00ab", At(1'800'000'000, 123'456'789)};
  const tenancy::MigLayoutTarget n1g0{"n1", 0, {{0, 0}}, "septa-00ab", At(1'800'000'001)};
  const tenancy::MigLayoutTarget n2g0{"n2", 0, {}, "septa-00cd", At(1'800'000'002)};
  std::int64_t last = epoch();
  ASSERT_TRUE(put(n1g1).ok());
  EXPECT_GT(epoch(), last);
  ASSERT_TRUE(put(n2g0).ok());
  ASSERT_TRUE(put(n1g0).ok());
  tenancy::MigLayoutTarget expect_n1g1 = n1g1;
  expect_n1g1.requested_at = At(1'800'000'000, 123'456'000);  // microseconds are kept
  EXPECT_EQ(targets(), (std::vector<tenancy::MigLayoutTarget>{n1g0, expect_n1g1, n2g0}));

  // Put replaces the GPU's target.
  tenancy::MigLayoutTarget renamed = n1g0;
  renamed.mig_config = "septa-00ef";
  ASSERT_TRUE(put(renamed).ok());
  EXPECT_EQ(targets().at(0), renamed);

  EXPECT_EQ(put({"n1", 7, {}, "septa-1", At(1)}).code(), Code::kNotFound);
  EXPECT_EQ(put({"n9", 0, {}, "septa-1", At(1)}).code(), Code::kNotFound);
  const Status bad = put({"n1", 2, {}, "not a label", At(1)});
  EXPECT_EQ(bad.code(), Code::kInvalidArgument);
  ASSERT_EQ(bad.violations().size(), 1u);
  EXPECT_EQ(bad.violations()[0].field, "mig_config");

  last = epoch();
  ASSERT_TRUE(this->Write([](Tx& tx) { return tx.Inventory().DeleteLayoutTargets("n1"); }).ok());
  EXPECT_GT(epoch(), last);
  EXPECT_EQ(targets(), std::vector<tenancy::MigLayoutTarget>{n2g0});
  ASSERT_TRUE(this->Write([](Tx& tx) { return tx.Inventory().DeleteLayoutTargets("n1"); }).ok());  // none: fine

  // A GPU that leaves the node, or a node that goes, takes its target along.
  ASSERT_TRUE(this->PutNode(MakeNode("n2", 0)).ok());
  EXPECT_TRUE(targets().empty());
}

// Credentials of a virtual cluster (migrations/0011_vcluster_credentials.sql):
// every field round-trips, lists page by serial within one virtual cluster,
// revoking keeps the first time, rows are checked, and they go with their
// virtual cluster.
TYPED_TEST_P(CapacityContract, CredentialsRoundTripPageRevokeOnceAndGoWithTheirVirtualCluster) {
  auto credential = [](std::string vcluster, std::string serial) {
    return VclusterCredential{"ann",
                              std::move(vcluster),
                              std::move(serial),
                              "ann:0123abcd",
                              {"septa:view"},
                              "view",
                              "tenant:ann",
                              At(1'800'000'000, 123'456'000),
                              At(1'800'003'600, 5'000),
                              std::nullopt};
  };
  const VclusterCredential first = credential("dedicated", "00000000000000000000000000000001");
  ASSERT_TRUE(this->Write([&](Tx& tx) {
                    SEPTA_RETURN_IF_ERROR(tx.Credentials().Insert(credential("dedicated", std::string(32, 'b'))));
                    SEPTA_RETURN_IF_ERROR(tx.Credentials().Insert(first));
                    SEPTA_RETURN_IF_ERROR(tx.Credentials().Insert(credential("dedicated", std::string(32, 'a'))));
                    return tx.Credentials().Insert(credential("shared", std::string(32, 'c')));
                  })
                  .ok());
  auto got = this->template Read<VclusterCredential>(
      [&](Tx& tx) { return tx.Credentials().Get("ann", "dedicated", first.serial); });
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->common_name, first.common_name);
  EXPECT_EQ(got->groups, first.groups);
  EXPECT_EQ(got->role, "view");
  EXPECT_EQ(got->issued_by, "tenant:ann");
  EXPECT_EQ(got->issue_time, first.issue_time);
  EXPECT_EQ(got->expire_time, first.expire_time);
  EXPECT_FALSE(got->revoke_time.has_value());

  auto list = [&](std::string after, int limit) {
    auto rows = this->template Read<std::vector<VclusterCredential>>([&](Tx& tx) {
      return tx.Credentials().List({.tenant = "ann", .vcluster = "dedicated", .after_serial = after, .limit = limit});
    });
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    std::vector<std::string> serials;
    for (const auto& c : rows.ok() ? *rows : std::vector<VclusterCredential>{}) serials.push_back(c.serial);
    return serials;
  };
  EXPECT_EQ(list("", 2), (std::vector<std::string>{first.serial, std::string(32, 'a')}));
  EXPECT_EQ(list(std::string(32, 'a'), 2), std::vector<std::string>{std::string(32, 'b')});
  // Every virtual cluster of the tenant, in (vcluster, serial) order, resumed after a pair.
  auto list_all = [&](CredentialQuery q) {
    auto rows = this->template Read<std::vector<VclusterCredential>>([&](Tx& tx) { return tx.Credentials().List(q); });
    EXPECT_TRUE(rows.ok()) << rows.status().ToString();
    std::vector<std::string> keys;
    for (const auto& c : rows.ok() ? *rows : std::vector<VclusterCredential>{})
      keys.push_back(c.vcluster + "/" + c.serial);
    return keys;
  };
  EXPECT_EQ(list_all({.tenant = "ann", .limit = 10}),
            (std::vector<std::string>{"dedicated/" + first.serial, "dedicated/" + std::string(32, 'a'),
                                      "dedicated/" + std::string(32, 'b'), "shared/" + std::string(32, 'c')}));
  EXPECT_EQ(
      list_all({.tenant = "ann", .after_serial = std::string(32, 'b'), .limit = 10, .after_vcluster = "dedicated"}),
      std::vector<std::string>{"shared/" + std::string(32, 'c')});
  // Live and expiring within the window (every credential() expires at 1'800'003'600.000005).
  auto expiring = [&](TimePoint now, TimePoint before) {
    return list_all({.tenant = "ann", .limit = 10, .expiring = core::ExpiringWindow{now, before}}).size();
  };
  EXPECT_EQ(expiring(At(1'800'000'000), At(1'800'003'600, 5'000)), 4u) << "the window's end is inclusive";
  EXPECT_EQ(expiring(At(1'800'000'000), At(1'800'003'600)), 0u);
  EXPECT_EQ(expiring(At(1'800'003'600, 5'000), At(1'800'009'999)), 0u) << "expired at now";

  auto revoke = [&](TimePoint when) {
    Result<VclusterCredential> out = Internal("not run");
    const Status st = this->Write([&](Tx& tx) {
      out = tx.Credentials().Revoke("ann", "dedicated", first.serial, when);
      return out.status();
    });
    return st.ok() ? out : Result<VclusterCredential>(st);
  };
  auto revoked = revoke(At(1'800'000'100));
  ASSERT_TRUE(revoked.ok()) << revoked.status().ToString();
  EXPECT_EQ(revoked->revoke_time, At(1'800'000'100));
  auto again = revoke(At(1'800'000'200));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->revoke_time, At(1'800'000'100));
  EXPECT_EQ(expiring(At(1'800'000'000), At(1'800'009'999)), 3u) << "revoked ones are not live";
  const Status unknown = this->Write(
      [](Tx& tx) { return tx.Credentials().Revoke("ann", "dedicated", std::string(32, 'f'), At(1)).status(); });
  EXPECT_EQ(unknown.code(), Code::kNotFound);

  // Rows are checked.
  auto insert = [&](const VclusterCredential& c) {
    return this->Write([&](Tx& tx) { return tx.Credentials().Insert(c); });
  };
  EXPECT_EQ(insert(first).code(), Code::kAlreadyExists);
  EXPECT_EQ(insert(credential("nope", std::string(32, 'd'))).code(), Code::kNotFound);
  EXPECT_EQ(insert(credential("dedicated", "XYZ")).code(), Code::kInvalidArgument);
  VclusterCredential bad_role = credential("dedicated", std::string(32, 'e'));
  bad_role.role = "root";
  EXPECT_EQ(insert(bad_role).code(), Code::kInvalidArgument);
  VclusterCredential backwards = credential("dedicated", std::string(32, 'e'));
  backwards.expire_time = backwards.issue_time;
  EXPECT_EQ(insert(backwards).code(), Code::kInvalidArgument);

  // They go with their virtual cluster.
  auto vc = this->GetVirtualCluster("ann", "dedicated");
  ASSERT_TRUE(vc.ok());
  ASSERT_TRUE(this->Write([&](Tx& tx) { return tx.VirtualClusters().Delete("ann", "dedicated", vc->version); }).ok());
  EXPECT_TRUE(list("", 10).empty());
}

REGISTER_TYPED_TEST_SUITE_P(CapacityContract, VirtualClusterRoundTripsEveryField, VirtualClusterRowsAreChecked,
                            TwoVirtualClustersNeverShareAHostNamespace,
                            ListVirtualClustersFiltersAndPaginatesByTenantAndName,
                            UpdateVirtualClusterRequiresTheExpectedVersion, DeleteVirtualClusterWaitsForItsReservation,
                            ATenantWithVirtualClustersCannotBeDeleted, InventoryNodesRoundTripAndReplaceTheirGpus,
                            InventoryRowsAreChecked, AReservedNodeStaysInTheInventory, ReservationsRoundTripInKeyOrder,
                            ReservationsReferToWhatExists, MigInstancesOfOneGpuNeverOverlap,
                            AWholeGpuHasNobodyBesideItsHolder, SharesAndMigInstancesNeverShareAGpu,
                            TheSharesOfAGpuSumToAtMostOneGpu, AnExclusiveNodeHoldsNobodyElse,
                            ConcurrentReservationsOfOneGpuBookItOnce, ConcurrentSharesNeverOverfillAGpu,
                            TheEpochMovesWithEveryInventoryOrReservationChangeAndOnlyThen,
                            MigLayoutTargetsRoundTripFollowTheirGpuAndMoveTheEpoch,
                            CredentialsRoundTripPageRevokeOnceAndGoWithTheirVirtualCluster);

}  // namespace septa::core::contract
