// Tenant members over REST against a running septad: the lifecycle with its
// headers (Location, ETag, If-Match), a member in the path however it is
// %-encoded, who may write, the audit records, and every refusal a 4xx
// naming the field. Who may call what is also in authorization_table.h,
// which runs against REST and gRPC.
#include <pqxx/pqxx>

#include "tests/integration/api/api_fixture.h"

namespace septa::test {
namespace {

using json = nlohmann::json;

class MemberApiTest : public ApiTest {
 protected:
  void SetUp() override {
    ApiTest::SetUp();
    if (HasFatalFailure()) return;
    CreateTenant("acme");
    owner_ = CreateToken("tenant:acme", "owner");
  }

  HttpResult AddMember(const std::string& token, const std::string& member, const std::string& role) {
    return Call(token, "POST", "/v1/tenants/acme/members", json{{"member", member}, {"role", role}}.dump());
  }
  std::vector<std::string> MemberList() {
    const auto r = Call(owner_, "GET", "/v1/tenants/acme/members");
    EXPECT_EQ(r.status, 200) << r.body;
    std::vector<std::string> rows;
    for (const auto& m : json::parse(r.body).value("members", json::array())) {
      rows.push_back(m.at("member").get<std::string>() + " " + m.at("role").get<std::string>() + " " +
                     m.at("etag").get<std::string>());
    }
    return rows;
  }
  pqxx::result MemberQuery(const std::string& query) {
    pqxx::connection c(db_->url());
    pqxx::nontransaction tx(c);
    return tx.exec(query);
  }

  std::string owner_;
};

TEST_F(MemberApiTest, AnOwnerAddsChangesAndRemovesAMemberWithLocationEtagAndAudit) {
  const auto added = AddMember(owner_, "user:alice@acme.test", "editor");
  ASSERT_EQ(added.status, 201) << added.body;
  EXPECT_EQ(added.header("location"), "/v1/tenants/acme/members/user:alice@acme.test");
  EXPECT_EQ(added.header("etag"), "\"1\"");
  const json body = json::parse(added.body);
  EXPECT_EQ(body["tenant"], "acme");
  EXPECT_EQ(body["member"], "user:alice@acme.test");
  EXPECT_EQ(body["role"], "editor");
  EXPECT_TRUE(body.contains("create_time")) << added.body;
  EXPECT_EQ(MemberList(), (std::vector<std::string>{"user:alice@acme.test editor 1"}));

  // The member in the path as it is, or %-encoded.
  const auto viewer = Call(owner_, "PATCH", added.header("location"), R"({"role":"viewer"})", {{"If-Match", "\"1\""}});
  ASSERT_EQ(viewer.status, 200) << viewer.body;
  EXPECT_EQ(json::parse(viewer.body)["role"], "viewer");
  EXPECT_EQ(viewer.header("etag"), "\"2\"");
  const auto owner = Call(owner_, "PATCH", "/v1/tenants/acme/members/user%3Aalice%40acme.test", R"({"role":"owner"})");
  ASSERT_EQ(owner.status, 200) << owner.body;
  EXPECT_EQ(json::parse(owner.body)["etag"], "3");
  const auto removed =
      Call(owner_, "DELETE", "/v1/tenants/acme/members/user%3Aalice%40acme.test", "", {{"If-Match", "\"3\""}});
  EXPECT_EQ(removed.status, 204) << removed.body;
  EXPECT_TRUE(MemberList().empty());

  const auto audit = MemberQuery(
      "SELECT action, principal, old_etag, new_etag, surface FROM audit_log"
      " WHERE resource = 'tenants/acme/members/user:alice@acme.test' ORDER BY id");
  std::vector<std::string> rows;
  for (const auto& row : audit) {
    rows.push_back(row[0].as<std::string>() + " " + row[1].as<std::string>() + " " + row[2].as<std::string>() + "->" +
                   row[3].as<std::string>() + " " + row[4].as<std::string>());
  }
  EXPECT_EQ(rows, (std::vector<std::string>{
                      "tenant_member.create tenant:acme ->1 rest", "tenant_member.update tenant:acme 1->2 rest",
                      "tenant_member.update tenant:acme 2->3 rest", "tenant_member.delete tenant:acme 3-> rest"}));
}

// A group's name may hold '/' (Keycloak's full group paths): one path
// segment, %2F in the URL, which Location writes so.
TEST_F(MemberApiTest, AMemberWithASlashOrSpaceIsOneEscapedPathSegment) {
  const auto added = AddMember(admin_, "group:/eng/ml team", "viewer");
  ASSERT_EQ(added.status, 201) << added.body;
  const std::string location = added.header("location");
  EXPECT_EQ(location, "/v1/tenants/acme/members/group:%2Feng%2Fml%20team");
  const auto changed = Call(admin_, "PATCH", location, R"({"role":"editor"})");
  ASSERT_EQ(changed.status, 200) << changed.body;
  EXPECT_EQ(json::parse(changed.body)["member"], "group:/eng/ml team");
  // Unescaped, the slashes make other segments: no route has them.
  EXPECT_EQ(Call(admin_, "DELETE", "/v1/tenants/acme/members/group:/eng/ml%20team").status, 404);
  EXPECT_EQ(Call(admin_, "DELETE", location).status, 204);
  EXPECT_TRUE(MemberList().empty());
}

TEST_F(MemberApiTest, BadInputIsA4xxNamingTheFieldAndWritesNothing) {
  ASSERT_EQ(AddMember(owner_, "group:ml", "editor").status, 201);
  struct Case {
    std::string body;
    std::string field;
    std::string what;
  };
  const std::vector<Case> cases = {
      {R"({"member":"robot:r2","role":"viewer"})", "member", "an unknown kind"},
      {R"({"member":"alice","role":"viewer"})", "member", "no kind"},
      {R"({"member":"user:","role":"viewer"})", "member", "an empty name"},
      {R"({"role":"viewer"})", "member", "no member"},
      {json{{"member", "user:" + std::string(257, 'a')}, {"role", "viewer"}}.dump(), "member", "a 257-byte name"},
      {R"({"member":"user:bell\u0007","role":"viewer"})", "member", "BEL"},
      {R"({"member":"user:two\nlines","role":"viewer"})", "member", "a newline"},
      {R"({"member":"user:esc\u001b[2J","role":"viewer"})", "member", "an escape sequence"},
      {R"({"member":"user:csi\u009b2J","role":"viewer"})", "member", "a C1 control"},
      {R"({"member":"user:evil\u202egnp","role":"viewer"})", "member", "a bidi override"},
      {R"({"member":"user:nul\u0000x","role":"viewer"})", "member", "NUL"},
      {R"({"member":"user:bob","role":"admin"})", "role", "an unknown role"},
      {R"({"member":"user:bob","role":"Owner"})", "role", "a role in capitals"},
      {R"({"member":"user:bob"})", "role", "no role"},
      {R"({"member":"user:bob","role":"viewer","tenant":"beta"})", "tenant", "another tenant in the body"},
      {R"({"member":"user:bob","role":"viewer","colour":"red"})", "", "an unknown field"},
  };
  for (const Case& c : cases) {
    ExpectProblem(Call(owner_, "POST", "/v1/tenants/acme/members", c.body), 400, c.field, c.what);
  }
  ExpectProblem(AddMember(owner_, "group:ml", "viewer"), 409, "member", "a duplicate");
  ExpectProblem(Call(owner_, "PATCH", "/v1/tenants/acme/members/group:ml", R"({"role":"root"})"), 400, "role",
                "an unknown role in a PATCH");
  ExpectProblem(
      Call(owner_, "PATCH", "/v1/tenants/acme/members/group:ml", R"({"role":"viewer"})", {{"If-Match", "\"7\""}}), 412,
      "", "a stale etag");
  ExpectProblem(Call(owner_, "PATCH", "/v1/tenants/acme/members/group:ml", R"({"role":"viewer","etag":""})"), 400,
                "etag", "an empty etag in the body");
  ExpectProblem(Call(owner_, "PATCH", "/v1/tenants/acme/members/group:ml", R"({"member":"group:ops","role":"viewer"})"),
                400, "member", "another member in the body");
  ExpectProblem(Call(owner_, "DELETE", "/v1/tenants/acme/members/group:ml", "", {{"If-Match", "\"7\""}}), 412, "",
                "a stale etag on delete");
  ExpectProblem(Call(owner_, "PATCH", "/v1/tenants/acme/members/ml", R"({"role":"viewer"})"), 400, "member",
                "a member without its kind in the path");
  ExpectProblem(Call(owner_, "DELETE", "/v1/tenants/acme/members/user:bad%ff"), 400, "member",
                "invalid UTF-8 in the path");
  ExpectProblem(Call(owner_, "DELETE", "/v1/tenants/acme/members/user:nobody"), 404, "", "a member that is not");
  ExpectProblem(Call(admin_, "GET", "/v1/tenants/ghost/members"), 404, "", "a tenant that is not");
  EXPECT_EQ(MemberList(), (std::vector<std::string>{"group:ml editor 1"}));
  EXPECT_EQ(MemberQuery("SELECT 1 FROM audit_log WHERE action LIKE 'tenant_member.%'").size(), 1u);

  // 256 bytes is a name.
  EXPECT_EQ(AddMember(owner_, "user:" + std::string(256, 'a'), "viewer").status, 201);
}

TEST_F(MemberApiTest, ATenantHasAtMostAThousandMembers) {
  // Written through the store (a thousand requests would test the HTTP client), then one more through the API.
  MemberQuery(
      "INSERT INTO tenant_members (tenant, kind, name, role, create_time, update_time, version)"
      " SELECT 'acme', 'user', 'u' || i, 'viewer', now(), now(), 1 FROM generate_series(1, 1000) AS i");
  const auto full = AddMember(owner_, "group:everyone", "viewer");
  ExpectProblem(full, 429, "", "the thousand and first member");
  EXPECT_NE(full.body.find("the limit of 1000 members per tenant"), std::string::npos) << full.body;
  ASSERT_EQ(Call(owner_, "DELETE", "/v1/tenants/acme/members/user:u1").status, 204);
  EXPECT_EQ(AddMember(owner_, "group:everyone", "viewer").status, 201);
  EXPECT_EQ(MemberList().size(), 1000u);
}

TEST_F(MemberApiTest, ViewersReadAndASuspendedTenantsOwnerMayNotWrite) {
  ASSERT_EQ(AddMember(owner_, "user:alice", "owner").status, 201);
  const std::string viewer = CreateToken("tenant:acme", "viewer");
  EXPECT_EQ(Call(viewer, "GET", "/v1/tenants/acme/members").status, 200);
  ExpectProblem(AddMember(viewer, "user:mallory", "owner"), 403, "", "a viewer adding");

  ASSERT_EQ(Call(admin_, "PATCH", "/v1/tenants/acme", R"({"state":"SUSPENDED"})").status, 200);
  EXPECT_EQ(Call(owner_, "GET", "/v1/tenants/acme/members").status, 200);
  const auto refused = AddMember(owner_, "user:mallory", "owner");
  ExpectProblem(refused, 403, "", "a suspended tenant's owner adding");
  EXPECT_NE(refused.body.find("suspended"), std::string::npos) << refused.body;
  ExpectProblem(Call(owner_, "DELETE", "/v1/tenants/acme/members/user:alice"), 403, "",
                "a suspended tenant's owner removing");
  // Admins still manage them.
  EXPECT_EQ(AddMember(admin_, "user:carol", "viewer").status, 201);
  EXPECT_EQ(MemberList(), (std::vector<std::string>{"user:alice owner 1", "user:carol viewer 1"}));
}

TEST_F(MemberApiTest, DeletingTheTenantDeletesItsMembers) {
  ASSERT_EQ(AddMember(owner_, "user:alice", "owner").status, 201);
  ASSERT_EQ(Call(admin_, "DELETE", "/v1/tenants/acme").status, 204);
  EXPECT_EQ(MemberQuery("SELECT 1 FROM tenant_members").size(), 0u);
}

}  // namespace
}  // namespace septa::test
