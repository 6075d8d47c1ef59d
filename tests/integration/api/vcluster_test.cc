// Virtual clusters over REST, against a real PostgreSQL on real sockets:
// the lifecycle with every tier's kind of capacity, bad input refused naming
// the field with nothing written, idempotent creates, and racing creators
// that never book a GPU twice (checked against the reservation rows).
#include <nlohmann/json.hpp>

#include <set>
#include <thread>
#include <tuple>

#include "services/store/pg_virtual_object_store.h"
#include "tests/integration/api/api_fixture.h"

namespace septa::test {
namespace {

using json = nlohmann::json;

class VirtualClusterRestTest : public ApiTest {
 protected:
  void SetUp() override {
    ApiTest::SetUp();
    if (HasFatalFailure()) return;
    // 2 MIG H100s (two 3g.40gb, two 2g.20gb, two 1g.10gb) and 3 nodes of 4 whole A100s.
    PutNodes({MigNode("h100-0", 2), WholeGpuNode("a100-0", 4), WholeGpuNode("a100-1", 4), WholeGpuNode("a100-2", 4)});
  }

  HttpResult Create(const std::string& tenant, const json& body, std::map<std::string, std::string> headers = {}) {
    return Call(admin_, "POST", "/v1/tenants/" + tenant + "/vclusters", body.dump(), std::move(headers));
  }

  static json Body(const HttpResult& r) { return json::parse(r.body); }
};

TEST_F(VirtualClusterRestTest, LifecycleWithEveryTiersCapacity) {
  // Exclusive first: it needs a node nobody else touches.
  const std::vector<std::tuple<std::string, json, std::string, std::size_t>> tiers = {
      {"exclusive", {{"nodes", {{"model", "A100-80GB"}, {"count", 1}}}}, "nodes", 1},
      {"dedicated", {{"gpus", {{"model", "A100-80GB"}, {"count", 2}}}}, "gpus", 2},
      {"isolated", {{"mig", {{{"profile", "3g.40gb"}, {"count", 2}}}}}, "mig", 2},
      {"shared", {{"shared", {{"milli_gpu", 500}, {"gpu_memory_mib", 10000}}}}, "shares", 1},
  };
  for (const auto& [tier, capacity, reserved, count] : tiers) {
    const std::string tenant = "t-" + tier;
    CreateTenant(tenant, tier);
    auto created = Create(tenant, {{"name", "main"}, {"display_name", "Main"}, {"capacity", capacity}});
    ASSERT_EQ(created.status, 201) << tier << ": " << created.body;
    const json vc = Body(created);
    EXPECT_EQ(created.header("location"), "/v1/tenants/" + tenant + "/vclusters/main");
    EXPECT_EQ(created.header("etag"), "\"" + vc["etag"].get<std::string>() + "\"");
    EXPECT_EQ(vc["tenant"], tenant);
    EXPECT_EQ(vc["state"], "PROVISIONING");
    for (const auto& [kind, asked] : capacity.items()) {  // as asked, with defaults filled in
      const json& held = vc["capacity"][kind];
      if (asked.is_array()) {
        ASSERT_EQ(held.size(), asked.size()) << tier;
        for (std::size_t i = 0; i < asked.size(); ++i) {
          for (const auto& [field, value] : asked[i].items()) EXPECT_EQ(held[i][field], value) << tier;
        }
      } else {
        for (const auto& [field, value] : asked.items()) EXPECT_EQ(held[field], value) << tier;
      }
    }
    EXPECT_EQ(vc["reservation"][reserved].size(), count) << tier << ": " << created.body;

    auto got = Call(admin_, "GET", "/v1/tenants/" + tenant + "/vclusters/main");
    ASSERT_EQ(got.status, 200) << got.body;
    EXPECT_EQ(Body(got), vc);
  }
  EXPECT_EQ(ReservationRows().size(), 4u);

  // Pages and the state filter, on a node of their own.
  PutNodes({WholeGpuNode("a100-3", 8)});
  for (const char* name : {"b", "c", "d"}) {
    auto more =
        Create("t-dedicated", {{"name", name}, {"capacity", {{"gpus", {{"model", "A100-80GB"}, {"count", 1}}}}}});
    ASSERT_EQ(more.status, 201) << more.body;
  }
  std::set<std::string> seen;
  std::string token;
  int pages = 0;
  do {
    auto page = Call(admin_, "GET", "/v1/tenants/t-dedicated/vclusters?page_size=3&page_token=" + token);
    ASSERT_EQ(page.status, 200) << page.body;
    const json listed = Body(page);
    for (const auto& v : listed["virtual_clusters"]) seen.insert(v["name"].get<std::string>());
    token = listed.value("next_page_token", "");
    ++pages;
  } while (!token.empty() && pages < 5);
  EXPECT_EQ(pages, 2);
  EXPECT_EQ(seen, (std::set<std::string>{"b", "c", "d", "main"}));
  auto provisioning = Call(admin_, "GET", "/v1/tenants/t-dedicated/vclusters?filter=state%3DPROVISIONING");
  EXPECT_EQ(Body(provisioning)["virtual_clusters"].size(), 4u) << provisioning.body;
  auto ready = Call(admin_, "GET", "/v1/tenants/t-dedicated/vclusters?filter=state%3DREADY");
  EXPECT_TRUE(Body(ready)["virtual_clusters"].empty()) << ready.body;
  ExpectProblem(Call(admin_, "GET", "/v1/tenants/t-dedicated/vclusters?filter=state%3DHAPPY"), 400, "filter",
                "unknown state");

  // Resize with If-Match: a stale etag changes nothing; the current one grows the reservation.
  const std::string path = "/v1/tenants/t-dedicated/vclusters/main";
  const std::string etag = Body(Call(admin_, "GET", path))["etag"];
  const json resize = {{"capacity", {{"gpus", {{"model", "A100-80GB"}, {"count", 3}}}}}};
  EXPECT_EQ(Call(admin_, "PATCH", path, resize.dump(), {{"If-Match", "\"999\""}}).status, 412);
  auto resized = Call(admin_, "PATCH", path, resize.dump(), {{"If-Match", "\"" + etag + "\""}});
  ASSERT_EQ(resized.status, 200) << resized.body;
  EXPECT_EQ(Body(resized)["reservation"]["gpus"].size(), 3u);
  EXPECT_EQ(Body(resized)["generation"], "2");  // an int64, a string in proto JSON
  EXPECT_NE(Body(resized)["etag"], etag);
  // The update_mask query parameter limits the change to the fields it names.
  auto renamed = Call(admin_, "PATCH", path + "?update_mask=display_name",
                      json{{"display_name", "Renamed"}, {"capacity", {{"gpus", {{"count", 4}}}}}}.dump());
  ASSERT_EQ(renamed.status, 200) << renamed.body;
  EXPECT_EQ(Body(renamed)["display_name"], "Renamed");
  EXPECT_EQ(Body(renamed)["capacity"]["gpus"]["count"], 3);

  // Delete: never provisioned, so released and gone at once.
  auto deleted =
      Call(admin_, "DELETE", path, "", {{"If-Match", "\"" + Body(renamed)["etag"].get<std::string>() + "\""}});
  ASSERT_EQ(deleted.status, 200) << deleted.body;
  EXPECT_EQ(Body(deleted)["state"], "DELETING");
  EXPECT_EQ(Call(admin_, "GET", path).status, 404);
  for (const auto& row : ReservationRows()) EXPECT_FALSE(row.tenant == "t-dedicated" && row.vcluster == "main");
}

// AIP-163's validate_only, as the portal's form checks a request before it
// is sent: the same rules, the same refusal, and nothing kept — no row, no
// reservation, no spent idempotency key, no version.
TEST_F(VirtualClusterRestTest, ValidateOnlyAnswersWithTheCreateOrUpdatesRulesAndKeepsNothing) {
  CreateTenant("acme", "dedicated");
  const json two = {{"name", "train"}, {"capacity", {{"gpus", {{"model", "A100-80GB"}, {"count", 2}}}}}};
  auto checked =
      Call(admin_, "POST", "/v1/tenants/acme/vclusters?validate_only=true", two.dump(), {{"Idempotency-Key", "k1"}});
  ASSERT_EQ(checked.status, 200) << checked.body;
  EXPECT_EQ(checked.header("location"), "");
  EXPECT_EQ(checked.header("etag"), "");
  EXPECT_EQ(Body(checked)["reservation"]["gpus"].size(), 2u) << "the placement it would make: " << checked.body;
  EXPECT_EQ(Call(admin_, "GET", "/v1/tenants/acme/vclusters/train").status, 404);
  EXPECT_TRUE(ReservationRows().empty());

  const json too_many = {{"name", "huge"}, {"capacity", {{"gpus", {{"model", "A100-80GB"}, {"count", 64}}}}}};
  auto refused = Call(admin_, "POST", "/v1/tenants/acme/vclusters?validate_only=true", too_many.dump());
  auto refused_for_real = Call(admin_, "POST", "/v1/tenants/acme/vclusters", too_many.dump());
  EXPECT_EQ(refused.status, refused_for_real.status) << refused.body;
  EXPECT_EQ(Body(refused)["violations"], Body(refused_for_real)["violations"]) << refused.body;
  EXPECT_EQ(Body(refused)["message"], Body(refused_for_real)["message"]);

  // The key a check carried is not spent: the real create with it works.
  auto created = Call(admin_, "POST", "/v1/tenants/acme/vclusters", two.dump(), {{"Idempotency-Key", "k1"}});
  ASSERT_EQ(created.status, 201) << created.body;
  // The placement the check answered is the one made (the engine the
  // checks moved was rebuilt from the rows).
  EXPECT_EQ(Body(created)["reservation"], Body(checked)["reservation"]);
  const std::string path = "/v1/tenants/acme/vclusters/train";
  const json before = Body(Call(admin_, "GET", path));
  auto grow = Call(admin_, "PATCH", path + "?validate_only=true",
                   json{{"capacity", {{"gpus", {{"model", "A100-80GB"}, {"count", 4}}}}}}.dump());
  ASSERT_EQ(grow.status, 200) << grow.body;
  EXPECT_EQ(Body(grow)["reservation"]["gpus"].size(), 4u);
  EXPECT_EQ(Body(Call(admin_, "GET", path)), before) << "a checked update changes nothing";
  EXPECT_EQ(ReservationRows().size(), 1u);
  ExpectProblem(Call(admin_, "PATCH", path + "?validate_only=true",
                     json{{"capacity", {{"gpus", {{"model", "A100-80GB"}, {"count", 64}}}}}}.dump()),
                429, "", "a check that does not fit");
  ExpectProblem(Call(admin_, "POST", "/v1/tenants/acme/vclusters?validate_only=maybe", two.dump()), 400,
                "validate_only", "not a bool");
}

// A poller of a list sends back the weak ETag it got and is answered 304,
// without the body, until something in the list changed.
TEST_F(VirtualClusterRestTest, AListIsRevalidatedByItsEtag) {
  CreateTenant("acme", "dedicated");
  const std::string list = "/v1/tenants/acme/vclusters";
  auto first = Call(admin_, "GET", list);
  ASSERT_EQ(first.status, 200) << first.body;
  const std::string etag = first.header("etag");
  ASSERT_TRUE(etag.starts_with("W/\"")) << etag;
  EXPECT_EQ(first.header("cache-control"), "private, no-cache") << "a browser keeps it and revalidates each time";
  auto same = Call(admin_, "GET", list, "", {{"If-None-Match", etag}});
  EXPECT_EQ(same.status, 304);
  EXPECT_EQ(same.body, "");
  EXPECT_EQ(same.header("etag"), etag);
  ASSERT_EQ(
      Create("acme", {{"name", "train"}, {"capacity", {{"gpus", {{"model", "A100-80GB"}, {"count", 1}}}}}}).status,
      201);
  auto changed = Call(admin_, "GET", list, "", {{"If-None-Match", etag}});
  EXPECT_EQ(changed.status, 200);
  EXPECT_NE(changed.header("etag"), etag);
  // A resource keeps its own ETag, its version, which If-Match names.
  auto one = Call(admin_, "GET", list + "/train", "", {{"If-None-Match", changed.header("etag")}});
  EXPECT_EQ(one.status, 200);
  EXPECT_EQ(one.header("etag"), "\"" + Body(one)["etag"].get<std::string>() + "\"");
  // Another tenant's list is not found, whatever it sends.
  CreateTenant("beta", "dedicated");
  ExpectProblem(Call(CreateToken("tenant:beta", "owner"), "GET", list, "", {{"If-None-Match", changed.header("etag")}}),
                404, "", "another tenant's list");
}

// The pods a tenant's own API stores, and why those that do not run do not,
// read over REST as the portal does.
TEST_F(VirtualClusterRestTest, PodsThatDoNotRunSayWhy) {
  CreateTenant("acme", "dedicated");
  ASSERT_EQ(
      Create("acme", {{"name", "train"}, {"capacity", {{"gpus", {{"model", "A100-80GB"}, {"count", 1}}}}}}).status,
      201);
  store::PgVirtualObjectStore objects(store::PgVirtualObjectStoreOptions{.database_url = db_->url()});
  const tenancy::VirtualClusterRef key{"acme", "train"};
  ASSERT_TRUE(objects.CreateControlPlane(key, {}).ok());
  const json refused = {
      {"metadata", {{"namespace", "default"}, {"name", "web"}, {"creationTimestamp", "2026-11-29T10:00:00Z"}}},
      {"status",
       {{"phase", "Pending"},
        {"conditions",
         {{{"type", "PodScheduled"},
           {"status", "False"},
           {"reason", "SyncRefused"},
           {"message", "spec.hostNetwork: not allowed"},
           {"lastTransitionTime", "2026-11-29T10:00:01Z"}}}}}}};
  const json running = {{"metadata", {{"namespace", "default"}, {"name", "api"}}}, {"status", {{"phase", "Running"}}}};
  ASSERT_TRUE(objects.PutObject(key, {"pods", "default", "web", 1, refused.dump()}, 0).ok());
  ASSERT_TRUE(objects.PutObject(key, {"pods", "default", "api", 2, running.dump()}, 1).ok());

  const std::string path = "/v1/tenants/acme/vclusters/train/pods";
  auto all = Call(CreateToken("tenant:acme", "viewer"), "GET", path);
  ASSERT_EQ(all.status, 200) << all.body;
  EXPECT_EQ(Body(all)["pods"].size(), 2u) << all.body;
  auto waiting = Call(admin_, "GET", path + "?not_running=true");
  ASSERT_EQ(waiting.status, 200) << waiting.body;
  const json pods = Body(waiting)["pods"];
  ASSERT_EQ(pods.size(), 1u) << waiting.body;
  EXPECT_EQ(pods[0]["namespace"], "default");
  EXPECT_EQ(pods[0]["name"], "web");
  EXPECT_EQ(pods[0]["reason"], "SyncRefused");
  EXPECT_EQ(pods[0]["message"], "spec.hostNetwork: not allowed");
  EXPECT_EQ(pods[0]["since"], "2026-11-29T10:00:01Z");
  EXPECT_EQ(pods[0]["create_time"], "2026-11-29T10:00:00Z");

  CreateTenant("beta", "dedicated");
  ExpectProblem(Call(CreateToken("tenant:beta", "owner"), "GET", path), 404, "", "another tenant's pods");
  ExpectProblem(Call(admin_, "GET", path + "?page_size=9999"), 400, "page_size", "too large a page");
  ExpectProblem(Call(admin_, "GET", path + "?page_size=99999999999999999999"), 400, "page_size",
                "an overflowing number");
  ExpectProblem(Call(admin_, "GET", path + "?not_running=maybe"), 400, "not_running", "not a bool");
  ExpectProblem(Call(admin_, "GET", path + "?page_token=%ff%00"), 400, "page_token", "a forged token");
  for (const std::string bad : {"/v1/tenants/acme/vclusters/tr%00in/pods", "/v1/tenants/acme/vclusters/%ff/pods",
                                "/v1/tenants/ac%01me/vclusters/train/pods", "/v1/tenants/acme%0a/free-capacity",
                                "/v1/tenants/%ff%fe/free-capacity"}) {
    ExpectProblem(Call(admin_, "GET", bad), 404, "", bad);
  }
}

// :sleep and :wake over REST (custom methods: POST without a body, 200):
// desired state written in PostgreSQL, If-Match honoured, idempotent, and
// refused naming the state where they cannot apply.
TEST_F(VirtualClusterRestTest, SleepAndWakeWriteTheDesiredState) {
  CreateTenant("napper", "dedicated");
  ASSERT_EQ(Create("napper", {{"name", "nap"}, {"capacity", {{"gpus", {{"count", 1}}}}}}).status, 201);
  const std::string path = "/v1/tenants/napper/vclusters/nap";
  ExpectProblem(Call(admin_, "POST", path + ":sleep"), 412, "state", "sleep while PROVISIONING");
  // The provisioner would turn it READY; here the test does.
  SetVirtualClusterState("napper", "nap", tenancy::VirtualClusterState::kReady);
  const json ready = Body(Call(admin_, "GET", path));
  EXPECT_EQ(Call(admin_, "POST", path + ":sleep", "", {{"If-Match", "\"999\""}}).status, 412);
  auto asleep =
      Call(admin_, "POST", path + ":sleep", "", {{"If-Match", "\"" + ready["etag"].get<std::string>() + "\""}});
  ASSERT_EQ(asleep.status, 200) << asleep.body;
  EXPECT_EQ(Body(asleep)["state"], "SLEEPING");
  EXPECT_EQ(Body(asleep)["generation"], std::to_string(std::stoll(ready["generation"].get<std::string>()) + 1));
  EXPECT_EQ(asleep.header("etag"), "\"" + Body(asleep)["etag"].get<std::string>() + "\"");
  EXPECT_EQ(Body(Call(admin_, "GET", path))["state"], "SLEEPING");
  auto again = Call(admin_, "POST", path + ":sleep");
  ASSERT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(Body(again)["etag"], Body(asleep)["etag"]);  // nothing written
  EXPECT_EQ(ReservationRows().size(), 1u);               // kept: the provisioner decides
  auto woken = Call(admin_, "POST", path + ":wake");
  ASSERT_EQ(woken.status, 200) << woken.body;
  EXPECT_EQ(Body(woken)["state"], "PROVISIONING");
  EXPECT_EQ(Call(admin_, "POST", path + ":nap").status, 405);  // no such custom method: as POST on any name
  EXPECT_EQ(Call(admin_, "GET", path + ":wake").status, 404);
  EXPECT_EQ(Call(admin_, "POST", "/v1/tenants/napper/vclusters/ghost:wake").status, 404);
}

// Issue 28 L8: an If-Match that names no etag (empty, or "") is refused
// naming the header on every route that takes one, as is an empty `etag` in
// a PATCH body; it used to be taken as no precondition, so the write went
// through where a stale etag answers 412. Nothing is written.
TEST_F(VirtualClusterRestTest, AnIfMatchNamingNoEtagIsRefusedOnEveryRoute) {
  CreateTenant("cond", "dedicated");
  ASSERT_EQ(Create("cond", {{"name", "vc"}, {"capacity", {{"gpus", {{"count", 1}}}}}}).status, 201);
  SetVirtualClusterState("cond", "vc", tenancy::VirtualClusterState::kReady);
  const std::string vc = "/v1/tenants/cond/vclusters/vc";
  const json tenant_before = Body(Call(admin_, "GET", "/v1/tenants/cond"));
  const json vc_before = Body(Call(admin_, "GET", vc));
  struct Route {
    std::string method, target, body;
  };
  const std::vector<Route> routes = {
      {"PATCH", "/v1/tenants/cond", R"({"display_name":"x"})"},
      {"DELETE", "/v1/tenants/cond", ""},
      {"PATCH", vc, R"({"display_name":"x"})"},
      {"DELETE", vc, ""},
      {"POST", vc + ":sleep", ""},
      {"POST", vc + ":wake", ""},
  };
  for (const auto& r : routes) {
    for (const std::string& value : {std::string("\"\""), std::string(""), std::string("W/\"\"")}) {
      ExpectProblem(Call(admin_, r.method, r.target, r.body, {{"If-Match", value}}), 400, "If-Match",
                    r.method + " " + r.target + " with If-Match: " + value);
    }
  }
  ExpectProblem(Call(admin_, "PATCH", "/v1/tenants/cond", R"({"display_name":"x","etag":""})"), 400, "etag",
                "a tenant PATCH with an empty etag");
  ExpectProblem(Call(admin_, "PATCH", vc, R"({"display_name":"x","etag":""})"), 400, "etag",
                "a virtual cluster PATCH with an empty etag");
  EXPECT_EQ(Body(Call(admin_, "GET", "/v1/tenants/cond")), tenant_before);
  EXPECT_EQ(Body(Call(admin_, "GET", vc)), vc_before);
  // * still matches any version, and the header wins over the body.
  auto any = Call(admin_, "PATCH", vc, R"({"display_name":"y","etag":"999"})", {{"If-Match", "*"}});
  EXPECT_EQ(any.status, 200) << any.body;
}

TEST_F(VirtualClusterRestTest, BadInputNamesTheFieldAndWritesNothing) {
  CreateTenant("iso", "isolated");
  CreateTenant("ded", "dedicated");
  auto mig = [](const json& entry) { return json{{"name", "vc"}, {"capacity", {{"mig", {entry}}}}}; };
  auto gpus = [](const json& count) { return json{{"name", "vc"}, {"capacity", {{"gpus", {{"count", count}}}}}}; };
  struct Case {
    std::string tenant;
    std::string body;
    int status;
    std::string field;
  };
  const std::vector<Case> cases = {
      {"iso", mig({{"profile", "9g.99gb"}, {"count", 1}}).dump(), 400, "capacity.mig[0].profile"},
      {"iso", mig({{"profile", "3g.40gb"}, {"count", 1}, {"model", "A100-40GB"}}).dump(), 400,
       "capacity.mig[0].profile"},
      {"iso", gpus(1).dump(), 412, "capacity.gpus"},
      {"ded", mig({{"profile", "3g.40gb"}, {"count", 1}}).dump(), 412, "capacity.mig"},
      {"ded", gpus(0).dump(), 400, "capacity.gpus.count"},
      {"ded", gpus(-1).dump(), 400, "capacity.gpus.count"},
      {"ded", gpus(2000000000).dump(), 400, "capacity.gpus.count"},
      {"ded", gpus(4294967296LL).dump(), 400, "capacity.gpus.count"},
      {"iso", mig({{"profile", "3g.40gb"}, {"count", 0}}).dump(), 400, "capacity.mig[0].count"},
      {"ded", R"({"name":"vc","capacity":{"gpus":{"count":1},"nodes":{"count":1}}})", 400, "capacity"},
      {"ded", R"({"name":"vc","capacity":{}})", 400, "capacity"},
      {"ded", R"({"name":"vc"})", 400, "capacity"},
      {"ded", "{\"name\":\"v\xff\",\"capacity\":{\"gpus\":{\"count\":1}}}", 400, "name"},
      {"ded", R"({"name":"Not_A_Label","capacity":{"gpus":{"count":1}}})", 400, "name"},
      {"ded", R"({"name":"v\u0000x","capacity":{"gpus":{"count":1}}})", 400, "name"},
      {"ded", R"({"name":"vc","display_name":"red\u001b[31m","capacity":{"gpus":{"count":1}}})", 400, "display_name"},
      {"ded", R"({"name":"vc","capacity":{"gpus":{"count":1e999}}})", 400, "capacity.gpus.count"},
      {"ded", R"({"name":"vc","capacity":{"gpus":{"count":99999999999999999999999}}})", 400, "capacity.gpus.count"},
  };
  // Raw bodies: the invalid UTF-8 one cannot go through nlohmann::json.
  for (const auto& c : cases) {
    ExpectProblem(Call(admin_, "POST", "/v1/tenants/" + c.tenant + "/vclusters", c.body), c.status, c.field, c.body);
  }
  // A name with a NUL or a control character names no virtual cluster.
  for (const char* path : {"/v1/tenants/ded/vclusters/vc%00", "/v1/tenants/ded/vclusters/vc%1b"}) {
    EXPECT_EQ(Call(admin_, "GET", path).status, 404) << path;
    EXPECT_EQ(Call(admin_, "DELETE", path).status, 404) << path;
  }
  EXPECT_TRUE(ReservationRows().empty());
  for (const char* tenant : {"iso", "ded"}) {
    auto listed = Call(admin_, "GET", std::string("/v1/tenants/") + tenant + "/vclusters");
    EXPECT_TRUE(Body(listed)["virtual_clusters"].empty()) << listed.body;
  }
}

// Two virtual clusters never share a host namespace (finding M2): a name
// whose host namespace another holds (here one an earlier septad named) is
// refused with 409 naming the field, and nothing is written.
TEST_F(VirtualClusterRestTest, ANameWhoseHostNamespaceIsAnothersIsA409NamingIt) {
  CreateTenant("ded", "dedicated");
  tenancy::VirtualCluster legacy;
  legacy.tenant = "ded";
  legacy.name = "older";
  legacy.capacity.tier = gpu::Tier::kDedicated;
  legacy.capacity.count = 1;
  legacy.host_namespace = "septa-ded-x-newer";
  legacy.on_host = true;
  ASSERT_NO_FATAL_FAILURE(InsertVirtualClusterRow(legacy));
  const std::size_t rows = ReservationRows().size();
  auto refused = Create("ded", {{"name", "newer"}, {"capacity", {{"gpus", {{"count", 1}}}}}});
  ExpectProblem(refused, 409, "name", "a host namespace held by another");
  EXPECT_NE(refused.body.find("septa-ded-x-newer"), std::string::npos) << refused.body;
  EXPECT_EQ(Call(admin_, "GET", "/v1/tenants/ded/vclusters/newer").status, 404);
  EXPECT_EQ(ReservationRows().size(), rows);
  auto other = Create("ded", {{"name", "other"}, {"capacity", {{"gpus", {{"count", 1}}}}}});
  ASSERT_EQ(other.status, 201) << other.body;
  EXPECT_EQ(Body(other)["host_namespace"], "septa-ded-x-other");
}

TEST_F(VirtualClusterRestTest, CreateIsIdempotentPerKey) {
  CreateTenant("ded", "dedicated");
  const json body = {{"name", "vc"}, {"capacity", {{"gpus", {{"count", 2}}}}}};
  auto first = Create("ded", body, {{"Idempotency-Key", "k1"}});
  ASSERT_EQ(first.status, 201) << first.body;
  auto replay = Create("ded", body, {{"Idempotency-Key", "k1"}});
  ASSERT_EQ(replay.status, 201) << replay.body;
  EXPECT_EQ(Body(replay), Body(first));
  json other = body;
  other["capacity"]["gpus"]["count"] = 3;
  EXPECT_EQ(Create("ded", other, {{"Idempotency-Key", "k1"}}).status, 409);
  ASSERT_EQ(ReservationRows().size(), 1u);
  EXPECT_EQ(ReservationRows()[0].gpus.size(), 2u);
}

// 64 creators over REST race for the last 3 free GPUs of a node: 3 win, the
// others are told what is short, and no GPU is in two reservation rows.
TEST_F(VirtualClusterRestTest, RacingCreatorsNeverDoubleBook) {
  PutNodes({WholeGpuNode("race-0", 8, "A100-40GB")});
  CreateTenant("ded", "dedicated");
  ASSERT_EQ(Create("ded", {{"name", "base"}, {"capacity", {{"gpus", {{"model", "A100-40GB"}, {"count", 5}}}}}}).status,
            201);
  constexpr int kCreators = 64;
  std::vector<int> statuses(kCreators);
  {
    std::vector<std::jthread> creators;
    for (int i = 0; i < kCreators; ++i) {
      creators.emplace_back([this, i, &statuses] {
        HttpClient client(app_->http_port());
        const json body = {{"name", "r" + std::to_string(i)},
                           {"capacity", {{"gpus", {{"model", "A100-40GB"}, {"count", 1}}}}}};
        statuses[i] = client
                          .Send("POST", "/v1/tenants/ded/vclusters", body.dump(),
                                {{"Authorization", "Bearer " + admin_}, {"Content-Type", "application/json"}})
                          .status;
      });
    }
  }
  EXPECT_EQ(std::count(statuses.begin(), statuses.end(), 201), 3);
  EXPECT_EQ(std::count(statuses.begin(), statuses.end(), 429), kCreators - 3);
  std::set<std::pair<std::string, int>> taken;
  std::size_t held = 0;
  for (const auto& row : ReservationRows()) {
    for (const auto& g : row.gpus) {
      if (g.node != "race-0") continue;
      ++held;
      EXPECT_TRUE(taken.insert({g.node, g.gpu}).second) << "GPU " << g.node << "/" << g.gpu << " booked twice";
    }
  }
  EXPECT_EQ(held, 8u);
}

}  // namespace
}  // namespace septa::test
