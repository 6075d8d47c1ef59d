#include "services/core/member_service.h"

#include <gmock/gmock.h>

#include "tests/unit/services/core/core_fixture.h"

namespace septa::core {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

class MemberServiceTest : public CoreTest {
 protected:
  MemberServiceTest() : members(store, clock) {}

  std::vector<std::string> Listed(const std::string& tenant) {
    auto listed = members.List(Admin(), tenant);
    EXPECT_TRUE(listed.ok()) << listed.status().ToString();
    std::vector<std::string> rows;
    for (const auto& m : listed.ok() ? *listed : std::vector<TenantMember>{}) {
      rows.push_back(MemberText(m) + " " + std::string(MemberRoleName(m.role)) + " " + std::to_string(m.version));
    }
    return rows;
  }
  static void ExpectField(const Status& status, Code code, const std::string& field) {
    EXPECT_EQ(status.code(), code) << status.ToString();
    ASSERT_EQ(status.violations().size(), 1u) << status.ToString();
    EXPECT_EQ(status.violations()[0].field, field) << status.ToString();
  }

  MemberService members;
};

TEST_F(MemberServiceTest, AnOwnerAddsChangesAndRemovesMembersEachWriteAudited) {
  MustCreate("acme");
  auto alice = members.Create(TenantCtx("acme"), "acme", "user:alice@acme.test", "editor");
  ASSERT_TRUE(alice.ok()) << alice.status().ToString();
  EXPECT_EQ(alice->kind, MemberKind::kUser);
  EXPECT_EQ(alice->name, "alice@acme.test");
  EXPECT_EQ(alice->role, MemberRole::kEditor);
  EXPECT_EQ(alice->version, 1);
  EXPECT_EQ(alice->create_time, Now(clock));
  ASSERT_TRUE(members.Create(Admin(), "acme", "group:/eng/ml", "viewer").ok());
  EXPECT_THAT(Listed("acme"), ElementsAre("group:/eng/ml viewer 1", "user:alice@acme.test editor 1"));

  clock.Advance(std::chrono::seconds(5));
  auto owner = members.Update(TenantCtx("acme"), "acme", "user:alice@acme.test", "owner", "1");
  ASSERT_TRUE(owner.ok()) << owner.status().ToString();
  EXPECT_EQ(owner->role, MemberRole::kOwner);
  EXPECT_EQ(owner->version, 2);
  EXPECT_EQ(owner->update_time, Now(clock));
  EXPECT_EQ(owner->create_time, alice->create_time);
  ASSERT_TRUE(members.Delete(TenantCtx("acme"), "acme", "user:alice@acme.test", "2").ok());
  EXPECT_THAT(Listed("acme"), ElementsAre("group:/eng/ml viewer 1"));

  const auto audit = Audit("tenants/acme/members/user:alice@acme.test");
  ASSERT_EQ(audit.size(), 3u);  // newest first
  EXPECT_EQ(audit[0].action, "tenant_member.delete");
  EXPECT_EQ(audit[0].old_etag, "2");
  EXPECT_EQ(audit[0].new_etag, "");
  EXPECT_EQ(audit[1].action, "tenant_member.update");
  EXPECT_EQ(audit[1].old_etag, "1");
  EXPECT_EQ(audit[1].new_etag, "2");
  EXPECT_EQ(audit[2].action, "tenant_member.create");
  EXPECT_EQ(audit[2].principal, "tenant:acme");
  EXPECT_EQ(audit[2].new_etag, "1");
  EXPECT_EQ(Audit("tenants/acme/members/group:/eng/ml")[0].principal, "admin");
}

TEST_F(MemberServiceTest, TheSameRoleWritesNoVersionAndNoAuditRecord) {
  MustCreate("acme");
  ASSERT_TRUE(members.Create(Admin(), "acme", "user:bob", "viewer").ok());
  auto same = members.Update(Admin(), "acme", "user:bob", "viewer", "");
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  EXPECT_EQ(same->version, 1);
  EXPECT_EQ(Audit("tenants/acme/members/user:bob").size(), 1u);
}

TEST_F(MemberServiceTest, ViewersReadAndOnlyWritersOfTheTenantWrite) {
  MustCreate("acme");
  MustCreate("beta");
  ASSERT_TRUE(members.Create(Admin(), "acme", "user:alice", "owner").ok());
  auto viewed = members.List(TenantCtx("acme", Role::kViewer), "acme");
  ASSERT_TRUE(viewed.ok()) << viewed.status().ToString();
  EXPECT_EQ(viewed->size(), 1u);
  EXPECT_TRUE(members.List(Admin(Role::kViewer), "acme").ok());

  // Another tenant's principal: the tenant does not exist for it.
  EXPECT_EQ(members.List(TenantCtx("beta"), "acme").status().code(), Code::kNotFound);
  EXPECT_EQ(members.Create(TenantCtx("beta"), "acme", "user:mallory", "owner").status().code(), Code::kNotFound);
  EXPECT_EQ(members.Update(TenantCtx("beta"), "acme", "user:alice", "viewer", "").status().code(), Code::kNotFound);
  EXPECT_EQ(members.Delete(TenantCtx("beta"), "acme", "user:alice", "").code(), Code::kNotFound);

  // Viewers, admin viewers and a suspended tenant's owner may not write, whatever they send.
  RequestContext suspended = TenantCtx("acme");
  suspended.principal.suspended = true;
  for (const RequestContext& ctx : {TenantCtx("acme", Role::kViewer), Admin(Role::kViewer), suspended}) {
    EXPECT_EQ(members.Create(ctx, "acme", "user:mallory", "owner").status().code(), Code::kPermissionDenied);
    EXPECT_EQ(members.Create(ctx, "acme", "nonsense", "").status().code(), Code::kPermissionDenied);
    EXPECT_EQ(members.Update(ctx, "acme", "user:alice", "viewer", "").status().code(), Code::kPermissionDenied);
    EXPECT_EQ(members.Delete(ctx, "acme", "user:alice", "").code(), Code::kPermissionDenied);
  }
  const auto refused = members.Create(suspended, "acme", "user:mallory", "owner").status();
  EXPECT_NE(refused.message().find("suspended"), std::string::npos) << refused.ToString();
  EXPECT_THAT(Listed("acme"), ElementsAre("user:alice owner 1"));
}

TEST_F(MemberServiceTest, BadInputIsRefusedNamingTheField) {
  MustCreate("acme");
  struct Case {
    std::string member, role, field;
  };
  const std::vector<Case> cases = {
      {"alice", "owner", "member"},       // no kind
      {"robot:r2", "owner", "member"},    // an unknown kind
      {"User:alice", "owner", "member"},  // kinds are lower case
      {"", "owner", "member"},            //
      {"user:", "owner", "member"},       // an empty name
      {"group:", "owner", "member"},      //
      {"user:" + std::string(257, 'a'), "owner", "member"},
      {"user:two\nlines", "owner", "member"},
      {"user:esc\x1b[31m", "owner", "member"},
      {"user:rtl\u202eevil", "owner", "member"},
      {"user:bad\xff", "owner", "member"},
      {"user:alice", "admin", "role"},
      {"user:alice", "Owner", "role"},
      {"user:alice", "", "role"},
  };
  for (const Case& c : cases) {
    ExpectField(members.Create(Admin(), "acme", c.member, c.role).status(), Code::kInvalidArgument, c.field);
  }
  EXPECT_TRUE(members.Create(Admin(), "acme", "user:" + std::string(256, 'a'), "owner").ok());
  ExpectField(members.Update(Admin(), "acme", "alice", "owner", "").status(), Code::kInvalidArgument, "member");
  ExpectField(members.Delete(Admin(), "acme", "user:", ""), Code::kInvalidArgument, "member");
  EXPECT_EQ(Audit().size(), 2u) << "the tenant and the one member made";
}

TEST_F(MemberServiceTest, ADuplicateIsAlreadyExistsAndAStaleEtagFailsThePrecondition) {
  MustCreate("acme");
  ASSERT_TRUE(members.Create(Admin(), "acme", "group:ml", "editor").ok());
  ExpectField(members.Create(Admin(), "acme", "group:ml", "viewer").status(), Code::kAlreadyExists, "member");
  // A user of the group's name is another member.
  EXPECT_TRUE(members.Create(Admin(), "acme", "user:ml", "viewer").ok());
  EXPECT_EQ(members.Update(Admin(), "acme", "group:ml", "owner", "7").status().code(), Code::kFailedPrecondition);
  EXPECT_EQ(members.Delete(Admin(), "acme", "group:ml", "7").code(), Code::kFailedPrecondition);
  EXPECT_EQ(members.Update(Admin(), "acme", "group:nope", "owner", "").status().code(), Code::kNotFound);
  EXPECT_EQ(members.Delete(Admin(), "acme", "group:nope", "").code(), Code::kNotFound);
  EXPECT_THAT(Listed("acme"), ElementsAre("group:ml editor 1", "user:ml viewer 1"));
}

TEST_F(MemberServiceTest, AMissingTenantIsNotFound) {
  EXPECT_EQ(members.List(Admin(), "ghost").status().code(), Code::kNotFound);
  EXPECT_EQ(members.Create(Admin(), "ghost", "user:alice", "owner").status().code(), Code::kNotFound);
  EXPECT_EQ(members.Update(Admin(), "ghost", "user:alice", "owner", "").status().code(), Code::kNotFound);
  EXPECT_EQ(members.Delete(Admin(), "ghost", "user:alice", "").code(), Code::kNotFound);
  EXPECT_EQ(members.List(Admin(), "Not A Tenant\n").status().code(), Code::kNotFound);
}

TEST_F(MemberServiceTest, ATenantHasAtMostAThousandMembers) {
  MustCreate("acme");
  for (int i = 0; i < kMaxTenantMembers; ++i) {
    ASSERT_TRUE(members.Create(Admin(), "acme", "user:u" + std::to_string(i), "viewer").ok()) << i;
  }
  const Status full = members.Create(Admin(), "acme", "group:everyone", "viewer").status();
  EXPECT_EQ(full.code(), Code::kResourceExhausted);
  EXPECT_NE(full.message().find("the limit of 1000 members per tenant"), std::string::npos) << full.ToString();
  // A duplicate is still named as one, and removing one makes room.
  EXPECT_EQ(members.Create(Admin(), "acme", "user:u0", "viewer").status().code(), Code::kAlreadyExists);
  ASSERT_TRUE(members.Delete(Admin(), "acme", "user:u0", "").ok());
  EXPECT_TRUE(members.Create(Admin(), "acme", "group:everyone", "viewer").ok());
}

TEST_F(MemberServiceTest, DeletingTheTenantDeletesItsMembers) {
  MustCreate("acme");
  ASSERT_TRUE(members.Create(Admin(), "acme", "user:alice", "owner").ok());
  ASSERT_TRUE(tenants.Delete(Admin(), "acme", "").ok());
  MustCreate("acme");
  EXPECT_THAT(Listed("acme"), IsEmpty());
}

}  // namespace
}  // namespace septa::core
