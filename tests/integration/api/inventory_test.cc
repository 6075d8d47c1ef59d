// GET /v1/inventory/nodes and septa.v1.InventoryService on a whole septad
// whose inventory controller synced the simulated host cluster before it
// started serving: every node and GPU, and who holds what (reservation rows
// written straight to the store), for admins only.
#include <grpcpp/grpcpp.h>

#include <map>
#include <thread>

#include "septa/v1/inventory.grpc.pb.h"
#include "services/store/migration.h"
#include "services/store/pg_store.h"
#include "tests/integration/api/api_fixture.h"

namespace septa::test {
namespace {

using nlohmann::json;

class InventoryApiTest : public ApiTest {
 protected:
  // acme (isolated) holds the 3g.40gb instance of h100-0's GPU 0, beta
  // (dedicated) the whole GPU 3 of a100-1, gamma (shared) 500 milli-GPU of
  // t4-0's GPU 1, delta (exclusive) the whole node t4-1.
  void Reserve() {
    CreateTenant("acme", "isolated");
    CreateTenant("beta", "dedicated");
    CreateTenant("gamma", "shared");
    CreateTenant("delta", "exclusive");
    auto migrations = store::EmbeddedMigrations();
    ASSERT_TRUE(migrations.ok());
    store::PgStore store(store::PgStoreOptions{.database_url = db_->url(), .pool_size = 1, .migrations = *migrations});
    Status st = store.Transact(core::TxMode::kReadWrite, [](core::Tx& tx) -> Status {
      for (auto [tenant, name, tier] :
           {std::tuple{"acme", "infer", gpu::Tier::kIsolated}, std::tuple{"beta", "train", gpu::Tier::kDedicated},
            std::tuple{"gamma", "dev", gpu::Tier::kShared}, std::tuple{"delta", "own", gpu::Tier::kExclusive}}) {
        tenancy::VirtualCluster vc;
        vc.tenant = tenant;
        vc.name = name;
        vc.capacity.tier = tier;
        SEPTA_RETURN_IF_ERROR(tx.VirtualClusters().Insert(vc));
      }
      tenancy::Reservation mig;
      mig.tenant = "acme";
      mig.vcluster = "infer";
      mig.tier = gpu::Tier::kIsolated;
      mig.mig = {{"h100-0", 0, "3g.40gb", 4, 4}};
      SEPTA_RETURN_IF_ERROR(tx.Reservations().Insert(mig));
      tenancy::Reservation whole;
      whole.tenant = "beta";
      whole.vcluster = "train";
      whole.tier = gpu::Tier::kDedicated;
      whole.gpus = {{"a100-1", 3}};
      SEPTA_RETURN_IF_ERROR(tx.Reservations().Insert(whole));
      tenancy::Reservation share;
      share.tenant = "gamma";
      share.vcluster = "dev";
      share.tier = gpu::Tier::kShared;
      share.shares = {{"t4-0", 1, 500, 8000}};
      SEPTA_RETURN_IF_ERROR(tx.Reservations().Insert(share));
      tenancy::Reservation node;
      node.tenant = "delta";
      node.vcluster = "own";
      node.tier = gpu::Tier::kExclusive;
      node.nodes = {"t4-1"};
      return tx.Reservations().Insert(node);
    });
    ASSERT_TRUE(st.ok()) << st.ToString();
  }

  static const json& NodeNamed(const json& list, const std::string& name) {
    for (const auto& n : list["nodes"])
      if (n["name"] == name) return n;
    static const json none;
    ADD_FAILURE() << "no node " << name << " in " << list.dump();
    return none;
  }
};

TEST_F(InventoryApiTest, AdminsSeeEveryNodeFromTheStartAndWhoHoldsWhat) {
  auto before = Call(admin_, "GET", "/v1/inventory/nodes");
  ASSERT_EQ(before.status, 200) << before.body;
  json list = json::parse(before.body);
  ASSERT_EQ(list["nodes"].size(), 9u) << "the sample cluster, synced before septad served: " << before.body;
  EXPECT_EQ(list["nodes"][0]["name"], "a100-0") << "by name";

  Reserve();
  auto after = Call(admin_, "GET", "/v1/inventory/nodes");
  ASSERT_EQ(after.status, 200) << after.body;
  list = json::parse(after.body);
  const json& h100 = NodeNamed(list, "h100-0");
  EXPECT_EQ(h100["health"], "READY");
  EXPECT_EQ(h100["mig_config"], "all-balanced");
  EXPECT_EQ(h100["layout_settled"], true);
  ASSERT_EQ(h100["gpus"].size(), 8u);
  const json& instances = h100["gpus"][0]["mig_instances"];
  ASSERT_EQ(instances.size(), 4u) << h100.dump();
  EXPECT_EQ(instances[3], (json{{"profile", "3g.40gb"},
                                {"start", 4},
                                {"slices", 4},
                                {"holder", {{"tenant", "acme"}, {"vcluster", "infer"}, {"releasing", false}}}}));
  EXPECT_FALSE(instances[0].contains("holder")) << "1g.10gb@0 is free";
  EXPECT_FALSE(NodeNamed(list, "h100-1")["gpus"][0]["mig_instances"][3].contains("holder"));

  const json& a100 = NodeNamed(list, "a100-1");
  EXPECT_EQ(a100["gpus"][3]["holder"], (json{{"tenant", "beta"}, {"vcluster", "train"}, {"releasing", false}}));
  EXPECT_EQ(a100["gpus"][3]["model"], "A100-80GB");
  EXPECT_FALSE(a100["gpus"][2].contains("holder"));
  EXPECT_EQ(a100["gpus"][3]["mig_enabled"], false);
  EXPECT_EQ(a100["gpus"][3]["mig_instances"], json::array());

  const json& t4 = NodeNamed(list, "t4-0");
  EXPECT_EQ(t4["gpus"][1]["shares"],
            (json{{{"holder", {{"tenant", "gamma"}, {"vcluster", "dev"}, {"releasing", false}}},
                   {"milli_gpu", 500},
                   {"gpu_memory_mib", 8000}}}));
  EXPECT_EQ(t4["gpus"][0]["shares"], json::array());
  EXPECT_FALSE(t4.contains("holder"));
  EXPECT_EQ(NodeNamed(list, "t4-1")["holder"], (json{{"tenant", "delta"}, {"vcluster", "own"}, {"releasing", false}}));
}

// What is free for a tenant's tier, read by its own tokens: the same
// inventory the admins see, counted in that tier's kind only.
TEST_F(InventoryApiTest, TenantsSeeWhatIsFreeForTheirTierAndNoOneElses) {
  Reserve();
  const json list = json::parse(Call(admin_, "GET", "/v1/inventory/nodes").body);
  std::map<std::string, int> free_mig, free_gpus;  // by "model profile", by model
  for (const auto& n : list["nodes"]) {
    if (n["health"] != "READY" || n.contains("holder")) continue;
    // The engine's tier rule: whole GPUs never share a node with fractions or MIG instances.
    bool whole_held = false, shares_or_mig_held = false;
    for (const auto& g : n["gpus"]) {
      whole_held = whole_held || g.contains("holder");
      shares_or_mig_held = shares_or_mig_held || !g["shares"].empty();
      for (const auto& i : g["mig_instances"]) shares_or_mig_held = shares_or_mig_held || i.contains("holder");
    }
    for (const auto& g : n["gpus"]) {
      if (g["mig_enabled"] == true) {
        if (n["layout_settled"] != true || whole_held) continue;
        for (const auto& i : g["mig_instances"]) {
          if (!i.contains("holder")) ++free_mig[g["model"].get<std::string>() + " " + i["profile"].get<std::string>()];
        }
      } else if (!g.contains("holder") && !shares_or_mig_held) {
        ++free_gpus[g["model"].get<std::string>()];
      }
    }
  }
  ASSERT_FALSE(free_mig.empty());

  auto acme = Call(CreateToken("tenant:acme", "viewer"), "GET", "/v1/tenants/acme/free-capacity");
  ASSERT_EQ(acme.status, 200) << acme.body;
  const json isolated = json::parse(acme.body);
  EXPECT_EQ(isolated["gpu_sharing"], "MIG");
  std::map<std::string, int> served;
  for (const auto& c : isolated["mig"])
    served[c["model"].get<std::string>() + " " + c["profile"].get<std::string>()] = c["count"];
  EXPECT_EQ(served, free_mig) << acme.body;
  EXPECT_TRUE(isolated["gpus"].empty() && isolated["nodes"].empty() && isolated["shared"].empty())
      << "only its tier's kind: " << acme.body;

  auto beta = Call(CreateToken("tenant:beta", "owner"), "GET", "/v1/tenants/beta/free-capacity");
  ASSERT_EQ(beta.status, 200) << beta.body;
  const json dedicated = json::parse(beta.body);
  std::map<std::string, int> whole;
  for (const auto& c : dedicated["gpus"]) whole[c["model"].get<std::string>()] = c["count"];
  EXPECT_EQ(whole, free_gpus) << beta.body;

  ExpectProblem(Call(CreateToken("tenant:beta", "owner"), "GET", "/v1/tenants/acme/free-capacity"), 404, "",
                "another tenant's");
  // Admins read every kind at once, by the same rules.
  auto every = Call(admin_, "GET", "/v1/inventory/free-capacity");
  ASSERT_EQ(every.status, 200) << every.body;
  const json by_sharing = json::parse(every.body)["by_sharing"];
  ASSERT_EQ(by_sharing.size(), 4u) << every.body;
  EXPECT_EQ(by_sharing[1], isolated);
  EXPECT_EQ(by_sharing[2], dedicated);
  EXPECT_EQ(Call(admin_, "GET", "/v1/tenants/gamma/free-capacity").status, 200);
  ExpectProblem(Call(admin_, "GET", "/v1/tenants/nobody/free-capacity"), 404, "", "no such tenant");
}

TEST_F(InventoryApiTest, PagesFollowTheToken) {
  auto first = Call(admin_, "GET", "/v1/inventory/nodes?page_size=5");
  ASSERT_EQ(first.status, 200) << first.body;
  json one = json::parse(first.body);
  ASSERT_EQ(one["nodes"].size(), 5u);
  auto second =
      Call(admin_, "GET", "/v1/inventory/nodes?page_size=5&page_token=" + one["next_page_token"].get<std::string>());
  ASSERT_EQ(second.status, 200) << second.body;
  json two = json::parse(second.body);
  ASSERT_EQ(two["nodes"].size(), 4u);
  EXPECT_EQ(two["next_page_token"], "") << "the last page";
  EXPECT_LT(one["nodes"][4]["name"].get<std::string>(), two["nodes"][0]["name"].get<std::string>());

  auto bad = Call(admin_, "GET", "/v1/inventory/nodes?page_size=1001");
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("page_size: must be between 1 and 1000"), std::string::npos) << bad.body;
  // Not a number: named, and no other route's limit (it once said "between 1 and 500" here).
  bad = Call(admin_, "GET", "/v1/inventory/nodes?page_size=ten");
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("page_size: must be an integer"), std::string::npos) << bad.body;
  EXPECT_EQ(bad.body.find("500"), std::string::npos) << bad.body;
  bad = Call(admin_, "GET", "/v1/inventory/nodes?page_token=bogus");
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.find("page_token"), std::string::npos) << bad.body;
}

TEST_F(InventoryApiTest, GrpcServesTheSameAndRefusesTenants) {
  Reserve();
  auto channel =
      grpc::CreateChannel("127.0.0.1:" + std::to_string(app_->grpc_port()), grpc::InsecureChannelCredentials());
  auto stub = v1::InventoryService::NewStub(channel);
  auto call = [&](const std::string& token, v1::ListNodesResponse& out) {
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", "Bearer " + token);
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return stub->ListNodes(&ctx, v1::ListNodesRequest(), &out);
  };
  v1::ListNodesResponse nodes;
  ASSERT_TRUE(call(admin_, nodes).ok());
  ASSERT_EQ(nodes.nodes_size(), 9);
  const v1::InventoryNode& a100 = nodes.nodes(1);
  ASSERT_EQ(a100.name(), "a100-1");
  EXPECT_EQ(a100.gpus(3).holder().tenant(), "beta");
  EXPECT_EQ(a100.gpus(3).holder().vcluster(), "train");

  v1::ListNodesResponse refused;
  EXPECT_EQ(call(CreateToken("tenant:acme", "owner"), refused).error_code(), grpc::StatusCode::PERMISSION_DENIED);
  auto rest = Call(CreateToken("tenant:beta", "owner"), "GET", "/v1/inventory/nodes");
  EXPECT_EQ(rest.status, 403) << rest.body;
}

// A MIG re-layout end to end: an isolated virtual cluster asks for a profile
// that no current layout of the simulated cluster has (its H100s are
// all-balanced: 3g.40gb, 2g.20gb and two 1g.10gb); it is reserved on a
// layout target at once, PROVISIONING with CapacityReady=False; the MIG
// layout controller has kubesim's MIG manager apply it; then CapacityReady
// turns True and the inventory shows the new layout and who holds it.
TEST_F(InventoryApiTest, AProfileNoLayoutHasIsMadeByAMigReLayout) {
  CreateTenant("acme", "isolated");
  auto created = Call(admin_, "POST", "/v1/tenants/acme/vclusters",
                      json{{"name", "big"}, {"capacity", {{"mig", {{{"profile", "4g.40gb"}, {"count", 1}}}}}}}.dump());
  ASSERT_EQ(created.status, 201) << created.body;
  json vc = json::parse(created.body);
  EXPECT_EQ(vc["state"], "PROVISIONING");
  auto condition = [](const json& v) {
    for (const auto& c : v["conditions"])
      if (c["type"] == "CapacityReady") return c;
    return json();
  };
  EXPECT_EQ(condition(vc)["status"], "False") << created.body;
  EXPECT_EQ(condition(vc)["reason"], "MigRelayout") << created.body;
  ASSERT_EQ(vc["reservation"]["mig"].size(), 1u) << created.body;
  const json held = vc["reservation"]["mig"][0];
  const std::string node = held["node"];
  const int gpu = held["gpu"];
  EXPECT_EQ(condition(vc)["message"],
            "the capacity is reserved; re-laying out MIG on " + node + " GPU " + std::to_string(gpu));

  // kubesim's MIG manager takes 2 s; the controller looks every 2 s.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (condition(vc)["status"] != "True" && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    auto got = Call(admin_, "GET", "/v1/tenants/acme/vclusters/big");
    ASSERT_EQ(got.status, 200) << got.body;
    vc = json::parse(got.body);
  }
  ASSERT_EQ(condition(vc)["status"], "True") << vc.dump();
  EXPECT_EQ(condition(vc)["reason"], "CapacityReserved");
  EXPECT_EQ(vc["state"], "PROVISIONING");

  auto inventory = Call(admin_, "GET", "/v1/inventory/nodes?page_size=100");
  ASSERT_EQ(inventory.status, 200) << inventory.body;
  const json list = json::parse(inventory.body);
  const json& relaid = NodeNamed(list, node);
  EXPECT_TRUE(relaid["mig_config"].get<std::string>().starts_with("septa-")) << relaid.dump();
  EXPECT_EQ(relaid["layout_settled"], true);
  bool found = false;
  for (const auto& instance : relaid["gpus"][gpu]["mig_instances"]) {
    if (instance["profile"] != "4g.40gb") continue;
    found = true;
    EXPECT_EQ(instance["start"], held["start"]);
    EXPECT_EQ(instance["holder"], (json{{"tenant", "acme"}, {"vcluster", "big"}, {"releasing", false}}));
  }
  EXPECT_TRUE(found) << relaid["gpus"][gpu].dump();
  // The node's other GPUs kept their all-balanced layout.
  EXPECT_EQ(relaid["gpus"][gpu == 0 ? 1 : 0]["mig_instances"].size(), 4u);
}

}  // namespace
}  // namespace septa::test
