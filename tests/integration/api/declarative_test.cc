// GitOps' Diff and Apply over REST on a whole septad with a real PostgreSQL,
// as a hostile tenant would call them: another tenant's objects stay out of
// reach and untouched, oversized and malformed requests are refused naming
// the field with nothing written, and the whole request is one transaction.
// (Semantics: tests/unit/services/core/apply_service_test.cc; septactl's
// end to end: tests/integration/cli/septactl_test.cc.)
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <thread>

#include "tests/integration/api/api_fixture.h"

namespace septa::test {
namespace {

using json = nlohmann::json;

json Cluster(const std::string& tenant, const std::string& name, int gpus) {
  return {{"virtual_cluster", {{"tenant", tenant}, {"name", name}, {"capacity", {{"gpus", {{"count", gpus}}}}}}}};
}

class DeclarativeTest : public ApiTest {
 protected:
  void SetUp() override {
    ApiTest::SetUp();
    if (HasFatalFailure()) return;
    PutNodes({WholeGpuNode("a100-0", 4)});
    CreateTenant("acme", "dedicated");
    CreateTenant("beta", "dedicated");
    acme_ = CreateToken("tenant:acme", "owner");
    beta_ = CreateToken("tenant:beta", "owner");
  }

  HttpResult Apply(const std::string& token, const std::string& set, const json& body) {
    return Call(token, "POST", "/v1/applysets/" + set + ":apply", body.dump());
  }

  long Count(const std::string& query) {
    pqxx::connection c(db_->url());
    pqxx::nontransaction tx(c);
    return tx.exec1(query)[0].as<long>();
  }

  std::string acme_, beta_;
};

TEST_F(DeclarativeTest, ATenantsSetCannotReachAnotherTenantAndLeavesItUntouched) {
  auto mine = Apply(acme_, "git", {{"objects", json::array({Cluster("acme", "train", 1)})}});
  ASSERT_EQ(mine.status, 200) << mine.body;
  EXPECT_EQ(json::parse(mine.body)["apply_set"], "tenants/acme/applysets/git");
  const std::string version = json::parse(Call(acme_, "GET", "/v1/tenants/acme/vclusters/train").body)["etag"];

  // beta, declaring acme's cluster in a set of the same name, then pruning its own set.
  auto theirs = Apply(beta_, "git", {{"objects", json::array({Cluster("acme", "train", 3)})}});
  ExpectProblem(theirs, 404, "objects[0]", "another tenant's cluster is not found");
  auto prune = Apply(beta_, "git", {{"prune", true}, {"allow_empty", true}});
  EXPECT_EQ(prune.status, 200) << prune.body;
  auto plan = Call(beta_, "POST", "/v1/applysets/git:diff",
                   json{{"objects", json::array({Cluster("acme", "train", 3)})}}.dump());
  ASSERT_EQ(plan.status, 200) << plan.body;
  EXPECT_EQ(json::parse(plan.body)["changes"][0]["action"], "REFUSED");
  EXPECT_EQ(json::parse(plan.body)["changes"][0]["code"], "NOT_FOUND");

  auto after = json::parse(Call(acme_, "GET", "/v1/tenants/acme/vclusters/train").body);
  EXPECT_EQ(after["etag"], version) << "acme's cluster is untouched";
  auto set = Call(acme_, "GET", "/v1/applysets/git");
  ASSERT_EQ(set.status, 200) << set.body;
  EXPECT_EQ(json::parse(set.body)["sync_status"], "SYNCED") << set.body;
  EXPECT_EQ(json::parse(set.body)["members"], 1);
  EXPECT_EQ(Call(beta_, "GET", "/v1/applysets/git").status, 404) << "beta's apply changed nothing: no set";
  EXPECT_EQ(Count("SELECT count(*) FROM apply_set_members WHERE set_tenant = 'acme'"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM apply_set_members WHERE set_tenant = 'beta'"), 0);
}

TEST_F(DeclarativeTest, BadAndOversizedRequestsAreRefusedNamingTheFieldAndWriteNothing) {
  // More than the body limit (4 KiB in this fixture; 1 MiB by default, which
  // holds the 2,000 objects a request may declare: ApplyServiceTest bounds those).
  json many = json::array();
  for (int i = 0; i < 200; ++i) many.push_back(Cluster("acme", "c" + std::to_string(i), 1));
  EXPECT_EQ(Apply(acme_, "git", {{"objects", many}}).status, 413);
  // An object with an unknown field, one with no resource, an output-only field declared.
  json unknown = Cluster("acme", "train", 1);
  unknown["virtual_cluster"]["gpuz"] = 1;
  EXPECT_EQ(Apply(acme_, "git", {{"objects", json::array({unknown})}}).status, 400);
  ExpectProblem(Apply(acme_, "git", {{"objects", json::array({json{{"adopt", true}}})}}), 400, "objects[0].resource",
                "no resource");
  json output_only = Cluster("acme", "train", 1);
  output_only["declared_fields"] = "capacity,etag";
  ExpectProblem(Apply(acme_, "git", {{"objects", json::array({output_only})}}), 400, "objects[0].etag",
                "an output-only field");
  // A bad set name, and the same object twice.
  ExpectProblem(Apply(acme_, "Not_A_Set", {{"objects", json::array({Cluster("acme", "train", 1)})}}), 400, "apply_set",
                "a bad set name");
  ExpectProblem(Apply(acme_, "git", {{"objects", json::array({Cluster("acme", "a", 1), Cluster("acme", "a", 2)})}}),
                400, "objects[1]", "a duplicate");
  // One good object beside one that does not fit: neither is written.
  auto shortfall =
      Apply(acme_, "git", {{"objects", json::array({Cluster("acme", "fits", 1), Cluster("acme", "toobig", 500)})}});
  ExpectProblem(shortfall, 429, "objects[1].capacity.gpus.count", "a shortfall");
  EXPECT_NE(shortfall.body.find("\"1 object refused, nothing applied: tenants/acme/vclusters/toobig: "),
            std::string::npos)
      << shortfall.body;

  EXPECT_EQ(Count("SELECT count(*) FROM virtual_clusters"), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM apply_sets"), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM reservations"), 0);
}

// Two pipelines apply overlapping sets at once, again and again: each round
// ends with the cluster in exactly one set, the other apply refused as a
// conflict (409) and nothing of it written — never both, never neither.
TEST_F(DeclarativeTest, TwoPipelinesApplyingOverlappingSetsAtOnceEndConsistent) {
  for (int round = 0; round < 8; ++round) {
    const std::string name = "shared-" + std::to_string(round);
    const json body = {{"objects", json::array({Cluster("acme", name, 1)})}};
    // A connection each (the fixture's client is one connection).
    auto apply = [&](const std::string& set) {
      HttpClient client(app_->http_port());
      return client.Send("POST", "/v1/applysets/" + set + ":apply", body.dump(),
                         {{"Authorization", "Bearer " + admin_}});
    };
    HttpResult a, b;
    std::thread first([&] { a = apply("pipeline-a"); });
    std::thread second([&] { b = apply("pipeline-b"); });
    first.join();
    second.join();
    ASSERT_TRUE((a.status == 200 && b.status == 409) || (a.status == 409 && b.status == 200))
        << "round " << round << ": " << a.status << " " << a.body << " / " << b.status << " " << b.body;
    const std::string winner = a.status == 200 ? "pipeline-a" : "pipeline-b";
    EXPECT_EQ(Count("SELECT count(*) FROM apply_set_members WHERE resource = 'tenants/acme/vclusters/" + name +
                    "' AND set_name = '" + winner + "'"),
              1);
    EXPECT_EQ(Count("SELECT count(*) FROM virtual_clusters WHERE name = '" + name + "'"), 1);
  }
}

}  // namespace
}  // namespace septa::test
