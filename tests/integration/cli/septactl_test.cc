// septactl against a real septad: the server runs in-process on ephemeral
// ports over a fresh database; every command goes over a real gRPC socket.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <sstream>

#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include "services/app/septad_app.h"
#include "services/cli/apply_command.h"
#include "services/cli/run.h"
#include "services/store/migration.h"
#include "services/store/pg_store.h"
#include "services/vcp/simulated_control_planes.h"
#include "tests/integration/cli/ready_vcluster.h"
#include "tests/support/test_database.h"

namespace septa::cli {
namespace {

namespace fs = std::filesystem;

struct Outcome {
  int exit_code;
  std::string out;
  std::string err;
};

class SeptactlE2E : public testing::Test {
 protected:
  void SetUp() override {
    auto db = test::TestDatabase::Create();
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(*db);
    data_dir_ = fs::path(testing::TempDir()) / ("septactl-e2e-" + db_->name());
    config::Config config;
    config.database_url = db_->url();
    config.data_dir = data_dir_.string();
    config.http_addr = "127.0.0.1:0";
    config.grpc_addr = "127.0.0.1:0";
    config.shutdown_grace = std::chrono::milliseconds(500);
    config.provisioner = false;  // septactl's answers as the API gives them (see VclusterLifecycle)
    auto app = app::SeptadApp::Start(config);
    ASSERT_TRUE(app.ok()) << app.status().ToString();
    app_ = std::move(*app);
    ASSERT_TRUE(app_->new_admin_token().has_value());
    admin_token_ = *app_->new_admin_token();
    server_ = "127.0.0.1:" + std::to_string(app_->grpc_port());
  }

  void TearDown() override {
    app_.reset();
    fs::remove_all(data_dir_);
  }

  // septactl --server <septad> with no token but what `args` and `env` give.
  Outcome Septactl(std::vector<std::string> args, const Environment& env = {}) {
    args.insert(args.begin(), {"--server", server_});
    std::ostringstream out, err;
    const int code = RunSeptactl(args, env, out, err);
    return {code, out.str(), err.str()};
  }

  // septactl as the bootstrap admin.
  Outcome Admin(std::vector<std::string> args) {
    args.insert(args.begin(), {"--token", admin_token_});
    return Septactl(std::move(args));
  }

  // A command that must succeed, with JSON output parsed.
  nlohmann::json Json(std::vector<std::string> args, const std::string& token = "") {
    args.insert(args.begin(), {"-o", "json", "--token", token.empty() ? admin_token_ : token});
    const auto r = Septactl(std::move(args));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json();
  }

  std::unique_ptr<test::TestDatabase> db_;
  fs::path data_dir_;
  std::unique_ptr<app::SeptadApp> app_;
  std::string admin_token_;
  std::string server_;
};

void ExpectOneErrorLine(const Outcome& r, const std::string& prefix) {
  EXPECT_EQ(r.exit_code, kExitFailure);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind(prefix, 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST_F(SeptactlE2E, TierListAndGet) {
  const auto table = Admin({"tier", "list"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_EQ(table.out.rfind("NAME ", 0), 0u) << table.out;
  for (const char* tier : {"shared", "isolated", "dedicated", "exclusive"}) {
    EXPECT_NE(table.out.find(std::string("\n") + tier + " "), std::string::npos) << table.out;
  }
  const auto tier = Json({"tier", "get", "exclusive"});
  EXPECT_EQ(tier["name"], "exclusive");
  EXPECT_EQ(tier["gpu_sharing"], "WHOLE_NODE");
  ExpectOneErrorLine(Admin({"tier", "get", "platinum"}), "septactl: NOT_FOUND: ");
}

// The inventory septad synced from its simulated cluster before serving,
// with a whole GPU that a virtual cluster holds (its rows written straight to
// the store).
TEST_F(SeptactlE2E, InventoryListsNodesGpusLayoutsAndHolders) {
  ASSERT_EQ(Admin({"tenant", "create", "beta", "--tier", "dedicated"}).exit_code, 0);
  auto migrations = store::EmbeddedMigrations();
  ASSERT_TRUE(migrations.ok());
  store::PgStore store(store::PgStoreOptions{.database_url = db_->url(), .pool_size = 1, .migrations = *migrations});
  ASSERT_TRUE(store
                  .Transact(core::TxMode::kReadWrite,
                            [](core::Tx& tx) -> Status {
                              tenancy::VirtualCluster vc;
                              vc.tenant = "beta";
                              vc.name = "train";
                              vc.capacity.tier = gpu::Tier::kDedicated;
                              SEPTA_RETURN_IF_ERROR(tx.VirtualClusters().Insert(vc));
                              tenancy::Reservation r;
                              r.tenant = "beta";
                              r.vcluster = "train";
                              r.tier = gpu::Tier::kDedicated;
                              r.gpus = {{"a100-1", 3}};
                              return tx.Reservations().Insert(r);
                            })
                  .ok());

  const auto table = Admin({"inventory"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_EQ(table.out.rfind("NODE ", 0), 0u) << table.out;
  // The line of `node`'s GPU `gpu` ("-": a node without GPUs).
  auto row = [&](const std::string& node, const std::string& gpu) {
    std::istringstream lines(table.out);
    for (std::string line; std::getline(lines, line);) {
      std::istringstream words(line);
      std::string name, health, index;
      words >> name >> health >> index;
      if (name == node && index == gpu) return line;
    }
    ADD_FAILURE() << "no row for " << node << " GPU " << gpu << " in\n" << table.out;
    return std::string();
  };
  const std::string held = row("a100-1", "3");
  EXPECT_NE(held.find(" A100-80GB "), std::string::npos) << held;
  EXPECT_NE(held.find(" whole "), std::string::npos) << held;
  EXPECT_NE(held.find("gpu=beta/train"), std::string::npos) << held;
  EXPECT_EQ(row("a100-1", "2").find("beta"), std::string::npos);
  EXPECT_NE(row("h100-0", "7").find("1g.10gb@0 1g.10gb@1 2g.20gb@2 3g.40gb@4"), std::string::npos) << table.out;
  EXPECT_NE(row("cpu-0", "-").find(" - "), std::string::npos) << "a node without GPUs has a row of its own";

  const auto nodes = Json({"inventory"});
  EXPECT_EQ(nodes["nodes"].size(), 9u);
  const auto tenant = Json({"token", "create", "--principal", "tenant:beta", "--role", "owner"});
  ExpectOneErrorLine(Septactl({"--token", tenant["token"], "inventory"}), "septactl: PERMISSION_DENIED: ");
}

// GitOps through septactl over a real septad and PostgreSQL: a platform
// document applied twice changes nothing the second time; an edit outside
// Git shows in the next diff; a shortfall is refused naming the document;
// a stale plan is refused; prune spares what the CLI made imperatively.
TEST_F(SeptactlE2E, ApplyAndDiffDeclareThePlatform) {
  const fs::path dir = data_dir_ / "platform";
  fs::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& text) { std::ofstream(dir / name) << text; };
  write("10-tenants.yaml", R"(apiVersion: septa.dev/v1
kind: ApplySet
metadata: {name: prod}
---
apiVersion: septa.dev/v1
kind: Tenant
metadata: {name: iso, labels: {cost-center: "4711"}}
spec: {displayName: Isolated Research, trustTier: isolated, quota: {vclusters: 4}}
)");
  write("20-vclusters.yaml", R"(apiVersion: septa.dev/v1
kind: VirtualCluster
metadata: {name: train, tenant: iso}
spec:
  capacity: {mig: [{profile: 3g.40gb, count: 1}]}
  quota: {pods: 50}
)");
  const std::string files = dir.string();

  const auto plan = Admin({"diff", "-f", files});
  EXPECT_EQ(plan.exit_code, kExitChanges) << plan.err;
  EXPECT_NE(plan.out.find("tenants/iso/vclusters/train"), std::string::npos) << plan.out;
  EXPECT_NE(plan.out.find("Plan: 2 to create"), std::string::npos) << plan.out;
  ExpectOneErrorLine(Admin({"vcluster", "get", "iso", "train"}), "septactl: NOT_FOUND: ");

  const auto applied = Admin({"apply", "-f", files});
  ASSERT_EQ(applied.exit_code, kExitInSync) << applied.out << applied.err;
  EXPECT_EQ(Json({"vcluster", "get", "iso", "train"})["reservation"]["mig"].size(), 1u) << "placed on apply";
  const auto again = Admin({"apply", "-f", files, "--detailed-exitcode"});
  EXPECT_EQ(again.exit_code, kExitInSync) << "nothing changed: " << again.out;
  EXPECT_EQ(Admin({"diff", "-f", files}).exit_code, kExitInSync);

  // An edit outside Git shows in the diff with both values.
  ASSERT_EQ(Admin({"tenant", "update", "iso", "--display-name", "Renamed"}).exit_code, 0);
  const auto drift = Admin({"diff", "-f", files});
  EXPECT_EQ(drift.exit_code, kExitChanges);
  EXPECT_NE(drift.out.find("display_name"), std::string::npos) << drift.out;
  EXPECT_NE(drift.out.find("Renamed"), std::string::npos) << drift.out;
  EXPECT_NE(drift.out.find("drift: applyset.drift by admin via septactl at "), std::string::npos) << drift.out;
  EXPECT_NE(drift.out.find("tenant.update changed display_name"), std::string::npos) << drift.out;

  // A reviewed plan is applied exactly; after another edit it is stale.
  const auto json_plan = Admin({"diff", "-f", files, "-o", "json"});
  ASSERT_EQ(json_plan.exit_code, kExitChanges);
  std::ofstream(data_dir_ / "plan.json") << json_plan.out;
  ASSERT_EQ(Admin({"tenant", "update", "iso", "--display-name", "Renamed again"}).exit_code, 0);
  const auto stale = Admin({"apply", "-f", files, "--plan", (data_dir_ / "plan.json").string()});
  EXPECT_EQ(stale.exit_code, kExitNotApplicable) << stale.err;
  EXPECT_NE(stale.err.find("ABORTED"), std::string::npos) << stale.err;
  EXPECT_EQ(Json({"tenant", "get", "iso"})["display_name"], "Renamed again") << "nothing applied";

  // More MIG than the simulated cluster has: refused, naming the document, nothing written.
  write("30-huge.yaml", R"(apiVersion: septa.dev/v1
kind: VirtualCluster
metadata: {name: huge, tenant: iso}
spec: {capacity: {mig: [{profile: 7g.80gb, count: 500}]}}
)");
  const auto refused = Admin({"apply", "-f", files});
  EXPECT_EQ(refused.exit_code, kExitNotApplicable) << refused.out << refused.err;
  EXPECT_NE(refused.err.find("30-huge.yaml"), std::string::npos) << refused.err;
  EXPECT_EQ(Json({"tenant", "get", "iso"})["display_name"], "Renamed again") << "all or nothing";
  fs::remove(dir / "30-huge.yaml");

  // Prune removes the set's own member and spares a cluster made imperatively.
  ASSERT_EQ(Admin({"vcluster", "create", "iso", "manual", "--mig", "1g.10gb=1"}).exit_code, 0);
  fs::remove(dir / "20-vclusters.yaml");
  const auto pruned = Admin({"apply", "-f", files, "--prune"});
  ASSERT_EQ(pruned.exit_code, kExitInSync) << pruned.out << pruned.err;
  ExpectOneErrorLine(Admin({"vcluster", "get", "iso", "train"}), "septactl: NOT_FOUND: ");
  EXPECT_EQ(Json({"vcluster", "get", "iso", "manual"})["name"], "manual");
}

// A virtual cluster's life over gRPC, on the MIG GPUs of septad's simulated
// cluster. No provisioner runs, so it stays PROVISIONING: --wait gives up.
TEST_F(SeptactlE2E, VclusterLifecycle) {
  ASSERT_EQ(Admin({"tenant", "create", "iso", "--tier", "isolated"}).exit_code, 0);
  const auto created = Admin({"vcluster", "create", "iso", "train", "--mig", "3g.40gb=1", "--display-name", "Train"});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  EXPECT_EQ(created.out.rfind("NAME    TENANT   STATE          CAPACITY      RESERVED", 0), 0u) << created.out;
  EXPECT_NE(created.out.find("\ntrain   iso      PROVISIONING   1 x 3g.40gb   1 x 3g.40gb on h100-"), std::string::npos)
      << created.out;
  EXPECT_NE(created.out.find("CapacityReady=True (CapacityReserved)"), std::string::npos) << created.out;

  const auto got = Json({"vcluster", "get", "iso", "train"});
  EXPECT_EQ(got["display_name"], "Train");
  EXPECT_EQ(got["state"], "PROVISIONING");
  ASSERT_EQ(got["reservation"]["mig"].size(), 1u);
  EXPECT_EQ(got["reservation"]["mig"][0]["profile"], "3g.40gb");
  const std::string etag = got["etag"];

  ASSERT_EQ(Admin({"vcluster", "create", "iso", "infer", "--mig", "1g.10gb=1"}).exit_code, 0);
  const auto listed = Json({"vcluster", "list", "iso", "--page-size", "1"});  // both pages
  ASSERT_EQ(listed["virtual_clusters"].size(), 2u) << listed.dump();
  EXPECT_EQ(Json({"vcluster", "list", "iso", "--state", "READY"})["virtual_clusters"].size(), 0u);

  const auto resized = Json({"vcluster", "update", "iso", "train", "--mig", "3g.40gb=2", "--etag", etag});
  EXPECT_EQ(resized["capacity"]["mig"][0]["count"], 2);
  EXPECT_EQ(resized["reservation"]["mig"].size(), 2u);
  EXPECT_EQ(resized["display_name"], "Train");  // not in the mask, kept
  ExpectOneErrorLine(Admin({"vcluster", "update", "iso", "train", "--priority", "5", "--etag", etag}),
                     "septactl: FAILED_PRECONDITION: ");

  const auto deleted = Json({"vcluster", "delete", "iso", "infer"});
  EXPECT_EQ(deleted["state"], "DELETING");
  // Never provisioned on the host, it is gone at once.
  ExpectOneErrorLine(Admin({"vcluster", "get", "iso", "infer"}), "septactl: NOT_FOUND: ");
  const auto after = Json({"vcluster", "list", "iso"});
  ASSERT_EQ(after["virtual_clusters"].size(), 1u);
  EXPECT_EQ(after["virtual_clusters"][0]["name"], "train");
}

// vcluster kubeconfig prints the kubeconfig alone on stdout (a capped ttl
// is a note on stderr); credentials lists; revoke-credential revokes.
TEST_F(SeptactlE2E, VclusterKubeconfigCredentialsAndRevocation) {
  ASSERT_EQ(Admin({"tenant", "create", "iso", "--tier", "isolated"}).exit_code, 0);
  ASSERT_EQ(Admin({"vcluster", "create", "iso", "train", "--mig", "3g.40gb=1"}).exit_code, 0);
  ExpectOneErrorLine(Admin({"vcluster", "kubeconfig", "iso", "train", "--role", "view"}),
                     "septactl: FAILED_PRECONDITION: ");
  auto endpoint = test::MakeVclusterReady(*app_, db_->url(), "iso", "train");
  ASSERT_TRUE(endpoint.ok()) << endpoint.status().ToString();

  const auto issued = Admin({"vcluster", "kubeconfig", "iso", "train", "--role", "edit", "--ttl", "30m"});
  ASSERT_EQ(issued.exit_code, 0) << issued.err;
  EXPECT_EQ(issued.err, "");
  const YAML::Node kubeconfig = YAML::Load(issued.out);
  EXPECT_EQ(kubeconfig["clusters"][0]["cluster"]["server"].as<std::string>(), *endpoint);
  EXPECT_TRUE(kubeconfig["users"][0]["user"]["client-key-data"].IsScalar());

  // isolated caps at 8h.
  const auto capped = Admin({"vcluster", "kubeconfig", "iso", "train", "--role", "view", "--ttl", "100h"});
  ASSERT_EQ(capped.exit_code, 0) << capped.err;
  EXPECT_EQ(capped.err.rfind("note: --ttl 100h is longer than the trust tier allows; the certificate expires ", 0), 0u)
      << capped.err;
  EXPECT_TRUE(YAML::Load(capped.out)["users"].IsSequence());
  ExpectOneErrorLine(Admin({"vcluster", "kubeconfig", "iso", "train", "--role", "root"}),
                     "septactl: INVALID_ARGUMENT: ");

  const auto listed = Json({"vcluster", "credentials", "iso", "train"});
  ASSERT_EQ(listed["credentials"].size(), 2u) << listed.dump();
  const std::string serial = listed["credentials"][0]["serial"];
  const auto table = Admin({"vcluster", "credentials", "iso", "train"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_EQ(table.out.rfind("SERIAL", 0), 0u) << table.out;
  EXPECT_NE(table.out.find(serial), std::string::npos) << table.out;

  const auto revoked = Admin({"vcluster", "revoke-credential", "iso", "train", serial});
  ASSERT_EQ(revoked.exit_code, 0) << revoked.err;
  EXPECT_NE(revoked.out.find("credential " + serial + " of virtual cluster iso/train revoked"), std::string::npos)
      << revoked.out;
  EXPECT_TRUE(Json({"vcluster", "credentials", "iso", "train"})["credentials"][0].contains("revoke_time"));
  ExpectOneErrorLine(Admin({"vcluster", "revoke-credential", "iso", "train", std::string(32, '0')}),
                     "septactl: NOT_FOUND: ");
}

// A clock whose sleeps end at once at their deadline: --wait polls septad
// for real while no real time passes.
class SteppingClock final : public Clock {
 public:
  TimePoint Now() const override {
    std::lock_guard lock(mu_);
    return now_;
  }
  bool SleepUntil(TimePoint deadline, std::stop_token) const override {
    {
      std::lock_guard lock(mu_);
      now_ = std::max(now_, deadline);
      ++sleeps_;
    }
    if (on_sleep) on_sleep();
    return true;
  }
  std::function<void()> on_sleep;  // what happens in the world meanwhile
  int sleeps() const {
    std::lock_guard lock(mu_);
    return sleeps_;
  }

 private:
  mutable std::mutex mu_;
  mutable TimePoint now_{std::chrono::seconds(1'800'000'000)};
  mutable int sleeps_ = 0;
};

TEST_F(SeptactlE2E, VclusterWaitGivesUpWhileProvisioning) {
  ASSERT_EQ(Admin({"tenant", "create", "iso", "--tier", "isolated"}).exit_code, 0);
  SteppingClock clock;
  const auto r = Septactl({"--token", admin_token_, "vcluster", "create", "iso", "train", "--mig", "3g.40gb=1",
                           "--wait", "--timeout", "1s"},
                          Environment{.home = "", .septa_token = std::nullopt, .clock = &clock});
  EXPECT_EQ(r.exit_code, kExitWaitTimeout) << r.err;
  EXPECT_EQ(clock.sleeps(), 4) << "a poll every 250ms until the deadline";
  EXPECT_NE(r.out.find("\ntrain "), std::string::npos) << "the created virtual cluster is shown: " << r.out;
  EXPECT_EQ(r.err,
            "virtual cluster iso/train: PROVISIONING\n"
            "virtual cluster iso/train: CapacityReady True (CapacityReserved): the capacity is reserved on concrete "
            "GPUs\n"
            "septactl: DEADLINE_EXCEEDED: gave up waiting after 1s: virtual cluster iso/train is still PROVISIONING, "
            "CapacityReady=True (CapacityReserved: the capacity is reserved on concrete GPUs)\n");

  // Delete's wait ends as soon as it is DELETING.
  const auto deleted = Admin({"vcluster", "delete", "iso", "train", "--wait", "--timeout", "1s"});
  EXPECT_EQ(deleted.exit_code, 0) << deleted.err;
  EXPECT_EQ(deleted.err.rfind("virtual cluster iso/train: DELETING\n", 0), 0u) << deleted.err;
  ExpectOneErrorLine(Admin({"vcluster", "create", "iso", "x", "--gpus", "=1"}), "septactl: FAILED_PRECONDITION: ");
}

// The provisioner's part played straight on the store: the virtual cluster
// turns READY while septactl waits.
TEST_F(SeptactlE2E, VclusterWaitEndsWhenTheStateSettles) {
  ASSERT_EQ(Admin({"tenant", "create", "iso", "--tier", "isolated"}).exit_code, 0);
  auto migrations = store::EmbeddedMigrations();
  ASSERT_TRUE(migrations.ok());
  store::PgStore store(store::PgStoreOptions{.database_url = db_->url(), .pool_size = 1, .migrations = *migrations});
  SteppingClock clock;
  clock.on_sleep = [&] {
    const Status made_ready = store.Transact(core::TxMode::kReadWrite, [](core::Tx& tx) -> Status {
      auto vc = tx.VirtualClusters().Get("iso", "train");
      SEPTA_RETURN_IF_ERROR(vc);
      if (vc->state == tenancy::VirtualClusterState::kReady) return Status::Ok();
      tenancy::VirtualCluster next = *vc;
      next.state = tenancy::VirtualClusterState::kReady;
      next.version = vc->version + 1;
      return tx.VirtualClusters().Update(next, vc->version);
    });
    EXPECT_TRUE(made_ready.ok()) << made_ready.ToString();
  };
  const auto r = Septactl({"--token", admin_token_, "vcluster", "create", "iso", "train", "--mig", "3g.40gb=1",
                           "--wait", "--timeout", "1m"},
                          Environment{.home = "", .septa_token = std::nullopt, .clock = &clock});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(clock.sleeps(), 1);
  EXPECT_EQ(r.err,
            "virtual cluster iso/train: PROVISIONING\n"
            "virtual cluster iso/train: CapacityReady True (CapacityReserved): the capacity is reserved on concrete "
            "GPUs\n"
            "virtual cluster iso/train: READY\n");
  EXPECT_NE(r.out.find("\ntrain   iso      READY "), std::string::npos) << r.out;
}

// sleep and wake with --wait: each condition is shown as it turns, and the
// wait ends once the virtual cluster is asleep (Sleeping True for its
// generation) or awake. The provisioner's part is played on the store.
TEST_F(SeptactlE2E, VclusterSleepAndWakeWaitShowConditionsAsTheyTurn) {
  ASSERT_EQ(Admin({"tenant", "create", "iso", "--tier", "isolated"}).exit_code, 0);
  ASSERT_EQ(Admin({"vcluster", "create", "iso", "train", "--mig", "3g.40gb=1"}).exit_code, 0);
  auto migrations = store::EmbeddedMigrations();
  ASSERT_TRUE(migrations.ok());
  store::PgStore store(store::PgStoreOptions{.database_url = db_->url(), .pool_size = 1, .migrations = *migrations});
  // What the provisioner would write next: `change` on the row.
  auto provisioner = [&](const std::function<void(tenancy::VirtualCluster&)>& change) {
    const Status st = store.Transact(core::TxMode::kReadWrite, [&](core::Tx& tx) -> Status {
      auto vc = tx.VirtualClusters().Get("iso", "train");
      SEPTA_RETURN_IF_ERROR(vc);
      tenancy::VirtualCluster next = *vc;
      change(next);
      next.version = vc->version + 1;
      return tx.VirtualClusters().Update(next, vc->version);
    });
    EXPECT_TRUE(st.ok()) << st.ToString();
  };
  provisioner([](tenancy::VirtualCluster& vc) { vc.state = tenancy::VirtualClusterState::kReady; });
  ExpectOneErrorLine(Admin({"vcluster", "wake", "iso", "nobody"}), "septactl: NOT_FOUND: ");

  SteppingClock clock;
  int step = 0;
  clock.on_sleep = [&] {
    ++step;
    provisioner([&](tenancy::VirtualCluster& vc) {
      const bool stopped = step >= 2;
      tenancy::SetCondition(vc.conditions,
                            {"Sleeping",
                             stopped ? tenancy::ConditionStatus::kTrue : tenancy::ConditionStatus::kFalse,
                             stopped ? "WorkloadsStopped" : "StoppingWorkloads",
                             stopped ? "no workload runs on the host" : "3 host workload object(s) being deleted",
                             {},
                             vc.generation},
                            {});
    });
  };
  const Environment env{.home = "", .septa_token = std::nullopt, .clock = &clock};
  const auto asleep =
      Septactl({"--token", admin_token_, "vcluster", "sleep", "iso", "train", "--wait", "--timeout", "1m"}, env);
  EXPECT_EQ(asleep.exit_code, 0) << asleep.err;
  EXPECT_EQ(asleep.err,
            "virtual cluster iso/train: SLEEPING\n"
            "virtual cluster iso/train: CapacityReady True (CapacityReserved): the capacity is reserved on concrete "
            "GPUs\n"
            "virtual cluster iso/train: Sleeping False (StoppingWorkloads): 3 host workload object(s) being deleted\n"
            "virtual cluster iso/train: Sleeping True (WorkloadsStopped): no workload runs on the host\n");
  EXPECT_NE(asleep.out.find("\ntrain   iso      SLEEPING "), std::string::npos) << asleep.out;
  EXPECT_EQ(Json({"vcluster", "sleep", "iso", "train"})["state"], "SLEEPING");  // again: no change

  clock.on_sleep = [&] {
    provisioner([](tenancy::VirtualCluster& vc) {
      vc.state = tenancy::VirtualClusterState::kReady;
      tenancy::SetCondition(
          vc.conditions,
          {"Sleeping", tenancy::ConditionStatus::kFalse, "Awake", "the virtual cluster is awake", {}, vc.generation},
          {});
    });
  };
  const auto awake =
      Septactl({"--token", admin_token_, "vcluster", "wake", "iso", "train", "--wait", "--timeout", "1m"}, env);
  EXPECT_EQ(awake.exit_code, 0) << awake.err;
  EXPECT_NE(awake.err.find("virtual cluster iso/train: PROVISIONING\n"), std::string::npos) << awake.err;
  EXPECT_NE(awake.err.find("Sleeping False (Awake): the virtual cluster is awake\nvirtual cluster iso/train: READY\n"),
            std::string::npos)
      << awake.err;

  // A sleep that never ends gives up with exit code 3, naming the Sleeping condition.
  clock.on_sleep = nullptr;
  provisioner([](tenancy::VirtualCluster& vc) { vc.conditions.clear(); });
  const auto stuck =
      Septactl({"--token", admin_token_, "vcluster", "sleep", "iso", "train", "--wait", "--timeout", "1s"}, env);
  EXPECT_EQ(stuck.exit_code, kExitWaitTimeout) << stuck.err;
  EXPECT_NE(stuck.err.find("is still SLEEPING, no Sleeping condition"), std::string::npos) << stuck.err;
}

// apply --wait over septad and PostgreSQL: the provisioner's part (READY,
// FAILED, a deleted cluster's row gone) is played on the store while
// septactl polls; the plan stays on stdout, the progress on stderr.
TEST_F(SeptactlE2E, ApplyWaitsUntilItsVirtualClustersAreReadyOrGone) {
  const fs::path dir = data_dir_ / "platform";
  fs::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& text) { std::ofstream(dir / name) << text; };
  auto vcluster = [](const std::string& name) {
    return "apiVersion: septa.dev/v1\nkind: VirtualCluster\nmetadata: {name: " + name +
           ", tenant: iso}\nspec: {capacity: {mig: [{profile: 1g.10gb, count: 1}]}}\n";
  };
  write("10-tenants.yaml", R"(apiVersion: septa.dev/v1
kind: ApplySet
metadata: {name: prod}
---
apiVersion: septa.dev/v1
kind: Tenant
metadata: {name: iso}
spec: {trustTier: isolated}
)");
  write("20-train.yaml", vcluster("train"));
  write("21-eval.yaml", vcluster("eval"));
  const std::string files = dir.string();

  auto migrations = store::EmbeddedMigrations();
  ASSERT_TRUE(migrations.ok());
  store::PgStore store(store::PgStoreOptions{.database_url = db_->url(), .pool_size = 1, .migrations = *migrations});
  // What the provisioner would write: `change` on the row of iso/`name`; false: delete the row.
  auto provisioner = [&](const std::string& name, const std::function<bool(tenancy::VirtualCluster&)>& change) {
    const Status st = store.Transact(core::TxMode::kReadWrite, [&](core::Tx& tx) -> Status {
      auto vc = tx.VirtualClusters().Get("iso", name);
      SEPTA_RETURN_IF_ERROR(vc);
      tenancy::VirtualCluster next = *vc;
      if (!change(next)) {
        (void)tx.Reservations().Delete("iso", name);  // none, once released
        return tx.VirtualClusters().Delete("iso", name, vc->version);
      }
      next.version = vc->version + 1;
      return tx.VirtualClusters().Update(next, vc->version);
    });
    EXPECT_TRUE(st.ok()) << st.ToString();
  };
  const auto ready = [](tenancy::VirtualCluster& vc) {
    vc.state = tenancy::VirtualClusterState::kReady;
    return true;
  };
  SteppingClock clock;
  const Environment env{.home = "", .septa_token = std::nullopt, .clock = &clock};
  auto apply = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"--token", admin_token_, "apply", "-f", files, "--wait"});
    return Septactl(std::move(args), env);
  };

  // Created, then READY one after the other; -o json keeps stdout the plan.
  int step = 0;
  clock.on_sleep = [&] {
    ++step;
    if (step == 1) provisioner("train", ready);
    if (step == 2) provisioner("eval", ready);
  };
  const auto created = apply({"--timeout", "1m", "-o", "json"});
  EXPECT_EQ(created.exit_code, kExitInSync) << created.err;
  EXPECT_EQ(nlohmann::json::parse(created.out)["summary"]["creates"], 3) << created.out;
  EXPECT_EQ(clock.sleeps(), 2);
  EXPECT_NE(created.err.find("waiting for 2 virtual clusters: tenants/iso/vclusters/"), std::string::npos)
      << created.err;
  EXPECT_NE(created.err.find("\nwaiting for 1 virtual cluster: tenants/iso/vclusters/eval PROVISIONING\n"),
            std::string::npos)
      << created.err;
  EXPECT_TRUE(created.err.ends_with("\nwaited for 2 virtual clusters: 2 READY\n")) << created.err;

  // Nobody makes a new one READY: given up at --timeout, exit 4, naming it and its state.
  write("22-slow.yaml", vcluster("slow"));
  clock.on_sleep = nullptr;
  const int before_slow = clock.sleeps();
  const auto slow = apply({"--timeout", "1s"});
  EXPECT_EQ(slow.exit_code, kExitWaitTimedOut) << slow.err;
  EXPECT_EQ(clock.sleeps() - before_slow, 4) << "a poll every 250ms until the deadline";
  EXPECT_NE(slow.out.find("Applied: 1 created, 0 updated, 0 deleted, 3 unchanged."), std::string::npos) << slow.out;
  EXPECT_EQ(slow.err,
            "waiting for 1 virtual cluster: tenants/iso/vclusters/slow PROVISIONING\n"
            "septactl: DEADLINE_EXCEEDED: gave up waiting after 1s: 1 of 3 virtual clusters not ready\n"
            "  tenants/iso/vclusters/slow: PROVISIONING\n");

  // The pipeline's retry has nothing to apply, and still waits for it.
  clock.on_sleep = [&] { provisioner("slow", ready); };
  const auto retried = apply({});
  EXPECT_EQ(retried.exit_code, kExitInSync) << retried.err;
  EXPECT_NE(retried.out.find("No changes: 4 unchanged."), std::string::npos) << retried.out;
  EXPECT_EQ(retried.err,
            "waiting for 1 virtual cluster: tenants/iso/vclusters/slow PROVISIONING\n"
            "waited for 3 virtual clusters: 3 READY\n");

  // One that turns FAILED ends the wait at once, long before --timeout.
  write("23-doomed.yaml", vcluster("doomed"));
  clock.on_sleep = [&] {
    provisioner("doomed", [](tenancy::VirtualCluster& vc) {
      vc.on_host = true;  // provisioned, then failed: its delete waits for the host (DELETING)
      vc.state = tenancy::VirtualClusterState::kFailed;
      tenancy::SetCondition(vc.conditions,
                            {"CapacityReady",
                             tenancy::ConditionStatus::kFalse,
                             "MigRelayoutFailed",
                             "the GPU operator could not apply MIG config",
                             {},
                             vc.generation},
                            {});
      return true;
    });
  };
  const int before_doomed = clock.sleeps();
  const auto doomed = apply({"--timeout", "10m"});
  EXPECT_EQ(doomed.exit_code, kExitWaitTimedOut) << doomed.err;
  EXPECT_EQ(clock.sleeps() - before_doomed, 1);
  EXPECT_TRUE(doomed.err.ends_with(
      "septactl: FAILED_PRECONDITION: 1 of 4 virtual clusters can no longer become READY; stopped waiting\n"
      "  tenants/iso/vclusters/doomed: FAILED, CapacityReady=False (MigRelayoutFailed: the GPU operator could not "
      "apply MIG config)\n"))
      << doomed.err;

  // Pruned: DELETING while the host objects go, waited for until its row is gone.
  fs::remove(dir / "23-doomed.yaml");
  clock.on_sleep = [&] {
    provisioner("doomed", [](tenancy::VirtualCluster& vc) {
      EXPECT_EQ(vc.state, tenancy::VirtualClusterState::kDeleting);
      return false;
    });
  };
  const auto pruned = apply({"--prune"});
  EXPECT_EQ(pruned.exit_code, kExitInSync) << pruned.err;
  EXPECT_EQ(pruned.err,
            "waiting for 1 virtual cluster: tenants/iso/vclusters/doomed DELETING\n"
            "waited for 4 virtual clusters: 3 READY, 1 gone\n");
  ExpectOneErrorLine(Admin({"vcluster", "get", "iso", "doomed"}), "septactl: NOT_FOUND: ");
}

// applyset list and get: the set as its last apply left it; an imperative
// change to a member makes it OUT_OF_SYNC, naming who and the audit record
// (the record diff names too), and --exit-code makes that exit 1; the next
// apply brings it back to SYNCED.
TEST_F(SeptactlE2E, ApplySetGetNamesDriftUntilReapplied) {
  const fs::path dir = data_dir_ / "platform";
  fs::create_directories(dir);
  std::ofstream(dir / "platform.yaml") << R"(apiVersion: septa.dev/v1
kind: ApplySet
metadata: {name: prod}
---
apiVersion: septa.dev/v1
kind: Tenant
metadata: {name: iso}
spec: {displayName: Isolated Research, trustTier: isolated}
---
apiVersion: septa.dev/v1
kind: VirtualCluster
metadata: {name: train, tenant: iso}
spec: {capacity: {mig: [{profile: 1g.10gb, count: 1}]}, quota: {pods: 50}}
)";
  const std::string files = dir.string();
  const auto applied = Admin({"apply", "-f", files, "--source", "git@example.com:platform@3f9c2e1"});
  ASSERT_EQ(applied.exit_code, kExitInSync) << applied.err;

  const auto list = Admin({"applyset", "list"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(list.out.rfind("NAME             REVISION   MEMBERS   ON DRIFT   APPLIED BY   APPLIED   ", 0), 0u)
      << list.out;
  EXPECT_NE(list.out.find("\napplysets/prod   1          2         report     admin        "), std::string::npos)
      << list.out;
  EXPECT_NE(list.out.find("git@example.com:platform@3f9c2e1"), std::string::npos) << list.out;
  const auto sets = Json({"applyset", "list"});
  ASSERT_EQ(sets["apply_sets"].size(), 1u) << sets.dump();
  EXPECT_EQ(sets["apply_sets"][0]["members"], 2);

  const auto synced = Admin({"applyset", "get", "prod", "--exit-code"});
  EXPECT_EQ(synced.exit_code, kExitInSync) << synced.err;
  EXPECT_NE(synced.out.find(" SYNCED "), std::string::npos) << synced.out;
  EXPECT_EQ(std::count(synced.out.begin(), synced.out.end(), '\n'), 2) << "no member changed: " << synced.out;

  // Changed outside the set: by the admin, and by the tenant's owner.
  ASSERT_EQ(Admin({"tenant", "update", "iso", "--display-name", "Renamed"}).exit_code, 0);
  const auto owner = Json({"token", "create", "--principal", "tenant:iso", "--role", "owner"});
  const auto resized = Septactl({"--token", owner["token"], "vcluster", "update", "iso", "train", "--pods", "60"});
  ASSERT_EQ(resized.exit_code, 0) << resized.err;

  const auto drifted = Json({"applyset", "get", "prod"});
  EXPECT_EQ(drifted["sync_status"], "OUT_OF_SYNC") << drifted.dump();
  ASSERT_EQ(drifted["drifted"].size(), 2u) << drifted.dump();
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& member : drifted["drifted"]) by_name[member["name"]] = member;
  const auto& tenant = by_name["tenants/iso"]["drift"];
  EXPECT_EQ(tenant["principal"], "admin");
  EXPECT_EQ(tenant["action"], "applyset.drift");
  EXPECT_EQ(tenant["surface"], "septactl");
  EXPECT_EQ(tenant["detail"], "tenant.update changed display_name");
  EXPECT_NE(tenant["request_id"], "");
  const std::string audit_id = tenant["audit_id"];  // int64: a string in protobuf's JSON
  const auto& vc = by_name["tenants/iso/vclusters/train"]["drift"];
  EXPECT_EQ(vc["principal"], "tenant:iso");
  EXPECT_EQ(vc["action"], "applyset.drift");
  EXPECT_EQ(vc["detail"], "vcluster.update changed quota.pods");
  EXPECT_NE(vc["audit_id"], audit_id);
  EXPECT_NE(Admin({"diff", "-f", files}).out.find("drift: applyset.drift by admin via septactl at "),
            std::string::npos);
  EXPECT_NE(Admin({"diff", "-f", files}).out.find("(audit " + audit_id + ")"), std::string::npos)
      << "the record the plan names";

  const auto table = Admin({"applyset", "get", "prod"});
  EXPECT_EQ(table.exit_code, kExitInSync) << "drift alone is no failure: " << table.err;
  EXPECT_NE(table.out.find(" OUT_OF_SYNC "), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("\nCHANGED OUTSIDE THE SET "), std::string::npos) << table.out;
  std::string tenant_row;
  std::istringstream lines(table.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("tenants/iso ")) tenant_row = line;
  }
  for (const std::string& cell : {std::string(" Tenant "), std::string(" admin "), std::string(" applyset.drift "),
                                  " " + audit_id + " ", std::string(tenant["request_id"])}) {
    EXPECT_NE(tenant_row.find(cell), std::string::npos) << cell << " in " << table.out;
  }
  const auto exit_code = Admin({"applyset", "get", "prod", "--exit-code"});
  EXPECT_EQ(exit_code.exit_code, kExitChanges) << exit_code.err;
  EXPECT_EQ(exit_code.out, table.out) << "the same report";
  EXPECT_EQ(exit_code.err, "");

  // Applied again: what Git says, and nothing drifted since.
  const auto reapplied = Admin({"apply", "-f", files});
  ASSERT_EQ(reapplied.exit_code, kExitInSync) << reapplied.err;
  EXPECT_NE(reapplied.out.find("Applied: 0 created, 2 updated"), std::string::npos) << reapplied.out;
  const auto back = Admin({"applyset", "get", "prod", "--exit-code", "-o", "json"});
  EXPECT_EQ(back.exit_code, kExitInSync) << back.err;
  const auto set = nlohmann::json::parse(back.out);
  EXPECT_EQ(set["sync_status"], "SYNCED");
  EXPECT_EQ(set["revision"], "2");
  EXPECT_TRUE(set["drifted"].empty()) << back.out;

  // No such set: an error, 2 as every GitOps command's, never 1.
  const auto missing = Admin({"applyset", "get", "staging", "--exit-code"});
  EXPECT_EQ(missing.exit_code, kExitError);
  EXPECT_EQ(missing.err.rfind("septactl: NOT_FOUND: ", 0), 0u) << missing.err;
}

// A set locked in its ApplySet document refuses septactl's edit of what it
// owns, naming the set; an admin breaks glass with a reason, which the set
// reports as drift through septactl.
TEST_F(SeptactlE2E, ALockedSetRefusesTheEditUntilAnAdminBreaksGlass) {
  const fs::path dir = data_dir_ / "locked";
  fs::create_directories(dir);
  std::ofstream(dir / "platform.yaml") << R"(apiVersion: septa.dev/v1
kind: ApplySet
metadata: {name: prod}
spec: {onDrift: lock, protect: [VirtualCluster]}
---
apiVersion: septa.dev/v1
kind: Tenant
metadata: {name: iso}
spec: {displayName: Isolated Research, trustTier: isolated}
)";
  const auto plan = Admin({"diff", "-f", dir.string()});
  EXPECT_EQ(plan.exit_code, kExitChanges);
  EXPECT_NE(plan.out.find("  policy.on_drift: (none) -> lock\n"), std::string::npos) << plan.out;
  ASSERT_EQ(Admin({"apply", "-f", dir.string(), "--source", "git@example.com:platform@3f9c2e1"}).exit_code,
            kExitInSync);
  EXPECT_EQ(Json({"applyset", "get", "prod"})["policy"]["on_drift"], "LOCK");

  const auto refused = Admin({"tenant", "update", "iso", "--display-name", "Renamed"});
  ExpectOneErrorLine(refused, "septactl: FAILED_PRECONDITION: ");
  EXPECT_NE(refused.err.find("owned by apply set applysets/prod (from git@example.com:platform@3f9c2e1)"),
            std::string::npos)
      << refused.err;
  EXPECT_EQ(Json({"tenant", "get", "iso"})["display_name"], "Isolated Research");
  const auto two_lines = Admin({"--break-glass", "two\nlines", "tenant", "update", "iso", "--display-name", "x"});
  EXPECT_EQ(two_lines.exit_code, 2) << "a usage error";
  EXPECT_NE(two_lines.err.find("--break-glass: give the reason as 1-500 printable ASCII characters"), std::string::npos)
      << two_lines.err;

  const auto glass = Admin({"--break-glass", "incident 4711", "tenant", "update", "iso", "--display-name", "Renamed"});
  ASSERT_EQ(glass.exit_code, 0) << glass.err;
  const auto set = Json({"applyset", "get", "prod"});
  ASSERT_EQ(set["drifted"].size(), 1u) << set.dump();
  const auto& drift = set["drifted"][0]["drift"];
  EXPECT_EQ(drift["action"], "applyset.break_glass");
  EXPECT_EQ(drift["surface"], "septactl");
  EXPECT_EQ(drift["detail"], "tenant.update changed display_name; reason: incident 4711");
}

TEST_F(SeptactlE2E, TenantLifecycle) {
  const auto created =
      Admin({"tenant", "create", "acme", "--tier", "shared", "--display-name", "Acme Corp", "--label", "team=ml"});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  EXPECT_EQ(created.out.rfind("NAME   DISPLAY NAME   TIER     STATE    LABELS    CREATED", 0), 0u) << created.out;
  EXPECT_NE(created.out.find("\nacme   Acme Corp      shared   ACTIVE   team=ml   "), std::string::npos) << created.out;

  const auto got = Json({"tenant", "get", "acme"});
  EXPECT_EQ(got["display_name"], "Acme Corp");
  EXPECT_EQ(got["labels"], nlohmann::json({{"team", "ml"}}));
  const std::string etag = got["etag"];

  const auto updated = Json({"tenant", "update", "acme", "--display-name", "ACME", "--etag", etag});
  EXPECT_EQ(updated["display_name"], "ACME");
  EXPECT_EQ(updated["labels"], nlohmann::json({{"team", "ml"}}));  // not in the mask, kept
  EXPECT_NE(updated["etag"], etag);

  ExpectOneErrorLine(Admin({"tenant", "update", "acme", "--display-name", "late", "--etag", etag}),
                     "septactl: FAILED_PRECONDITION: ");
  ExpectOneErrorLine(Admin({"tenant", "delete", "acme", "--etag", etag}), "septactl: FAILED_PRECONDITION: ");

  const auto deleted = Admin({"tenant", "delete", "acme", "--etag", updated["etag"]});
  ASSERT_EQ(deleted.exit_code, 0) << deleted.err;
  EXPECT_EQ(deleted.out, "tenant \"acme\" deleted\n");
  ExpectOneErrorLine(Admin({"tenant", "get", "acme"}), "septactl: NOT_FOUND: ");
}

TEST_F(SeptactlE2E, TenantQuotaIsSetByAdminsAndShownWithItsUsage) {
  ASSERT_EQ(Admin({"tenant", "create", "iso", "--tier", "isolated", "--quota-vclusters", "3"}).exit_code, 0);
  const auto set = Admin({"tenant", "update", "iso", "--quota-gpus", "0.5"});
  ASSERT_EQ(set.exit_code, 0) << set.err;
  EXPECT_NE(set.out.find("gpus 0.500, vclusters 3"), std::string::npos) << set.out;  // kept: not in the mask
  ASSERT_EQ(Admin({"vcluster", "create", "iso", "train", "--mig", "3g.40gb=1"}).exit_code, 0);
  const auto got = Admin({"tenant", "get", "iso"});
  ASSERT_EQ(got.exit_code, 0) << got.err;
  // A 3g.40gb on a 7-slice H100 counts 3/7 of a GPU.
  EXPECT_NE(got.out.find("gpus 0.429/0.500, vclusters 1/3"), std::string::npos) << got.out;
  ExpectOneErrorLine(Admin({"vcluster", "create", "iso", "infer", "--mig", "1g.10gb=1"}),
                     "septactl: RESOURCE_EXHAUSTED: ");
  // The tenant's owner reads the quota but cannot change it.
  const std::string owner = Json({"token", "create", "--principal", "tenant:iso", "--role", "owner"})["token"];
  EXPECT_EQ(Json({"tenant", "get", "iso"}, owner)["quota"]["gpu_milli"], 500);
  ExpectOneErrorLine(Septactl({"--token", owner, "tenant", "update", "iso", "--quota-gpus", "8"}),
                     "septactl: PERMISSION_DENIED: ");
  const auto unlimited = Json({"tenant", "update", "iso", "--quota-gpus", "unlimited"});
  EXPECT_EQ(unlimited["quota"], nlohmann::json({{"vclusters", 3}}));
  ASSERT_EQ(Admin({"vcluster", "create", "iso", "infer", "--mig", "1g.10gb=1"}).exit_code, 0);
}

TEST_F(SeptactlE2E, UpdateChangesExactlyTheGivenFields) {
  ASSERT_EQ(
      Admin({"tenant", "create", "acme", "--tier", "shared", "--display-name", "Acme", "--label", "a=1"}).exit_code, 0);
  const auto suspended = Json({"tenant", "update", "acme", "--state", "SUSPENDED"});
  EXPECT_EQ(suspended["state"], "SUSPENDED");
  EXPECT_EQ(suspended["display_name"], "Acme");
  EXPECT_EQ(suspended["labels"], nlohmann::json({{"a", "1"}}));
  const auto moved = Json({"tenant", "update", "acme", "--tier", "isolated", "--label", "b=2"});
  EXPECT_EQ(moved["trust_tier"], "isolated");
  EXPECT_EQ(moved["labels"], nlohmann::json({{"b", "2"}}));
  EXPECT_EQ(moved["state"], "SUSPENDED");
}

TEST_F(SeptactlE2E, UnknownTierNamesTheField) {
  const auto r = Admin({"tenant", "create", "acme", "--tier", "platinum"});
  ExpectOneErrorLine(r, "septactl: INVALID_ARGUMENT: ");
  EXPECT_NE(r.err.find("platinum"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" (field: trust_tier)\n"), std::string::npos) << r.err;
}

TEST_F(SeptactlE2E, CreateWithIdempotencyKeyReturnsTheFirstResult) {
  const auto first = Json({"tenant", "create", "acme", "--tier", "shared", "--idempotency-key", "k-1"});
  const auto again = Json({"tenant", "create", "acme", "--tier", "shared", "--idempotency-key", "k-1"});
  EXPECT_EQ(again, first);
  ExpectOneErrorLine(Admin({"tenant", "create", "acme", "--tier", "shared"}), "septactl: ALREADY_EXISTS: ");
}

TEST_F(SeptactlE2E, ListPagesAndFilters) {
  for (const char* name : {"t-a", "t-b", "t-c"}) {
    ASSERT_EQ(Admin({"tenant", "create", name, "--tier", "shared"}).exit_code, 0);
  }
  ASSERT_EQ(Admin({"tenant", "create", "t-d", "--tier", "exclusive", "--label", "team=ml"}).exit_code, 0);

  const auto first = Admin({"tenant", "list", "--page-size", "2"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(std::count(first.out.begin(), first.out.end(), '\n'), 3) << first.out;  // header + 2
  EXPECT_EQ(first.err.rfind("more tenants: add --all, or --page-token ", 0), 0u) << first.err;

  const auto all = Json({"tenant", "list", "--page-size", "2", "--all"});
  ASSERT_EQ(all["tenants"].size(), 4u);
  EXPECT_EQ(all["next_page_token"], "");
  EXPECT_EQ(all["tenants"][3]["name"], "t-d");

  const auto page = Json({"tenant", "list", "--page-size", "3"});
  const auto rest = Json({"tenant", "list", "--page-token", page["next_page_token"]});
  ASSERT_EQ(rest["tenants"].size(), 1u);
  EXPECT_EQ(rest["tenants"][0]["name"], "t-d");

  const auto filtered = Json({"tenant", "list", "--filter", "labels.team=ml"});
  ASSERT_EQ(filtered["tenants"].size(), 1u);
  EXPECT_EQ(filtered["tenants"][0]["name"], "t-d");
  ExpectOneErrorLine(Admin({"tenant", "list", "--page-size", "501"}), "septactl: INVALID_ARGUMENT: ");
}

TEST_F(SeptactlE2E, YamlAgreesWithJson) {
  ASSERT_EQ(Admin({"tenant", "create", "acme", "--tier", "shared", "--label", "gpu=true"}).exit_code, 0);
  const auto json = Json({"tenant", "get", "acme"});
  const auto yaml = Admin({"-o", "yaml", "tenant", "get", "acme"});
  ASSERT_EQ(yaml.exit_code, 0) << yaml.err;
  const YAML::Node doc = YAML::Load(yaml.out);
  for (const auto& [key, value] : json.items()) {
    if (value.is_string()) {
      EXPECT_EQ(doc[key].as<std::string>(), value.get<std::string>()) << key;
    }
  }
  EXPECT_EQ(doc["labels"]["gpu"].as<std::string>(), "true");
  EXPECT_EQ(doc["labels"]["gpu"].Tag(), "!");  // quoted: a string, not a boolean
}

TEST_F(SeptactlE2E, TokenLifecycle) {
  ASSERT_EQ(Admin({"tenant", "create", "acme", "--tier", "shared"}).exit_code, 0);
  const auto shown =
      Admin({"token", "create", "--principal", "tenant:acme", "--role", "viewer", "--description", "ci"});
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_NE(shown.out.find("tenant:acme"), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find("shown only once"), std::string::npos) << shown.out;

  const auto issued = Json({"token", "create", "--principal", "tenant:acme", "--role", "viewer", "--ttl", "1h"});
  const std::string secret = issued["token"];
  const std::string id = issued["id"];
  ASSERT_FALSE(secret.empty());
  EXPECT_EQ(issued["role"], "viewer");
  EXPECT_TRUE(issued.contains("expire_time"));

  const auto listed = Json({"token", "list"});
  bool found = false;
  for (const auto& token : listed["tokens"]) {
    if (token["id"] == id) {
      found = true;
      EXPECT_EQ(token["token"], "");  // the secret is never listed
    }
  }
  EXPECT_TRUE(found) << listed.dump();

  // The new token works, within its role.
  EXPECT_EQ(Json({"tenant", "get", "acme"}, secret)["name"], "acme");
  ExpectOneErrorLine(Septactl({"--token", secret, "tenant", "delete", "acme"}), "septactl: PERMISSION_DENIED: ");

  const auto revoked = Admin({"token", "revoke", id});
  ASSERT_EQ(revoked.exit_code, 0) << revoked.err;
  EXPECT_EQ(revoked.out, "token " + id + " revoked\n");
  ExpectOneErrorLine(Septactl({"--token", secret, "tenant", "get", "acme"}), "septactl: UNAUTHENTICATED: ");
  ExpectOneErrorLine(Admin({"token", "create", "--principal", "tenant:nobody", "--role", "owner"}),
                     "septactl: INVALID_ARGUMENT: ");
}

TEST_F(SeptactlE2E, TenantMemberLifecycle) {
  ASSERT_EQ(Admin({"tenant", "create", "acme", "--tier", "shared"}).exit_code, 0);
  const auto added = Admin({"tenant", "member", "add", "acme", "user:alice@acme.test", "--role", "editor"});
  ASSERT_EQ(added.exit_code, 0) << added.err;
  EXPECT_EQ(added.out.rfind("MEMBER                 ROLE     CREATED", 0), 0u) << added.out;
  EXPECT_NE(added.out.find("\nuser:alice@acme.test   editor   "), std::string::npos) << added.out;
  ASSERT_EQ(Json({"tenant", "member", "add", "acme", "group:/eng/ml team", "--role", "viewer"})["member"],
            "group:/eng/ml team");

  const auto listed = Json({"tenant", "member", "list", "acme"});
  ASSERT_EQ(listed["members"].size(), 2u) << listed.dump();
  EXPECT_EQ(listed["members"][0]["member"], "group:/eng/ml team");
  EXPECT_EQ(listed["members"][1]["member"], "user:alice@acme.test");
  const std::string etag = listed["members"][1]["etag"];

  const auto owner = Json({"tenant", "member", "set-role", "acme", "user:alice@acme.test", "owner", "--etag", etag});
  EXPECT_EQ(owner["role"], "owner");
  EXPECT_NE(owner["etag"], etag);
  ExpectOneErrorLine(Admin({"tenant", "member", "set-role", "acme", "user:alice@acme.test", "viewer", "--etag", etag}),
                     "septactl: FAILED_PRECONDITION: ");
  ExpectOneErrorLine(Admin({"tenant", "member", "add", "acme", "user:alice@acme.test", "--role", "viewer"}),
                     "septactl: ALREADY_EXISTS: ");
  ExpectOneErrorLine(Admin({"tenant", "member", "add", "acme", "alice", "--role", "viewer"}),
                     "septactl: INVALID_ARGUMENT: member: must be user:<name> or group:<name>");

  // A viewer token reads them and may not change them.
  const std::string viewer = Json({"token", "create", "--principal", "tenant:acme", "--role", "viewer"})["token"];
  EXPECT_EQ(Json({"tenant", "member", "list", "acme"}, viewer)["members"].size(), 2u);
  ExpectOneErrorLine(Septactl({"--token", viewer, "tenant", "member", "remove", "acme", "group:/eng/ml team"}),
                     "septactl: PERMISSION_DENIED: a viewer may not remove tenant members");

  const auto removed = Admin({"tenant", "member", "remove", "acme", "group:/eng/ml team"});
  ASSERT_EQ(removed.exit_code, 0) << removed.err;
  EXPECT_EQ(removed.out, "member group:/eng/ml team removed from tenant \"acme\"\n");
  const auto csv = Admin({"-o", "csv", "tenant", "member", "list", "acme"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("member,role,created,updated,etag\r\nuser:alice@acme.test,owner,", 0), 0u) << csv.out;
  const auto yaml = YAML::Load(Admin({"-o", "yaml", "tenant", "member", "list", "acme"}).out);
  EXPECT_EQ(yaml["members"][0]["role"].as<std::string>(), "owner");
}

TEST_F(SeptactlE2E, JsonOfCallsWithoutResultIsAnEmptyObject) {
  ASSERT_EQ(Admin({"tenant", "create", "acme", "--tier", "shared"}).exit_code, 0);
  const auto r = Admin({"-o", "json", "tenant", "delete", "acme"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "{}\n");
}

TEST_F(SeptactlE2E, TokenSources) {
  ExpectOneErrorLine(Septactl({"tier", "list"}), "septactl: UNAUTHENTICATED: no token");
  ExpectOneErrorLine(Septactl({"--token", "septa_wrong", "tier", "list"}), "septactl: UNAUTHENTICATED: ");

  EXPECT_EQ(Septactl({"tier", "list"}, {"", admin_token_}).exit_code, 0);  // $SEPTA_TOKEN

  const fs::path home = data_dir_ / "home";
  fs::create_directories(home / ".config" / "septa");
  std::ofstream(home / ".config" / "septa" / "config.yaml")
      << "server: " << server_ << "\ntoken: " << admin_token_ << "\n";
  std::ostringstream out, err;
  EXPECT_EQ(RunSeptactl({"tier", "list"}, {home.string(), "septa_wrong"}, out, err), 0) << err.str();  // file over env
}

TEST_F(SeptactlE2E, StoppedServerIsUnavailableNamingIt) {
  app_->Shutdown(std::chrono::milliseconds(500));
  const auto r = Admin({"--timeout", "5s", "tier", "list"});
  ExpectOneErrorLine(r, "septactl: UNAVAILABLE: cannot reach septad at " + server_ + ": ");
}

}  // namespace
}  // namespace septa::cli
