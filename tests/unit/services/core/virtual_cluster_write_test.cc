// The one write of a changed virtual cluster (services/core/virtual_cluster_write.h):
// version and time stamped, the write conditional on the version read, the
// audit record beside it; a status write without one.
#include "services/core/virtual_cluster_write.h"

#include "tests/unit/services/core/core_fixture.h"

namespace septa::core {
namespace {

class VirtualClusterWriteTest : public CoreTest {
 protected:
  void SetUp() override {
    MustCreate("acme");
    tenancy::VirtualCluster vc;
    vc.tenant = "acme";
    vc.name = "train";
    vc.version = 1;
    vc.generation = 1;
    vc.create_time = vc.update_time = clock.Now();
    ASSERT_TRUE(store.Transact(TxMode::kReadWrite, [&](Tx& tx) { return tx.VirtualClusters().Insert(vc); }).ok());
  }

  // Reads train, renames it to `display_name`, writes it as `change` says.
  Status Rename(const std::string& display_name, const VirtualClusterChange* change, std::int64_t read_version = 0) {
    return store.Transact(TxMode::kReadWrite, [&](Tx& tx) -> Status {
      SEPTA_ASSIGN_OR_RETURN(tenancy::VirtualCluster current, tx.VirtualClusters().Get("acme", "train"));
      if (read_version != 0) current.version = read_version;  // as if read before another write
      tenancy::VirtualCluster next = current;
      next.display_name = display_name;
      return WriteVirtualCluster(tx, current, next, clock.Now(), change);
    });
  }

  tenancy::VirtualCluster Stored() {
    tenancy::VirtualCluster out;
    EXPECT_TRUE(store
                    .Transact(TxMode::kReadOnly,
                              [&](Tx& tx) -> Status {
                                SEPTA_ASSIGN_OR_RETURN(out, tx.VirtualClusters().Get("acme", "train"));
                                return Status::Ok();
                              })
                    .ok());
    return out;
  }
};

TEST_F(VirtualClusterWriteTest, AChangeIsStampedWrittenAndAudited) {
  clock.Advance(std::chrono::seconds(30));
  RequestContext ctx = TenantCtx("acme");
  const VirtualClusterChange change = VirtualClusterChange::By(ctx, "vcluster.update");
  ASSERT_TRUE(Rename("Training", &change).ok());
  const tenancy::VirtualCluster stored = Stored();
  EXPECT_EQ(stored.display_name, "Training");
  EXPECT_EQ(stored.version, 2);
  EXPECT_EQ(stored.update_time, clock.Now());
  const std::vector<AuditRecord> audit = Audit("tenants/acme/vclusters/train");
  ASSERT_EQ(audit.size(), 1u);
  EXPECT_EQ(audit[0].principal, "tenant:acme");
  EXPECT_EQ(audit[0].action, "vcluster.update");
  EXPECT_EQ(audit[0].old_etag, EtagOf(1));
  EXPECT_EQ(audit[0].new_etag, EtagOf(2));
  EXPECT_EQ(audit[0].request_id, "req-acme");
  EXPECT_EQ(audit[0].time, clock.Now());
}

TEST_F(VirtualClusterWriteTest, AStatusWriteIsNotAudited) {
  ASSERT_TRUE(Rename("Observed", nullptr).ok());
  EXPECT_EQ(Stored().version, 2);
  EXPECT_TRUE(Audit("tenants/acme/vclusters/train").empty());
}

TEST_F(VirtualClusterWriteTest, AWriteOverAVersionThatIsGoneIsAbortedAndLeavesNothing) {
  const VirtualClusterChange first{"system:provisioner", "vcluster.wake_reserve", ""};
  ASSERT_TRUE(Rename("First", &first).ok());
  const Status stale = Rename("Second", &first, /*read_version=*/1);
  EXPECT_EQ(stale.code(), Code::kAborted) << stale.ToString();
  EXPECT_EQ(Stored().display_name, "First");
  EXPECT_EQ(Stored().version, 2);
  EXPECT_EQ(Audit("tenants/acme/vclusters/train").size(), 1u);
}

}  // namespace
}  // namespace septa::core
