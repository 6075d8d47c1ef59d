#include "services/core/virtual_cluster_service.h"

#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>

#include "tenancy/host/names.h"
#include "tests/unit/services/core/core_fixture.h"

namespace septa::core {
namespace {

using tenancy::Capacity;
using tenancy::VirtualCluster;
using tenancy::VirtualClusterState;

int Profile(const char* name) { return gpu::Catalog::Default().Find("H100-80GB")->ProfileIndex(name); }

// Two H100 nodes of 2 MIG GPUs (3g.40gb@0 + 2g.20gb@4 + 1g.10gb@6 each: four
// 3g.40gb in all) and one node of 4 whole A100s.
std::vector<gpu::InventoryNode> Inventory() {
  std::vector<gpu::InventoryNode> nodes;
  for (const char* name : {"h100-0", "h100-1"}) {
    gpu::InventoryNode n;
    n.name = name;
    n.cpu_milli = 96000;
    n.memory_mib = 1 << 20;
    for (int g = 0; g < 2; ++g) {
      n.gpus.push_back({"H100-80GB",
                        g,
                        std::string(name) + "-" + std::to_string(g),
                        true,
                        {{Profile("3g.40gb"), 0}, {Profile("2g.20gb"), 4}, {Profile("1g.10gb"), 6}}});
    }
    nodes.push_back(n);
  }
  gpu::InventoryNode a;
  a.name = "a100-0";
  a.cpu_milli = 64000;
  a.memory_mib = 1 << 19;
  for (int g = 0; g < 4; ++g) a.gpus.push_back({"A100-80GB", g, "a100-" + std::to_string(g), false, {}});
  nodes.push_back(a);
  return nodes;
}

VirtualCluster Mig(const std::string& name, int count, const std::string& profile = "3g.40gb") {
  VirtualCluster vc;
  vc.name = name;
  vc.capacity.tier = gpu::Tier::kIsolated;
  vc.capacity.mig = {{profile, count, ""}};
  return vc;
}

class VirtualClusterServiceTest : public CoreTest {
 protected:
  VirtualClusterServiceTest()
      : vclusters(store, clock, ledger, gpu::Catalog::Default()),
        fixed_layouts(store, clock, ledger_off, gpu::Catalog::Default()) {
    MustCreate("acme", "isolated");
    MustCreate("other", "isolated");
    MustCreate("dedi", "dedicated");
    EXPECT_TRUE(store
                    .Transact(TxMode::kReadWrite,
                              [](Tx& tx) {
                                for (const auto& n : Inventory()) SEPTA_RETURN_IF_ERROR(tx.Inventory().PutNode(n, {}));
                                return Status::Ok();
                              })
                    .ok());
  }

  std::vector<tenancy::Reservation> Rows() {
    std::vector<tenancy::Reservation> rows;
    EXPECT_TRUE(store
                    .Transact(TxMode::kReadOnly,
                              [&](Tx& tx) -> Status {
                                auto all = tx.Reservations().List();
                                SEPTA_RETURN_IF_ERROR(all);
                                rows = *all;
                                return Status::Ok();
                              })
                    .ok());
    return rows;
  }

  std::vector<tenancy::MigLayoutTarget> Targets() {
    std::vector<tenancy::MigLayoutTarget> targets;
    EXPECT_TRUE(store
                    .Transact(TxMode::kReadOnly,
                              [&](Tx& tx) -> Status {
                                auto all = tx.Inventory().ListLayoutTargets();
                                SEPTA_RETURN_IF_ERROR(all);
                                targets = *all;
                                return Status::Ok();
                              })
                    .ok());
    return targets;
  }

  CapacityLedger ledger{gpu::Catalog::Default()};
  VirtualClusterService vclusters;
  // MIG re-layouts off: the layouts of the inventory are all there is.
  CapacityLedger ledger_off{gpu::Catalog::Default(), "septa", MigRelayoutPolicy::kOff};
  VirtualClusterService fixed_layouts;
};

TEST_F(VirtualClusterServiceTest, CreateReservesConcreteMigInstancesInTheSameTransaction) {
  auto created = vclusters.Create(TenantCtx("acme"), "acme", Mig("train", 2), "");
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(created->vcluster.tenant, "acme");
  EXPECT_EQ(created->vcluster.state, VirtualClusterState::kProvisioning);
  ASSERT_TRUE(created->reservation);
  ASSERT_EQ(created->reservation->mig.size(), 2u);
  EXPECT_EQ(created->reservation->mig[0].profile, "3g.40gb");
  ASSERT_NE(tenancy::FindCondition(created->vcluster.conditions, "CapacityReady"), nullptr);
  auto got = vclusters.Get(TenantCtx("acme", Role::kViewer), "acme", "train");
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->reservation, created->reservation);
  EXPECT_EQ(Rows().size(), 1u);
  ASSERT_FALSE(Audit("tenants/acme/vclusters/train").empty());
  EXPECT_EQ(Audit("tenants/acme/vclusters/train")[0].action, "vcluster.create");
}

// The host namespace is given at create and stored; two virtual clusters
// never share one (finding M2: deleting one deleted the other's pods).
TEST_F(VirtualClusterServiceTest, EachVirtualClusterGetsItsOwnHostNamespaceAndASecondHolderIsRefused) {
  MustCreate("longtenantname-abcdefghij", "isolated");
  auto first = vclusters.Create(TenantCtx("longtenantname-abcdefghij"), "longtenantname-abcdefghij",
                                Mig("firstvcluster-abcdefghijklmnopq", 1), "");
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->vcluster.host_namespace,
            tenancy::host::HostNamespaceName("longtenantname-abcdefghij", "firstvcluster-abcdefghijklmnopq"));
  EXPECT_FALSE(first->vcluster.on_host);
  auto second = vclusters.Create(TenantCtx("longtenantname-abcdefghij"), "longtenantname-abcdefghij",
                                 Mig("firstvcluster-abcd-49ffa608db", 1), "");
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_NE(second->vcluster.host_namespace, first->vcluster.host_namespace);

  // A row named by an earlier name function holds the name a new one maps to.
  ASSERT_TRUE(store
                  .Transact(TxMode::kReadWrite,
                            [](Tx& tx) -> Status {
                              VirtualCluster legacy = Mig("legacy", 1);
                              legacy.tenant = "acme";
                              legacy.host_namespace = "septa-acme-x-second";
                              legacy.on_host = true;
                              return tx.VirtualClusters().Insert(legacy);
                            })
                  .ok());
  const std::size_t rows = Rows().size();
  auto refused = vclusters.Create(TenantCtx("acme"), "acme", Mig("second", 1), "");
  ASSERT_EQ(refused.status().code(), Code::kAlreadyExists) << refused.status().ToString();
  ASSERT_EQ(refused.status().violations().size(), 1u);
  EXPECT_EQ(refused.status().violations()[0].field, "name");
  EXPECT_NE(refused.status().message().find("septa-acme-x-second"), std::string::npos) << refused.status().message();
  EXPECT_EQ(vclusters.Get(Admin(), "acme", "second").status().code(), Code::kNotFound);
  EXPECT_EQ(Rows().size(), rows);  // nothing reserved
  // The same name taken in the tenant is still "already exists".
  auto again = vclusters.Create(TenantCtx("acme"), "acme", Mig("legacy", 1), "");
  ASSERT_EQ(again.status().code(), Code::kAlreadyExists);
  EXPECT_TRUE(again.status().violations().empty());
}

TEST_F(VirtualClusterServiceTest, AuthorizationOwnersWriteViewersReadOthersSeeNothing) {
  ASSERT_TRUE(vclusters.Create(TenantCtx("acme"), "acme", Mig("a", 1), "").ok());
  EXPECT_EQ(vclusters.Create(TenantCtx("acme", Role::kViewer), "acme", Mig("b", 1), "").status().code(),
            Code::kPermissionDenied);
  EXPECT_EQ(vclusters.Get(TenantCtx("other"), "acme", "a").status().code(), Code::kNotFound);
  EXPECT_EQ(vclusters.Create(TenantCtx("other"), "acme", Mig("c", 1), "").status().code(), Code::kNotFound);
  EXPECT_EQ(vclusters.Delete(TenantCtx("acme", Role::kViewer), "acme", "a", "").status().code(),
            Code::kPermissionDenied);
  EXPECT_TRUE(vclusters.Get(Admin(), "acme", "a").ok());
  EXPECT_TRUE(vclusters.Create(Admin(), "acme", Mig("d", 1), "").ok());
}

TEST_F(VirtualClusterServiceTest, CapacityOfAnotherTierOrBadShapeIsRefusedNamingTheField) {
  VirtualCluster gpus;
  gpus.name = "g";
  gpus.capacity.tier = gpu::Tier::kDedicated;
  gpus.capacity.model = "A100-80GB";
  gpus.capacity.count = 1;
  auto wrong_tier = vclusters.Create(TenantCtx("acme"), "acme", gpus, "");
  ASSERT_EQ(wrong_tier.status().code(), Code::kFailedPrecondition);
  EXPECT_EQ(wrong_tier.status().violations().at(0).field, "capacity.gpus");
  EXPECT_EQ(vclusters.Create(TenantCtx("acme"), "acme", Mig("x", 1, "5g.50gb"), "").status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(vclusters.Create(TenantCtx("acme"), "acme", Mig("x", 0), "").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(vclusters.Create(TenantCtx("acme"), "acme", Mig("Bad_Name", 1), "").status().code(),
            Code::kInvalidArgument);
  EXPECT_TRUE(Rows().empty());
  // The dedicated tenant gets its whole GPUs.
  auto whole = vclusters.Create(TenantCtx("dedi"), "dedi", gpus, "");
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  EXPECT_EQ(whole->reservation->gpus.size(), 1u);
}

TEST_F(VirtualClusterServiceTest, AShortfallNamesWhatIsShortAndWritesNothing) {
  // Each GPU could hold two 3g.40gb once re-laid out: eight at most.
  auto refused = vclusters.Create(TenantCtx("acme"), "acme", Mig("big", 9), "");
  ASSERT_EQ(refused.status().code(), Code::kResourceExhausted);
  EXPECT_EQ(refused.status().violations().at(0).field, "capacity.mig[0]");
  EXPECT_EQ(refused.status().violations().at(0).description,
            "9 × 3g.40gb requested, 4 free; 4 more would be free after re-laying out h100-0 GPU 0 and 1, h100-1 GPU 0 "
            "and 1, which run nothing");
  EXPECT_EQ(vclusters.Get(Admin(), "acme", "big").status().code(), Code::kNotFound);
  EXPECT_TRUE(Rows().empty());
  EXPECT_TRUE(Targets().empty());
  // Everything is still free.
  EXPECT_TRUE(vclusters.Create(TenantCtx("acme"), "acme", Mig("all", 4), "").ok());
}

TEST_F(VirtualClusterServiceTest, AProfileNoLayoutHasIsReservedOnAMigLayoutTarget) {
  auto created = vclusters.Create(TenantCtx("acme"), "acme", Mig("big", 1, "4g.40gb"), "");
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  ASSERT_TRUE(created->reservation);
  ASSERT_EQ(created->reservation->mig.size(), 1u);
  const tenancy::ReservedMig held = created->reservation->mig[0];
  EXPECT_EQ(held.profile, "4g.40gb");
  // Written in the same transaction: the target of the GPU the instance is on.
  const auto targets = Targets();
  ASSERT_EQ(targets.size(), 1u);
  EXPECT_EQ(targets[0].node, held.node);
  EXPECT_EQ(targets[0].gpu, held.gpu);
  EXPECT_EQ(targets[0].mig_config.rfind("septa-", 0), 0u);
  const auto& model = *gpu::Catalog::Default().Find("H100-80GB");
  EXPECT_NE(std::find(targets[0].layout.begin(), targets[0].layout.end(),
                      gpu::MigInstance{model.ProfileIndex("4g.40gb"), held.start}),
            targets[0].layout.end());
  // Not ready until the layout is applied, saying where.
  for (const auto& vc : {created->vcluster, vclusters.Get(Admin(), "acme", "big")->vcluster}) {
    const tenancy::Condition* ready = tenancy::FindCondition(vc.conditions, "CapacityReady");
    ASSERT_NE(ready, nullptr);
    EXPECT_EQ(ready->status, tenancy::ConditionStatus::kFalse);
    EXPECT_EQ(ready->reason, "MigRelayout");
    EXPECT_EQ(ready->message,
              "the capacity is reserved; re-laying out MIG on " + held.node + " GPU " + std::to_string(held.gpu));
    EXPECT_EQ(vc.version, 1);
  }
  // Another replica's engine, built from the rows, holds the new instance:
  // with re-layouts off nothing else has a 4g.40gb ...
  auto again = fixed_layouts.Create(TenantCtx("other"), "other", Mig("more", 1, "4g.40gb"), "");
  ASSERT_EQ(again.status().code(), Code::kResourceExhausted) << again.status().ToString();
  EXPECT_TRUE(again.status().violations().at(0).description.starts_with("1 × 4g.40gb requested, 0 free; 1 more"))
      << again.status().ToString();
  // ... and with them another GPU is re-laid out.
  auto other = vclusters.Create(TenantCtx("other"), "other", Mig("more", 1, "4g.40gb"), "");
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  const tenancy::ReservedMig other_held = other->reservation->mig.at(0);
  EXPECT_FALSE(other_held.node == held.node && other_held.gpu == held.gpu);
  EXPECT_EQ(Targets().size(), 2u);
  // A virtual cluster whose capacity the layouts have stays CapacityReady=True.
  auto plain = vclusters.Create(TenantCtx("other"), "other", Mig("plain", 1, "1g.10gb"), "");
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_EQ(tenancy::FindCondition(plain->vcluster.conditions, "CapacityReady")->status,
            tenancy::ConditionStatus::kTrue);
}

TEST_F(VirtualClusterServiceTest, AResizeMayReLayOutAGpuToo) {
  ASSERT_TRUE(vclusters.Create(TenantCtx("acme"), "acme", Mig("a", 1), "").ok());
  // Every GPU is busy but the three a does not use; a's own becomes free as it resizes.
  ASSERT_TRUE(vclusters.Create(TenantCtx("other"), "other", Mig("b", 3), "").ok());
  auto resized = vclusters.Update(TenantCtx("acme"), "acme", "a", Mig("a", 1, "4g.40gb"), {"capacity"}, "");
  ASSERT_TRUE(resized.ok()) << resized.status().ToString();
  ASSERT_EQ(resized->reservation->mig.size(), 1u);
  EXPECT_EQ(resized->reservation->mig[0].profile, "4g.40gb");
  const auto targets = Targets();
  ASSERT_EQ(targets.size(), 1u);
  EXPECT_EQ(targets[0].node, resized->reservation->mig[0].node);
  EXPECT_EQ(targets[0].gpu, resized->reservation->mig[0].gpu);
  const tenancy::Condition* ready = tenancy::FindCondition(resized->vcluster.conditions, "CapacityReady");
  ASSERT_NE(ready, nullptr);
  EXPECT_EQ(ready->reason, "MigRelayout");
  EXPECT_EQ(ready->observed_generation, 2);
  EXPECT_EQ(Rows().size(), 2u);
}

TEST_F(VirtualClusterServiceTest, ResizeIsAllOrNothing) {
  VirtualClusterService& vclusters = fixed_layouts;
  ASSERT_TRUE(vclusters.Create(TenantCtx("acme"), "acme", Mig("a", 2), "").ok());
  ASSERT_TRUE(vclusters.Create(TenantCtx("other"), "other", Mig("b", 1), "").ok());
  // 1 free + a's own 2 = 3: asking for 4 fails and a keeps its 2.
  auto too_big = vclusters.Update(TenantCtx("acme"), "acme", "a", Mig("a", 4), {"capacity"}, "");
  ASSERT_EQ(too_big.status().code(), Code::kResourceExhausted) << too_big.status().ToString();
  auto kept = vclusters.Get(Admin(), "acme", "a");
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->reservation->mig.size(), 2u);
  EXPECT_EQ(kept->vcluster.generation, 1);
  auto grown = vclusters.Update(TenantCtx("acme"), "acme", "a", Mig("a", 3), {"capacity"}, "1");
  ASSERT_TRUE(grown.ok()) << grown.status().ToString();
  EXPECT_EQ(grown->reservation->mig.size(), 3u);
  EXPECT_EQ(grown->vcluster.generation, 2);
  EXPECT_EQ(grown->vcluster.version, 2);
  EXPECT_EQ(vclusters.Update(TenantCtx("acme"), "acme", "a", Mig("a", 1), {"capacity"}, "1").status().code(),
            Code::kFailedPrecondition);  // stale etag
  // Nothing is free now, and no GPU instance is booked twice.
  EXPECT_EQ(vclusters.Create(TenantCtx("other"), "other", Mig("c", 1), "").status().code(), Code::kResourceExhausted);
}

TEST_F(VirtualClusterServiceTest, IdempotentCreatesReturnTheFirstAnswer) {
  auto first = vclusters.Create(TenantCtx("acme"), "acme", Mig("a", 1), "key-1");
  ASSERT_TRUE(first.ok());
  auto again = vclusters.Create(TenantCtx("acme"), "acme", Mig("a", 1), "key-1");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->reservation, first->reservation);
  EXPECT_EQ(Rows().size(), 1u);
  EXPECT_EQ(vclusters.Create(TenantCtx("acme"), "acme", Mig("a", 2), "key-1").status().code(), Code::kAlreadyExists);
  EXPECT_EQ(vclusters.Create(TenantCtx("acme"), "acme", Mig("a", 1), "").status().code(), Code::kAlreadyExists);
}

TEST_F(VirtualClusterServiceTest, ListPagesAndFiltersByState) {
  for (const char* name : {"a", "b", "c"})
    ASSERT_TRUE(vclusters.Create(TenantCtx("acme"), "acme", Mig(name, 1), "").ok());
  auto page = vclusters.List(TenantCtx("acme", Role::kViewer), "acme", {2, "", ""});
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->vclusters.size(), 2u);
  EXPECT_EQ(page->vclusters[1].vcluster.name, "b");
  ASSERT_FALSE(page->next_page_token.empty());
  auto rest = vclusters.List(TenantCtx("acme"), "acme", {2, page->next_page_token, ""});
  ASSERT_TRUE(rest.ok());
  ASSERT_EQ(rest->vclusters.size(), 1u);
  EXPECT_TRUE(rest->next_page_token.empty());
  EXPECT_EQ(vclusters.List(TenantCtx("acme"), "acme", {0, "", "state=READY"})->vclusters.size(), 0u);
  EXPECT_EQ(vclusters.List(TenantCtx("acme"), "acme", {0, "", "state=PROVISIONING"})->vclusters.size(), 3u);
  EXPECT_EQ(vclusters.List(TenantCtx("acme"), "acme", {0, "", "state=BUSY"}).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(vclusters.List(TenantCtx("other"), "acme", {}).status().code(), Code::kNotFound);
}

TEST_F(VirtualClusterServiceTest, DeleteReleasesAtOnceWhatWasNeverProvisionedAndHoldsTheRestVisibly) {
  ASSERT_TRUE(vclusters.Create(TenantCtx("acme"), "acme", Mig("gone", 2), "").ok());
  ASSERT_TRUE(vclusters.Create(TenantCtx("acme"), "acme", Mig("running", 2), "").ok());
  // The provisioner made "running" real on the host.
  ASSERT_TRUE(store
                  .Transact(TxMode::kReadWrite,
                            [](Tx& tx) -> Status {
                              auto vc = tx.VirtualClusters().Get("acme", "running");
                              SEPTA_RETURN_IF_ERROR(vc);
                              vc->on_host = true;
                              vc->version++;
                              return tx.VirtualClusters().Update(*vc, vc->version - 1);
                            })
                  .ok());
  auto deleted = vclusters.Delete(TenantCtx("acme"), "acme", "gone", "");
  ASSERT_TRUE(deleted.ok()) << deleted.status().ToString();
  EXPECT_EQ(vclusters.Get(Admin(), "acme", "gone").status().code(), Code::kNotFound);
  auto held = vclusters.Delete(TenantCtx("acme"), "acme", "running", "");
  ASSERT_TRUE(held.ok()) << held.status().ToString();
  EXPECT_EQ(held->vcluster.state, VirtualClusterState::kDeleting);
  ASSERT_TRUE(held->reservation);
  EXPECT_TRUE(held->reservation->releasing);
  // "gone"'s two instances are free again; "running"'s stay held.
  EXPECT_TRUE(vclusters.Create(TenantCtx("other"), "other", Mig("x", 2), "").ok());
  EXPECT_EQ(vclusters.Create(TenantCtx("other"), "other", Mig("y", 1), "").status().code(), Code::kResourceExhausted);
  EXPECT_EQ(vclusters.Update(TenantCtx("acme"), "acme", "running", Mig("running", 1), {"capacity"}, "").status().code(),
            Code::kFailedPrecondition);  // DELETING is frozen
}

// The provisioner turned it READY (what the use cases cannot do themselves).
void MarkReady(FakeStore& store, const std::string& tenant, const std::string& name) {
  ASSERT_TRUE(store
                  .Transact(TxMode::kReadWrite,
                            [&](Tx& tx) -> Status {
                              auto vc = tx.VirtualClusters().Get(tenant, name);
                              SEPTA_RETURN_IF_ERROR(vc);
                              vc->state = VirtualClusterState::kReady;
                              vc->version++;
                              return tx.VirtualClusters().Update(*vc, vc->version - 1);
                            })
                  .ok());
}

TEST_F(VirtualClusterServiceTest, SleepAndWakeWriteTheDesiredStateAuditedAndAreIdempotent) {
  ASSERT_TRUE(vclusters.Create(TenantCtx("acme"), "acme", Mig("nap", 1), "").ok());
  // Only a READY one sleeps: PROVISIONING is refused, naming the state.
  auto early = vclusters.Sleep(TenantCtx("acme"), "acme", "nap", "");
  ASSERT_EQ(early.status().code(), Code::kFailedPrecondition);
  EXPECT_EQ(early.status().violations()[0].field, "state");
  EXPECT_NE(early.status().message().find("PROVISIONING"), std::string::npos) << early.status().message();
  MarkReady(store, "acme", "nap");
  auto ready = vclusters.Get(TenantCtx("acme"), "acme", "nap");
  ASSERT_TRUE(ready.ok());

  // A stale etag changes nothing; the current one is taken.
  EXPECT_EQ(vclusters.Sleep(TenantCtx("acme"), "acme", "nap", "1").status().code(), Code::kFailedPrecondition);
  auto asleep = vclusters.Sleep(TenantCtx("acme"), "acme", "nap", EtagOf(ready->vcluster.version));
  ASSERT_TRUE(asleep.ok()) << asleep.status().ToString();
  EXPECT_EQ(asleep->vcluster.state, VirtualClusterState::kSleeping);
  EXPECT_EQ(asleep->vcluster.generation, ready->vcluster.generation + 1);
  EXPECT_EQ(asleep->vcluster.version, ready->vcluster.version + 1);
  ASSERT_TRUE(asleep->reservation);  // the provisioner keeps or releases it, not the request
  EXPECT_EQ(Rows().size(), 1u);
  // Again: the same answer, nothing written, nothing audited.
  auto again = vclusters.Sleep(TenantCtx("acme"), "acme", "nap", "");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->vcluster.version, asleep->vcluster.version);
  auto audit = Audit("tenants/acme/vclusters/nap");
  ASSERT_EQ(audit.size(), 2u);
  EXPECT_EQ(audit[0].action, "vcluster.sleep");
  EXPECT_EQ(audit[0].principal, "tenant:acme");
  EXPECT_EQ(audit[0].old_etag, EtagOf(ready->vcluster.version));
  EXPECT_EQ(audit[0].new_etag, EtagOf(asleep->vcluster.version));

  // Viewers and other tenants cannot; a name that cannot exist is not found.
  EXPECT_EQ(vclusters.Wake(TenantCtx("acme", Role::kViewer), "acme", "nap", "").status().code(),
            Code::kPermissionDenied);
  EXPECT_EQ(vclusters.Wake(TenantCtx("other"), "acme", "nap", "").status().code(), Code::kNotFound);
  EXPECT_EQ(vclusters.Wake(TenantCtx("acme"), "acme", "no-such", "").status().code(), Code::kNotFound);
  EXPECT_EQ(vclusters.Sleep(TenantCtx("acme"), "acme", "Bad_Name", "").status().code(), Code::kNotFound);

  auto woken = vclusters.Wake(TenantCtx("acme"), "acme", "nap", "");
  ASSERT_TRUE(woken.ok()) << woken.status().ToString();
  EXPECT_EQ(woken->vcluster.state, VirtualClusterState::kProvisioning);
  EXPECT_EQ(woken->vcluster.generation, asleep->vcluster.generation + 1);
  ASSERT_TRUE(vclusters.Wake(Admin(), "acme", "nap", "").ok());  // waking: nothing more to ask
  audit = Audit("tenants/acme/vclusters/nap");
  ASSERT_EQ(audit.size(), 3u);
  EXPECT_EQ(audit[0].action, "vcluster.wake");

  // DELETING neither sleeps nor wakes.
  ASSERT_TRUE(vclusters.Delete(TenantCtx("acme"), "acme", "nap", "").ok());
  ASSERT_TRUE(vclusters.Create(TenantCtx("acme"), "acme", Mig("doomed", 1), "").ok());
  MarkReady(store, "acme", "doomed");
  ASSERT_TRUE(store
                  .Transact(TxMode::kReadWrite,
                            [](Tx& tx) -> Status {
                              auto vc = tx.VirtualClusters().Get("acme", "doomed");
                              SEPTA_RETURN_IF_ERROR(vc);
                              vc->on_host = true;
                              vc->version++;
                              return tx.VirtualClusters().Update(*vc, vc->version - 1);
                            })
                  .ok());
  ASSERT_TRUE(vclusters.Delete(TenantCtx("acme"), "acme", "doomed", "").ok());
  for (auto op : {&VirtualClusterService::Sleep, &VirtualClusterService::Wake}) {
    auto refused = (vclusters.*op)(TenantCtx("acme"), "acme", "doomed", "");
    ASSERT_EQ(refused.status().code(), Code::kFailedPrecondition);
    EXPECT_NE(refused.status().message().find("DELETING"), std::string::npos) << refused.status().message();
  }
}

// Tenant quotas on the use cases: MIG instances counted as GPU-equivalents on
// the GPUs that hold them, a DELETING cluster still counting, usage shown in
// the tenant's GET, workload limits required and summed.
TEST_F(VirtualClusterServiceTest, TenantQuotaCountsGpuEquivalentsAndHeldCapacity) {
  TenantUpdate set;
  set.quota.gpu_milli = 1100;  // two 3g.40gb (3/7 each, 429 rounded up) fit, a third does not
  set.quota_members = {&tenancy::TenantQuota::gpu_milli};
  ASSERT_TRUE(tenants.Update(Admin(), "acme", set, "").ok());
  ASSERT_TRUE(vclusters.Create(TenantCtx("acme"), "acme", Mig("a", 1), "").ok());
  ASSERT_TRUE(vclusters.Create(TenantCtx("acme"), "acme", Mig("b", 1), "").ok());
  auto refused = vclusters.Create(TenantCtx("acme"), "acme", Mig("c", 1), "");
  ASSERT_EQ(refused.status().code(), Code::kResourceExhausted) << refused.status().ToString();
  EXPECT_EQ(refused.status().violations()[0].field, "tenant.quota.gpu_milli");
  EXPECT_EQ(refused.status().violations()[0].description,
            "0.429 GPU-equivalents requested, 0.858 of 1.100 in use, 0.242 left");
  EXPECT_EQ(vclusters.Get(Admin(), "acme", "c").status().code(), Code::kNotFound);  // nothing written
  EXPECT_EQ(Rows().size(), 2u);
  // A 1g.10gb (1/7: 143) fits beside them; the other tenant has no quota.
  EXPECT_TRUE(vclusters.Create(TenantCtx("acme"), "acme", Mig("small", 1, "1g.10gb"), "").ok());
  EXPECT_TRUE(vclusters.Create(TenantCtx("other"), "other", Mig("x", 1), "").ok());
  auto view = tenants.Get(TenantCtx("acme", Role::kViewer), "acme");
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  ASSERT_TRUE(view->quota_usage);
  EXPECT_EQ(view->quota_usage->gpu_milli, 1001);  // each cluster rounded up: never charged less than it holds
  EXPECT_EQ(view->quota_usage->vclusters, 3);
  EXPECT_FALSE(tenants.Get(Admin(), "other")->quota_usage);

  // Provisioned, then deleted: DELETING, its capacity still held and counted.
  ASSERT_TRUE(store
                  .Transact(TxMode::kReadWrite,
                            [](Tx& tx) -> Status {
                              auto vc = tx.VirtualClusters().Get("acme", "a");
                              SEPTA_RETURN_IF_ERROR(vc);
                              vc->on_host = true;
                              vc->version++;
                              return tx.VirtualClusters().Update(*vc, vc->version - 1);
                            })
                  .ok());
  ASSERT_EQ(vclusters.Delete(TenantCtx("acme"), "acme", "a", "")->vcluster.state, VirtualClusterState::kDeleting);
  EXPECT_EQ(vclusters.Create(TenantCtx("acme"), "acme", Mig("c", 1, "1g.10gb"), "").status().code(),
            Code::kResourceExhausted);
  // Shrinking is never refused; growing past the quota is, all or nothing.
  ASSERT_TRUE(vclusters.Update(TenantCtx("acme"), "acme", "b", Mig("b", 1, "1g.10gb"), {"capacity"}, "").ok());
  auto grow = vclusters.Update(TenantCtx("acme"), "acme", "small", Mig("small", 2), {"capacity"}, "");
  EXPECT_EQ(grow.status().code(), Code::kResourceExhausted);
  EXPECT_EQ(vclusters.Get(Admin(), "acme", "small")->reservation->mig[0].profile, "1g.10gb");
}

TEST_F(VirtualClusterServiceTest, AResizeOfTheQuotaAloneKeepsCapacityReadyAtTheNewGeneration) {
  auto created = vclusters.Create(TenantCtx("acme"), "acme", Mig("a", 1), "");
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  const tenancy::Condition before = *tenancy::FindCondition(created->vcluster.conditions, "CapacityReady");
  clock.Advance(std::chrono::minutes(1));
  VirtualCluster more;
  more.quota.pods = 80;
  auto updated = vclusters.Update(TenantCtx("acme"), "acme", "a", more, {"quota.pods"}, "");
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  EXPECT_EQ(updated->vcluster.generation, 2);
  const tenancy::Condition* after = tenancy::FindCondition(updated->vcluster.conditions, "CapacityReady");
  ASSERT_NE(after, nullptr);
  EXPECT_EQ(after->observed_generation, 2);
  EXPECT_EQ(after->status, before.status);
  EXPECT_EQ(after->reason, before.reason);
  EXPECT_EQ(after->last_transition_time, before.last_transition_time) << "the status did not change";
  EXPECT_EQ(updated->reservation->mig.size(), 1u) << "nothing placed again";
}

TEST_F(VirtualClusterServiceTest, TenantQuotaOnWorkloadLimitsNeedsThemSetAndSumsThem) {
  TenantUpdate set;
  set.quota.cpu_milli = 4000;
  set.quota.vclusters = 2;
  set.quota_members = {&tenancy::TenantQuota::cpu_milli, &tenancy::TenantQuota::vclusters};
  ASSERT_TRUE(tenants.Update(Admin(), "acme", set, "").ok());
  auto unbounded = vclusters.Create(TenantCtx("acme"), "acme", Mig("a", 1), "");
  ASSERT_EQ(unbounded.status().code(), Code::kFailedPrecondition);
  EXPECT_EQ(unbounded.status().violations()[0].field, "quota.cpu_milli");
  VirtualCluster a = Mig("a", 1);
  a.quota.cpu_milli = 3000;
  ASSERT_TRUE(vclusters.Create(TenantCtx("acme"), "acme", a, "").ok());
  VirtualCluster b = Mig("b", 1);
  b.quota.cpu_milli = 2000;
  EXPECT_EQ(vclusters.Create(TenantCtx("acme"), "acme", b, "").status().violations()[0].field,
            "tenant.quota.cpu_milli");
  b.quota.cpu_milli = 1000;
  ASSERT_TRUE(vclusters.Create(TenantCtx("acme"), "acme", b, "").ok());
  VirtualCluster c = b;
  c.name = "c";
  c.quota.cpu_milli = 1;
  auto third = vclusters.Create(TenantCtx("acme"), "acme", c, "");
  EXPECT_EQ(third.status().code(), Code::kResourceExhausted);
  ASSERT_EQ(third.status().violations().size(), 2u) << third.status().ToString();  // every quantity over its quota
  EXPECT_EQ(third.status().violations()[0].field, "tenant.quota.cpu_milli");
  EXPECT_EQ(third.status().violations()[1].field, "tenant.quota.vclusters");
  // A resize of workload limits alone is checked too.
  VirtualCluster more;
  more.quota.cpu_milli = 3500;
  EXPECT_EQ(vclusters.Update(TenantCtx("acme"), "acme", "a", more, {"quota.cpu_milli"}, "").status().code(),
            Code::kResourceExhausted);
}

// Sixteen creators race for four free 3g.40gb instances, through two
// ledgers (two septad replicas) on one store: exactly four win, and the rows
// book no instance twice.
TEST_F(VirtualClusterServiceTest, RacingCreatorsNeverDoubleBook) {
  CapacityLedger second_ledger{gpu::Catalog::Default()};
  VirtualClusterService replica(store, clock, second_ledger, gpu::Catalog::Default());
  std::atomic<int> won{0}, exhausted{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 16; ++i) {
    threads.emplace_back([&, i] {
      VirtualClusterService& service = i % 2 ? replica : vclusters;
      auto r = service.Create(TenantCtx(i % 3 ? "acme" : "other"), i % 3 ? "acme" : "other",
                              Mig("r" + std::to_string(i), 1), "");
      if (r.ok()) {
        ++won;
      } else if (r.status().code() == Code::kResourceExhausted) {
        ++exhausted;
      } else {
        ADD_FAILURE() << r.status().ToString();
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(won, 4);
  EXPECT_EQ(exhausted, 12);
  std::set<std::tuple<std::string, int, int>> instances;
  for (const auto& r : Rows()) {
    for (const auto& m : r.mig) EXPECT_TRUE(instances.insert({m.node, m.gpu, m.start}).second) << m.node;
  }
  EXPECT_EQ(instances.size(), 4u);
}

}  // namespace
}  // namespace septa::core
