// A whole septad (SeptadApp) per test, on ephemeral ports, against a fresh
// database of the test run's PostgreSQL, with tokens for every kind of
// principal the authorization rules distinguish.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <nlohmann/json.hpp>

#include <filesystem>

#include "gpu/catalog.h"
#include "gpu/inventory.h"
#include "services/app/septad_app.h"
#include "services/store/migration.h"
#include "services/store/pg_store.h"
#include "tenancy/reservation.h"
#include "tests/integration/api/http_client.h"
#include "tests/support/test_database.h"

namespace septa::test {

class ApiTest : public ::testing::Test {
 protected:
  static constexpr std::uint64_t kBodyLimit = 4096;

  void SetUp() override {
    auto db = TestDatabase::Create();
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = *std::move(db);
    std::string dir = (std::filesystem::temp_directory_path() / "septa-api-XXXXXX").string();
    ASSERT_NE(::mkdtemp(dir.data()), nullptr);
    data_dir_ = dir;
    config::Config config;
    config.data_dir = data_dir_;
    config.database_url = db_->url();
    config.http_addr = "127.0.0.1:0";
    config.grpc_addr = "127.0.0.1:0";
    config.http_body_limit = kBodyLimit;
    config.worker_threads = 4;
    config.shutdown_grace = std::chrono::seconds(2);
    // These suites assert the API's own answers (a never-provisioned
    // virtual cluster is deleted at once); the provisioner has its own tests.
    config.provisioner = false;
    Configure(config);
    auto app = app::SeptadApp::Start(config);
    ASSERT_TRUE(app.ok()) << app.status().ToString();
    app_ = *std::move(app);
    ASSERT_TRUE(app_->new_admin_token().has_value());
    admin_ = *app_->new_admin_token();
    http_ = std::make_unique<HttpClient>(app_->http_port());
  }

  void TearDown() override {
    side_store_.reset();
    http_.reset();
    app_.reset();
    db_.reset();
    if (!data_dir_.empty()) std::filesystem::remove_all(data_dir_);
  }

  // Suites that need another configuration override this.
  virtual void Configure(config::Config&) {}

  static std::map<std::string, std::string> Bearer(const std::string& token) {
    return {{"Authorization", "Bearer " + token}};
  }

  HttpResult Call(const std::string& token, const std::string& method, const std::string& target,
                  const std::string& body = "", std::map<std::string, std::string> headers = {}) {
    if (!token.empty()) headers["Authorization"] = "Bearer " + token;
    return http_->Send(method, target, body, headers);
  }

  nlohmann::json CreateTenant(const std::string& name, const std::string& tier = "shared") {
    auto r = Call(admin_, "POST", "/v1/tenants", nlohmann::json{{"name", name}, {"trust_tier", tier}}.dump());
    EXPECT_EQ(r.status, 201) << r.body;
    return nlohmann::json::parse(r.body);
  }

  std::string CreateToken(const std::string& principal, const std::string& role) {
    auto r = Call(admin_, "POST", "/v1/tokens", nlohmann::json{{"principal", principal}, {"role", role}}.dump());
    EXPECT_EQ(r.status, 201) << r.body;
    return nlohmann::json::parse(r.body).at("token").get<std::string>();
  }

  // Writes GPU nodes as the inventory controller would, through a second
  // store on septad's database (the reservation epoch tells septad's ledger).
  void PutNodes(const std::vector<gpu::InventoryNode>& nodes) {
    ASSERT_TRUE(SideStore()
                    .Transact(core::TxMode::kReadWrite,
                              [&](core::Tx& tx) -> Status {
                                for (const auto& n : nodes) SEPTA_RETURN_IF_ERROR(tx.Inventory().PutNode(n, {}));
                                return Status::Ok();
                              })
                    .ok());
  }

  // Sets the state of a virtual cluster's row, as a reconciler would.
  void SetVirtualClusterState(const std::string& tenant, const std::string& name, tenancy::VirtualClusterState state) {
    const Status st = SideStore().Transact(core::TxMode::kReadWrite, [&](core::Tx& tx) -> Status {
      auto vc = tx.VirtualClusters().Get(tenant, name);
      SEPTA_RETURN_IF_ERROR(vc);
      vc->state = state;
      ++vc->version;
      return tx.VirtualClusters().Update(*vc, vc->version - 1);
    });
    ASSERT_TRUE(st.ok()) << st.ToString();
  }

  // Inserts a virtual cluster's row as it is (e.g. one named by an earlier septad).
  void InsertVirtualClusterRow(const tenancy::VirtualCluster& vc) {
    const Status st = SideStore().Transact(core::TxMode::kReadWrite,
                                           [&](core::Tx& tx) -> Status { return tx.VirtualClusters().Insert(vc); });
    ASSERT_TRUE(st.ok()) << st.ToString();
  }

  // Every reservation row, read back with the store.
  std::vector<tenancy::Reservation> ReservationRows() {
    std::vector<tenancy::Reservation> rows;
    const Status st = SideStore().Transact(core::TxMode::kReadOnly, [&](core::Tx& tx) -> Status {
      auto all = tx.Reservations().List();
      SEPTA_RETURN_IF_ERROR(all);
      rows = *std::move(all);
      return Status::Ok();
    });
    EXPECT_TRUE(st.ok()) << st.ToString();
    return rows;
  }

  // A node of `gpus` whole (MIG disabled) GPUs of `model`.
  static gpu::InventoryNode WholeGpuNode(const std::string& name, int gpus, const std::string& model = "A100-80GB") {
    gpu::InventoryNode n;
    n.name = name;
    n.cpu_milli = 64000;
    n.memory_mib = 1 << 19;
    for (int g = 0; g < gpus; ++g) n.gpus.push_back({model, g, name + "-gpu" + std::to_string(g), false, {}});
    return n;
  }

  // A node of `gpus` H100s with MIG on, each laid out 3g.40gb@0 + 2g.20gb@4 + 1g.10gb@6.
  static gpu::InventoryNode MigNode(const std::string& name, int gpus) {
    const gpu::GpuModel& h100 = *gpu::Catalog::Default().Find("H100-80GB");
    gpu::InventoryNode n = WholeGpuNode(name, 0);
    for (int g = 0; g < gpus; ++g) {
      n.gpus.push_back(
          {"H100-80GB",
           g,
           name + "-gpu" + std::to_string(g),
           true,
           {{h100.ProfileIndex("3g.40gb"), 0}, {h100.ProfileIndex("2g.20gb"), 4}, {h100.ProfileIndex("1g.10gb"), 6}}});
    }
    return n;
  }

  std::unique_ptr<TestDatabase> db_;
  std::string data_dir_;
  std::unique_ptr<app::SeptadApp> app_;
  std::string admin_;
  std::unique_ptr<HttpClient> http_;

 private:
  store::PgStore& SideStore() {
    if (!side_store_) {
      auto migrations = store::EmbeddedMigrations();
      EXPECT_TRUE(migrations.ok());
      side_store_ = std::make_unique<store::PgStore>(
          store::PgStoreOptions{.database_url = db_->url(), .pool_size = 2, .migrations = *migrations});
    }
    return *side_store_;
  }
  std::unique_ptr<store::PgStore> side_store_;
};

// Expects a problem response with `status`, its first violation naming
// `field` when that is not empty; `what` names the request in a failure.
inline void ExpectProblem(const HttpResult& r, int status, const std::string& field, const std::string& what) {
  EXPECT_EQ(r.status, status) << what << ": " << r.body;
  const nlohmann::json problem = nlohmann::json::parse(r.body, nullptr, false);
  ASSERT_FALSE(problem.is_discarded()) << what << ": " << r.body;
  if (field.empty()) return;
  ASSERT_TRUE(problem.contains("violations")) << what << ": " << r.body;
  EXPECT_EQ(problem["violations"][0]["field"], field) << what << ": " << r.body;
}

}  // namespace septa::test
