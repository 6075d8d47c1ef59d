// GitOps' Diff and Apply over REST on a whole septad with a real PostgreSQL,
// as a hostile tenant would call them: another tenant's objects stay out of
// reach and untouched, oversized and malformed requests are refused naming
// the field with nothing written, and the whole request is one transaction.
// (Semantics: tests/unit/services/core/apply_service_test.cc; septactl's
// end to end: tests/integration/cli/septactl_test.cc.)
#include <algorithm>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <thread>

#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <cstdio>

#include "services/base/base64.h"
#include "services/kube/client.h"
#include "services/kube/config.h"
#include "services/kube/resources.h"
#include "services/store/embedded_postgres.h"
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
    // septad's log, kept to look for secrets in; added before septad's
    // threads log and removed after they stopped (spdlog's sink list is
    // not safe to change while others log).
    spdlog::default_logger()->sinks().push_back(log_);
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

  // The cluster's GPUs as the API shows them.
  int GpusOf(const std::string& name) {
    auto r = Call(acme_, "GET", "/v1/tenants/acme/vclusters/" + name);
    EXPECT_EQ(r.status, 200) << r.body;
    return json::parse(r.body)["capacity"]["gpus"]["count"].get<int>();
  }

  HttpResult Resize(const std::string& token, const std::string& name, int gpus,
                    std::map<std::string, std::string> headers = {}) {
    return Call(token, "PATCH", "/v1/tenants/acme/vclusters/" + name + "?update_mask=capacity",
                json{{"capacity", {{"gpus", {{"count", gpus}}}}}}.dump(), std::move(headers));
  }

  void TearDown() override {
    ApiTest::TearDown();
    auto& sinks = spdlog::default_logger()->sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), log_), sinks.end());
  }

  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> log_ = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(100000);
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

// The drift policies over REST: a locked set refuses the tenant's own edit
// of what it owns until an admin breaks glass (audited, shown as drift with
// its surface); a reverting set's controller writes an edit back at once
// and counts it in /metrics.
TEST_F(DeclarativeTest, ALockedSetRefusesTheRestEditAndARevertingSetUndoesIt) {
  const json locked = {{"objects", json::array({Cluster("acme", "train", 1)})},
                       {"policy", {{"on_drift", "LOCK"}}},
                       {"source", "git@example.com:acme/platform@3f9c2e1"}};
  ASSERT_EQ(Apply(acme_, "git", locked).status, 200);
  auto refused = Resize(acme_, "train", 2);
  ExpectProblem(refused, 412, "capacity", "a locked field");
  EXPECT_NE(refused.body.find("tenants/acme/applysets/git (from git@example.com:acme/platform@3f9c2e1)"),
            std::string::npos)
      << refused.body;
  ExpectProblem(Resize(acme_, "train", 2, {{"Septa-Break-Glass", "mine"}}), 403, "", "a tenant breaking glass");
  ExpectProblem(Resize(admin_, "train", 2, {{"Septa-Break-Glass", std::string(501, 'x')}}), 400, "Septa-Break-Glass",
                "an oversized reason");
  EXPECT_EQ(GpusOf("train"), 1);
  EXPECT_EQ(Count("SELECT count(*) FROM audit_log WHERE action IN ('applyset.drift', 'applyset.break_glass')"), 0)
      << "nothing written";

  auto broken = Resize(admin_, "train", 2, {{"Septa-Break-Glass", "incident 4711"}});
  ASSERT_EQ(broken.status, 200) << broken.body;
  auto set = json::parse(Call(acme_, "GET", "/v1/applysets/git").body);
  EXPECT_EQ(set["sync_status"], "OUT_OF_SYNC") << set;
  EXPECT_EQ(set["policy"]["on_drift"], "LOCK") << set;
  const json drift = set["drifted"][0]["drift"];
  EXPECT_EQ(drift["principal"], "admin");
  EXPECT_EQ(drift["surface"], "rest");
  EXPECT_EQ(drift["action"], "applyset.break_glass");
  EXPECT_EQ(drift["detail"], "vcluster.update changed capacity; reason: incident 4711");
  auto plan = json::parse(Call(acme_, "POST", "/v1/applysets/git:diff", locked.dump()).body);
  EXPECT_EQ(plan["changes"][0]["drift"]["audit_id"], drift["audit_id"]) << "Diff names the same record";

  // A reverting set: the tenant's edit goes through, and is undone.
  const json reverting = {{"objects", json::array({Cluster("acme", "auto", 1)})}, {"policy", {{"on_drift", "REVERT"}}}};
  ASSERT_EQ(Apply(acme_, "auto", reverting).status, 200);
  ASSERT_EQ(Resize(acme_, "auto", 2).status, 200);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (GpusOf("auto") != 1 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the controller's transaction, not a guess
  }
  EXPECT_EQ(GpusOf("auto"), 1) << "reverted";
  auto reverted = json::parse(Call(acme_, "GET", "/v1/applysets/auto").body);
  EXPECT_EQ(reverted["sync_status"], "SYNCED") << reverted;
  EXPECT_EQ(reverted["applied_by"], "system:applyset-revert") << reverted;
  const std::string metrics = Call(admin_, "GET", "/metrics").body;
  EXPECT_NE(metrics.find("septa_applyset_drift_total{set=\"tenants/acme/applysets/auto\",surface=\"rest\"} 1"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("septa_applyset_drift_total{set=\"tenants/acme/applysets/git\",surface=\"rest\"} 1"),
            std::string::npos);
  EXPECT_NE(metrics.find("septa_applyset_out_of_sync_objects{set=\"tenants/acme/applysets/auto\"} 0"),
            std::string::npos);
  EXPECT_NE(metrics.find("septa_applyset_out_of_sync_objects{set=\"tenants/acme/applysets/git\"} 1"),
            std::string::npos);
}

// A token declared in Git over REST: septad mints it and writes its
// secret to a Secret of the (simulated) host cluster, where a pipeline
// reads it and calls the API; the secret is in no answer, no log line, no
// audit row and nowhere in pg_dump. A Secret septad did not make is never
// overwritten.
TEST_F(DeclarativeTest, ADeclaredTokenReachesOnlyItsSecretAndNeverTakesAnotherOne) {
  auto config = kube::LoadKubeconfig(app_->kubeconfig_path());
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  auto host = kube::Client::Create(*config);
  ASSERT_TRUE(host.ok());
  const json foreign = {{"apiVersion", "v1"},
                        {"kind", "Secret"},
                        {"metadata", {{"name", "theirs"}, {"namespace", "default"}}},
                        {"data", {{"token", base::Base64Encode("not septa's")}}}};
  ASSERT_TRUE((*host)->Create(kube::kSecrets, "default", foreign).ok());

  auto token = [](const std::string& name, const std::string& secret) {
    return json{{"api_token",
                 {{"name", name},
                  {"principal", "tenant:acme"},
                  {"role", "viewer"},
                  {"ttl", "2h"},
                  {"deliver_to", {{"kubernetes_secret", {{"namespace", "default"}, {"name", secret}}}}}}}};
  };
  const json body = {{"objects", json::array({token("ci", "septa-ci"), token("grabby", "theirs")})}};
  auto plan = Call(admin_, "POST", "/v1/applysets/platform:diff", body.dump());
  ASSERT_EQ(plan.status, 200) << plan.body;
  EXPECT_EQ(json::parse(plan.body)["changes"][0]["kind"], "ApiToken");
  auto applied = Call(admin_, "POST", "/v1/applysets/platform:apply", body.dump());
  ASSERT_EQ(applied.status, 200) << applied.body;
  EXPECT_EQ(Apply(acme_, "mine", {{"objects", json::array({token("own", "septa-own")})}}).status, 403)
      << "a tenant's set declares no token";

  // The pipeline's side: the Secret, once septad has written it.
  std::string secret;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (secret.empty() && std::chrono::steady_clock::now() < deadline) {
    auto got = (*host)->Get(kube::kSecrets, "default", "septa-ci");
    if (got.ok()) {
      EXPECT_EQ((*got)["metadata"]["annotations"]["septa.dev/api-token"], "ci");
      secret = base::Base64Decode((*got)["data"]["token"].get<std::string>()).value_or("");
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the controller's write, not a guess
    }
  }
  ASSERT_FALSE(secret.empty()) << "the Secret was never written";
  auto as_pipeline = Call(secret, "GET", "/v1/tenants/acme/vclusters");
  EXPECT_EQ(as_pipeline.status, 200) << as_pipeline.body;
  EXPECT_EQ(
      Call(secret, "POST", "/v1/tenants/acme/vclusters", Cluster("acme", "x", 1)["virtual_cluster"].dump()).status, 403)
      << "a viewer, as declared";

  // Never taken over: the error is counted, the Secret is as it was.
  while (std::chrono::steady_clock::now() < deadline &&
         Call(admin_, "GET", "/metrics").body.find("septa_reconcile_errors_total{controller=\"token-delivery\"} 0") !=
             std::string::npos) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  auto theirs = (*host)->Get(kube::kSecrets, "default", "theirs");
  ASSERT_TRUE(theirs.ok());
  EXPECT_EQ((*theirs)["data"]["token"], base::Base64Encode("not septa's"));
  EXPECT_FALSE((*theirs)["metadata"].contains("annotations")) << theirs->dump();

  // The secret (its random part, after "septa_<id>_": base64url, which has
  // '_' too) is nowhere else.
  const std::string random_part = secret.substr(secret.find('_', std::string_view("septa_").size()) + 1);
  ASSERT_GE(random_part.size(), 40u);
  for (const auto& answer : {applied.body, plan.body, Call(admin_, "GET", "/v1/tokens").body,
                             Call(admin_, "GET", "/v1/applysets/platform").body}) {
    EXPECT_EQ(answer.find(random_part), std::string::npos) << answer;
  }
  for (const std::string& line : log_->last_formatted()) {
    EXPECT_EQ(line.find(random_part), std::string::npos) << line;
  }
  EXPECT_EQ(Count("SELECT count(*) FROM audit_log WHERE concat_ws(' ', resource, old_etag, new_etag, detail) LIKE '%" +
                  random_part + "%'"),
            0);
  const std::string dump_command =
      (store::EmbeddedPostgresOptions{}.bin_dir / "pg_dump").string() + " --data-only --dbname='" + db_->url() + "'";
  FILE* pipe = popen(dump_command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string dump;
  char buffer[4096];
  for (std::size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) dump.append(buffer, n);
  ASSERT_EQ(pclose(pipe), 0) << dump_command;
  EXPECT_NE(dump.find("septa-ci"), std::string::npos) << "the dump holds the declaration";
  EXPECT_EQ(dump.find(random_part), std::string::npos) << "but never the secret";
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
