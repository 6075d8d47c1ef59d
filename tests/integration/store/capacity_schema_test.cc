// migrations/0003_capacity.sql on its own: rows written directly with SQL,
// as a faulty application would, can never book a GPU twice. Each refusal
// names the constraint that made it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <pqxx/pqxx>
#include <thread>

#include "tests/support/test_database.h"

namespace septa::store {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Two nodes with four and two GPUs; one virtual cluster with an empty
// reservation per tier (isolated twice, shared twice, dedicated twice,
// exclusive twice), in tenants of two owners.
constexpr char kFixture[] = R"sql(
INSERT INTO tenants (name, trust_tier, state, create_time, update_time, version) VALUES
  ('ann', 'isolated', 'active', now(), now(), 1), ('bob', 'isolated', 'active', now(), now(), 1);
INSERT INTO virtual_clusters (tenant, name, capacity_tier, capacity, queue_priority, queue_over_quota_weight, state,
                              generation, version, create_time, update_time)
SELECT tenant, name, tier, '{}', 100, 1, 'PROVISIONING', 1, 1, now(), now()
  FROM (VALUES ('ann', 'mig-a', 'isolated'), ('bob', 'mig-b', 'isolated'), ('ann', 'share-a', 'shared'),
               ('bob', 'share-b', 'shared'), ('ann', 'whole-a', 'dedicated'), ('bob', 'whole-b', 'dedicated'),
               ('ann', 'node-a', 'exclusive'), ('bob', 'node-b', 'exclusive')) AS v (tenant, name, tier);
INSERT INTO reservations (tenant, vcluster, tier) SELECT tenant, name, capacity_tier FROM virtual_clusters;
INSERT INTO inventory_nodes (name, health, cpu_milli, memory_mib, observe_time) VALUES
  ('n1', 'Ready', 64000, 512000, now()), ('n2', 'Ready', 64000, 512000, now());
INSERT INTO inventory_gpus (node, index, model, mig_enabled) VALUES
  ('n1', 0, 'H100-80GB', true), ('n1', 1, 'H100-80GB', true), ('n1', 2, 'H100-80GB', false),
  ('n1', 3, 'H100-80GB', false), ('n2', 0, 'H100-80GB', false), ('n2', 1, 'H100-80GB', false);
)sql";

std::string Mig(const std::string& tenant, const std::string& vcluster, const std::string& node, int gpu, int start,
                int size) {
  return "INSERT INTO reservation_mig (tenant, vcluster, node, gpu, profile, start, size) VALUES ('" + tenant + "', '" +
         vcluster + "', '" + node + "', " + std::to_string(gpu) + ", 'p', " + std::to_string(start) + ", " +
         std::to_string(size) + ")";
}
std::string Whole(const std::string& tenant, const std::string& vcluster, const std::string& node, int gpu) {
  return "INSERT INTO reservation_gpus (tenant, vcluster, node, gpu) VALUES ('" + tenant + "', '" + vcluster + "', '" +
         node + "', " + std::to_string(gpu) + ")";
}
std::string Share(const std::string& tenant, const std::string& vcluster, const std::string& node, int gpu, int milli) {
  return "INSERT INTO reservation_shares (tenant, vcluster, node, gpu, milli_gpu, gpu_memory_mib) VALUES ('" + tenant +
         "', '" + vcluster + "', '" + node + "', " + std::to_string(gpu) + ", " + std::to_string(milli) + ", 0)";
}
std::string Exclusive(const std::string& tenant, const std::string& vcluster, const std::string& node) {
  return "INSERT INTO reservation_nodes (tenant, vcluster, node) VALUES ('" + tenant + "', '" + vcluster + "', '" +
         node + "')";
}

class CapacitySchemaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto database = test::TestDatabase::CreateMigrated();
    ASSERT_TRUE(database.ok()) << database.status().ToString();
    database_ = std::move(*database);
    Accept(kFixture);
  }

  // Commits `sql`; "" when it was, else the database's message.
  std::string Refusal(const std::string& sql) {
    try {
      pqxx::connection connection(database_->url());
      pqxx::work tx(connection);
      tx.exec(sql);
      tx.commit();
      return "";
    } catch (const pqxx::sql_error& e) {
      return e.what();
    }
  }
  void Accept(const std::string& sql) { ASSERT_THAT(Refusal(sql), IsEmpty()) << sql; }
  // Commits `sql` and expects the database to refuse it for `constraint`.
  void Refuse(const std::string& sql, const std::string& constraint) {
    EXPECT_THAT(Refusal(sql), HasSubstr("constraint \"" + constraint + "\"")) << sql;
  }
  std::string Query(const std::string& sql) {
    pqxx::connection connection(database_->url());
    pqxx::read_transaction tx(connection);
    std::string rows;
    for (const auto& row : tx.exec(sql)) {
      for (const auto& field : row) rows += (field.is_null() ? "null" : field.c_str()) + std::string(" ");
      rows += "| ";
    }
    return rows;
  }

  std::unique_ptr<test::TestDatabase> database_;
};

TEST_F(CapacitySchemaTest, MigInstancesOnOneGpuNeverShareAMemorySlice) {
  Accept(Mig("ann", "mig-a", "n1", 0, 0, 4));
  Refuse(Mig("bob", "mig-b", "n1", 0, 2, 2), "reservation_mig_slices_overlap");
  Refuse(Mig("bob", "mig-b", "n1", 0, 3, 4), "reservation_mig_slices_overlap");
  Refuse(Mig("ann", "mig-a", "n1", 0, 0, 1), "reservation_mig_pkey");
  // Adjacent ranges, another tenant's instance on the same GPU, and the same
  // range on another GPU are all fine.
  Accept(Mig("bob", "mig-b", "n1", 0, 4, 2));
  Accept(Mig("ann", "mig-a", "n1", 0, 6, 1));
  Accept(Mig("bob", "mig-b", "n1", 1, 0, 4));
  EXPECT_EQ(Query("SELECT mode, holders FROM gpu_holds WHERE node = 'n1' ORDER BY gpu"), "mig 3 | mig 1 | ");
}

TEST_F(CapacitySchemaTest, MigSliceRangesStayOnTheGpu) {
  Refuse(Mig("ann", "mig-a", "n1", 0, 8, 1), "reservation_mig_slices_on_gpu");
  Refuse(Mig("ann", "mig-a", "n1", 0, 6, 4), "reservation_mig_slices_on_gpu");
  Refuse(Mig("ann", "mig-a", "n1", 0, 0, 0), "reservation_mig_slices_on_gpu");
  Refuse(Mig("ann", "mig-a", "n1", 0, -1, 2), "reservation_mig_slices_on_gpu");
}

TEST_F(CapacitySchemaTest, AWholeGpuHasOneHolder) {
  Accept(Whole("ann", "whole-a", "n1", 2));
  Refuse(Whole("bob", "whole-b", "n1", 2), "gpu_holds_whole_alone");
  Refuse(Mig("ann", "mig-a", "n1", 2, 0, 1), "gpu_holds_whole_alone");
  Refuse(Share("bob", "share-b", "n1", 2, 100), "gpu_holds_whole_alone");
  // Whole GPUs of two tenants on one node.
  Accept(Whole("bob", "whole-b", "n1", 3));
}

TEST_F(CapacitySchemaTest, AWholeGpuIsOnlyTakenWhereNobodyHoldsTheGpu) {
  Accept(Mig("ann", "mig-a", "n1", 0, 0, 1));
  Accept(Share("ann", "share-a", "n1", 2, 100));
  Refuse(Whole("bob", "whole-b", "n1", 0), "reservation_gpus_gpu_mode_fkey");
  Refuse(Whole("bob", "whole-b", "n1", 2), "reservation_gpus_gpu_mode_fkey");
}

TEST_F(CapacitySchemaTest, SharesNeverGoOnMigGpusAndMigNeverOnSharedGpus) {
  Accept(Mig("ann", "mig-a", "n1", 0, 0, 1));
  Refuse(Share("bob", "share-b", "n1", 0, 100), "reservation_shares_gpu_mode_fkey");
  Accept(Share("bob", "share-b", "n1", 1, 100));
  Refuse(Mig("ann", "mig-a", "n1", 1, 0, 1), "reservation_mig_gpu_mode_fkey");
}

TEST_F(CapacitySchemaTest, TheSharesOfAGpuSumToAtMostOneGpu) {
  Accept(Share("ann", "share-a", "n1", 2, 600));
  Refuse(Share("bob", "share-b", "n1", 2, 401), "gpu_holds_shares_fit");
  Accept(Share("bob", "share-b", "n1", 2, 400));
  EXPECT_EQ(Query("SELECT holders, milli_gpu FROM gpu_holds WHERE node = 'n1' AND gpu = 2"), "2 1000 | ");
  Refuse(Share("ann", "share-a", "n1", 3, 1001), "reservation_shares_milli_gpu_range");
  Refuse(Share("ann", "share-a", "n1", 3, 0), "reservation_shares_milli_gpu_range");
  // A released share frees its part of the GPU.
  Accept("DELETE FROM reservation_shares WHERE tenant = 'bob'");
  EXPECT_EQ(Query("SELECT holders, milli_gpu FROM gpu_holds WHERE node = 'n1' AND gpu = 2"), "1 600 | ");
  Accept(Share("bob", "share-b", "n1", 2, 300));
}

TEST_F(CapacitySchemaTest, NobodyElseIsOnANodeReservedExclusively) {
  Accept(Exclusive("ann", "node-a", "n2"));
  Refuse(Exclusive("bob", "node-b", "n2"), "node_holds_exclusive_alone");
  Refuse(Whole("bob", "whole-b", "n2", 0), "node_holds_exclusive_alone");
  Refuse(Share("bob", "share-b", "n2", 1, 100), "node_holds_exclusive_alone");
  // And a node where anything is reserved is not reserved exclusively.
  Accept(Share("bob", "share-b", "n1", 3, 100));
  Refuse(Exclusive("bob", "node-b", "n1"), "reservation_nodes_node_mode_fkey");
}

TEST_F(CapacitySchemaTest, RowsMatchTheirReservationsTier) {
  Refuse(Share("ann", "mig-a", "n1", 2, 100), "reservation_shares_reservation_fkey");
  Refuse(Mig("ann", "whole-a", "n1", 0, 0, 1), "reservation_mig_reservation_fkey");
  Refuse(Whole("ann", "node-a", "n1", 2), "reservation_gpus_reservation_fkey");
  Refuse(Exclusive("ann", "share-a", "n2"), "reservation_nodes_reservation_fkey");
  // Nothing of the refused rows stays held.
  EXPECT_EQ(Query("SELECT count(*) FROM gpu_holds"), "0 | ");
  EXPECT_EQ(Query("SELECT count(*) FROM node_holds"), "0 | ");
}

TEST_F(CapacitySchemaTest, ReservationsReferToKnownNodesAndGpus) {
  Refuse(Mig("ann", "mig-a", "n9", 0, 0, 1), "node_holds_node_fkey");
  Refuse(Mig("ann", "mig-a", "n1", 7, 0, 1), "gpu_holds_gpu_fkey");
  Refuse(Exclusive("ann", "node-a", "n9"), "node_holds_node_fkey");
}

TEST_F(CapacitySchemaTest, AReservedNodeOrGpuCannotLeaveTheInventory) {
  Accept(Mig("ann", "mig-a", "n1", 0, 0, 1));
  Accept(Exclusive("bob", "node-b", "n2"));
  Refuse("DELETE FROM inventory_nodes WHERE name = 'n1'", "node_holds_node_fkey");
  Refuse("DELETE FROM inventory_gpus WHERE node = 'n1' AND index = 0", "gpu_holds_gpu_fkey");
  Refuse("DELETE FROM inventory_nodes WHERE name = 'n2'", "node_holds_node_fkey");
  // An unreserved GPU of a reserved node may go.
  Accept("DELETE FROM inventory_gpus WHERE node = 'n1' AND index = 3");
  // Once released, the nodes may go.
  Accept("DELETE FROM reservations");
  EXPECT_EQ(Query("SELECT count(*) FROM gpu_holds"), "0 | ");
  EXPECT_EQ(Query("SELECT count(*) FROM node_holds"), "0 | ");
  Accept("DELETE FROM inventory_nodes");
}

TEST_F(CapacitySchemaTest, AReservationOutlivesNeitherItsVirtualClusterNorItsTenant) {
  Refuse("DELETE FROM virtual_clusters WHERE tenant = 'ann' AND name = 'mig-a'", "reservations_vcluster_fkey");
  Refuse("DELETE FROM tenants WHERE name = 'ann'", "virtual_clusters_tenant_fkey");
  Refuse("INSERT INTO reservations (tenant, vcluster, tier) VALUES ('ann', 'nope', 'shared')",
         "reservations_vcluster_fkey");
  Refuse("INSERT INTO reservations (tenant, vcluster, tier) VALUES ('ann', 'mig-a', 'isolated')", "reservations_pkey");
}

TEST_F(CapacitySchemaTest, DeletingAReservationReleasesEveryHold) {
  Accept(Mig("ann", "mig-a", "n1", 0, 0, 4));
  Accept(Mig("ann", "mig-a", "n1", 0, 4, 4));
  Accept(Share("ann", "share-a", "n1", 2, 500));
  Accept(Whole("ann", "whole-a", "n1", 3));
  Accept(Exclusive("ann", "node-a", "n2"));
  Accept("DELETE FROM reservations WHERE tenant = 'ann'");
  EXPECT_EQ(Query("SELECT count(*) FROM gpu_holds"), "0 | ");
  EXPECT_EQ(Query("SELECT count(*) FROM node_holds"), "0 | ");
  // Every GPU is free for any mode again.
  Accept(Share("bob", "share-b", "n1", 0, 1000));
  Accept(Whole("bob", "whole-b", "n1", 2));
  Accept(Mig("bob", "mig-b", "n1", 3, 0, 8));
  Accept(Exclusive("bob", "node-b", "n2"));
}

TEST_F(CapacitySchemaTest, ReservationRowsAreNeverUpdated) {
  Accept(Share("ann", "share-a", "n1", 2, 500));
  EXPECT_THAT(Refusal("UPDATE reservation_shares SET milli_gpu = 1000"), HasSubstr("immutable"));
}

TEST_F(CapacitySchemaTest, HoldsChangeOnlyWithTheirReservationRows) {
  Accept(Share("ann", "share-a", "n1", 2, 600));
  Accept(Whole("ann", "whole-a", "n1", 3));
  for (const std::string sql :
       {"UPDATE gpu_holds SET milli_gpu = 0", "UPDATE gpu_holds SET holders = 0", "DELETE FROM gpu_holds",
        "TRUNCATE gpu_holds CASCADE", "INSERT INTO node_holds (node, mode, holders) VALUES ('n2', 'gpus', 1)",
        "UPDATE node_holds SET holders = 0", "DELETE FROM node_holds"}) {
    EXPECT_THAT(Refusal(sql), HasSubstr("kept by the reservation tables")) << sql;
  }
  Refuse(Share("bob", "share-b", "n1", 2, 401), "gpu_holds_shares_fit");
  Refuse(Share("bob", "share-b", "n1", 3, 100), "gpu_holds_whole_alone");
}

// The running sum is safe without SERIALIZABLE too: a second transaction
// adding a share to the same GPU waits for the first and then counts its share.
TEST_F(CapacitySchemaTest, ConcurrentSharesCannotOverfillAGpuEvenInReadCommitted) {
  pqxx::connection first_connection(database_->url());
  pqxx::work first(first_connection);  // READ COMMITTED
  first.exec(Share("ann", "share-a", "n1", 2, 600));

  std::promise<std::string> second_outcome;
  std::future<std::string> outcome = second_outcome.get_future();
  std::thread second([&] { second_outcome.set_value(Refusal(Share("bob", "share-b", "n1", 2, 600))); });
  // Wait until the second transaction is blocked on the first's hold row.
  pqxx::connection observer(database_->url());
  for (;;) {
    pqxx::nontransaction look(observer);
    if (!look.exec("SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")
             .empty()) {
      break;
    }
    ASSERT_NE(outcome.wait_for(std::chrono::milliseconds(10)), std::future_status::ready)
        << "the second transaction was not blocked: " << outcome.get();
  }
  first.commit();
  EXPECT_THAT(outcome.get(), HasSubstr("\"gpu_holds_shares_fit\""));
  second.join();
  EXPECT_EQ(Query("SELECT holders, milli_gpu FROM gpu_holds WHERE node = 'n1' AND gpu = 2"), "1 600 | ");
}

// migrations/0006_mig_layout_targets.sql: a target names an inventory GPU
// and a label-safe config, goes with its GPU, moves the capacity epoch and
// tells listeners which node it is on once its transaction commits.
TEST_F(CapacitySchemaTest, MigLayoutTargetsFollowTheirGpuMoveTheEpochAndNotify) {
  class Payloads final : public pqxx::notification_receiver {
   public:
    explicit Payloads(pqxx::connection& c) : pqxx::notification_receiver(c, "septa_mig_layout_targets") {}
    void operator()(const std::string& payload, int) override { got.push_back(payload); }
    std::vector<std::string> got;
  };
  pqxx::connection listener(database_->url());
  Payloads payloads(listener);
  auto target = [](const std::string& node, int gpu, const std::string& config) {
    return "INSERT INTO mig_layout_targets (node, gpu, layout, mig_config, requested_at) VALUES ('" + node + "', " +
           std::to_string(gpu) + ", '[[3, 0], [3, 4]]', '" + config + "', now())";
  };
  const std::string epoch = Query("SELECT epoch FROM capacity_epoch");
  Accept(target("n1", 2, "septa-0123abcd"));
  EXPECT_NE(Query("SELECT epoch FROM capacity_epoch"), epoch);
  Refuse(target("n1", 9, "septa-1"), "mig_layout_targets_gpu_fkey");
  Refuse(target("n1", 3, "not a label"), "mig_layout_targets_mig_config_label");
  Refuse(target("n1", 2, "septa-2"), "mig_layout_targets_pkey");
  Accept(target("n2", 1, "septa-3"));

  // Each committed write is told, in commit order; refused ones are not.
  for (int i = 0; i < 100 && payloads.got.size() < 2; ++i) listener.await_notification(0, 100'000);
  EXPECT_EQ(payloads.got, (std::vector<std::string>{"n1", "n2"}));

  Accept("DELETE FROM inventory_gpus WHERE node = 'n1' AND index = 2");
  EXPECT_EQ(Query("SELECT node, gpu FROM mig_layout_targets"), "n2 1 | ");
  for (int i = 0; i < 100 && payloads.got.size() < 3; ++i) listener.await_notification(0, 100'000);
  EXPECT_EQ(payloads.got.back(), "n1") << "a target that goes with its GPU is told too";
}

}  // namespace
}  // namespace septa::store
