// People's sign-in policy (services/core/people.h): which principal a
// person acts as for a request, from its memberships and its groups; the
// membership cache and its invalidation; what an editor may not do. The
// ID token's verification is services/oidc's (tests/unit/services/oidc, and
// tests/e2e/oidc against a real provider).
#include "services/core/people.h"

#include <gmock/gmock.h>

#include <map>

#include "services/core/member_service.h"
#include "tests/unit/services/core/core_fixture.h"
#include "tests/unit/services/core/scripted_people.h"

namespace septa::core {
namespace {

using ::testing::ElementsAre;

constexpr char kIssuer[] = "https://idp.acme.test";

using test::ScriptedPeople;

Person Alice(std::vector<std::string> groups = {"gpu-users", "platform"}) {
  return Person{.issuer = kIssuer, .user = "alice@acme.test", .groups = std::move(groups), .expire_time = {}};
}

TenantMember Member(std::string tenant, MemberKind kind, std::string name, MemberRole role) {
  return TenantMember{.tenant = std::move(tenant), .kind = kind, .name = std::move(name), .role = role};
}

TEST(MembershipsOfTest, OneMembershipPerTenantWithItsStrongestRoleAndWhatGaveIt) {
  const std::vector<TenantMember> rows = {
      Member("acme", MemberKind::kGroup, "platform", MemberRole::kViewer),
      Member("acme", MemberKind::kUser, "alice@acme.test", MemberRole::kEditor),
      Member("beta", MemberKind::kGroup, "gpu-users", MemberRole::kViewer),
      Member("gamma", MemberKind::kGroup, "gpu-users", MemberRole::kOwner),
      Member("gamma", MemberKind::kUser, "alice@acme.test", MemberRole::kViewer),
  };
  const std::vector<Membership> got = MembershipsOf(rows);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0], (Membership{"acme", MemberRole::kEditor, {"group:platform", "user:alice@acme.test"}}));
  EXPECT_EQ(got[1], (Membership{"beta", MemberRole::kViewer, {"group:gpu-users"}}));
  EXPECT_EQ(got[2], (Membership{"gamma", MemberRole::kOwner, {"group:gpu-users", "user:alice@acme.test"}}))
      << "a group's owner role beats the user's own viewer role";
}

TEST(PrincipalOfPersonTest, TheNamedTenantsMembershipGivesTheRole) {
  const std::vector<Membership> memberships = {{"acme", MemberRole::kEditor, {}}, {"beta", MemberRole::kViewer, {}}};
  auto acme = PrincipalOfPerson(Alice(), memberships, {}, "acme");
  ASSERT_TRUE(acme.ok());
  EXPECT_FALSE(acme->admin);
  EXPECT_EQ(acme->tenant, "acme");
  EXPECT_EQ(acme->role, Role::kEditor);
  EXPECT_EQ(acme->person, "alice@acme.test");
  EXPECT_TRUE(acme->token_id.empty());
  auto beta = PrincipalOfPerson(Alice(), memberships, {}, "beta");
  ASSERT_TRUE(beta.ok());
  EXPECT_EQ(beta->role, Role::kViewer);

  // Not a member: a principal of no tenant, which sees none (404 as for a token).
  auto other = PrincipalOfPerson(Alice(), memberships, {}, "gamma");
  ASSERT_TRUE(other.ok());
  EXPECT_TRUE(other->tenant.empty());
  EXPECT_FALSE(other->admin);
  EXPECT_EQ(other->role, Role::kViewer);
  EXPECT_EQ(RequireSeeTenant(*other, "gamma").code(), Code::kNotFound);
  EXPECT_EQ(RequireSeeTenant(*other, "").code(), Code::kNotFound);
}

TEST(PrincipalOfPersonTest, NoTenantNamedIsTheOnlyMembershipOrNone) {
  const std::vector<Membership> one = {{"acme", MemberRole::kOwner, {}}};
  auto only = PrincipalOfPerson(Alice(), one, {}, "");
  ASSERT_TRUE(only.ok());
  EXPECT_EQ(only->tenant, "acme");
  EXPECT_EQ(only->role, Role::kOwner);
  const std::vector<Membership> two = {{"acme", MemberRole::kOwner, {}}, {"beta", MemberRole::kOwner, {}}};
  auto ambiguous = PrincipalOfPerson(Alice(), two, {}, "");
  ASSERT_TRUE(ambiguous.ok());
  EXPECT_TRUE(ambiguous->tenant.empty()) << "never a guess between two tenants";
  auto none = PrincipalOfPerson(Alice(), {}, {}, "");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->tenant.empty());
  EXPECT_FALSE(none->admin);
}

TEST(PrincipalOfPersonTest, AnAdminGroupMakesAnAdminOwnerWhateverTheTenant) {
  const std::vector<std::string> admin_groups = {"platform"};
  for (const char* tenant : {"", "acme", "anything"}) {
    auto admin = PrincipalOfPerson(Alice(), {}, admin_groups, tenant);
    ASSERT_TRUE(admin.ok());
    EXPECT_TRUE(admin->admin);
    EXPECT_EQ(admin->role, Role::kOwner);
    EXPECT_EQ(admin->person, "alice@acme.test");
  }
  auto not_admin = PrincipalOfPerson(Alice({"gpu-users"}), {}, admin_groups, "acme");
  ASSERT_TRUE(not_admin.ok());
  EXPECT_FALSE(not_admin->admin);
  // Group names are exact: case and prefixes matter.
  EXPECT_FALSE(PrincipalOfPerson(Alice({"Platform", "platform-x"}), {}, admin_groups, "")->admin);
}

TEST(LooksLikeJwtTest, ThreeBase64UrlPartsAndNeverASeptaToken) {
  EXPECT_TRUE(LooksLikeJwt("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln-_"));
  EXPECT_FALSE(LooksLikeJwt("septa_0123456789abcdef_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"));
  EXPECT_FALSE(LooksLikeJwt(""));
  EXPECT_FALSE(LooksLikeJwt("a.b"));
  EXPECT_FALSE(LooksLikeJwt("a..c"));
  EXPECT_FALSE(LooksLikeJwt("a.b.c.d"));
  EXPECT_FALSE(LooksLikeJwt("a.b.c="));
  EXPECT_FALSE(LooksLikeJwt("a.b c.d"));
}

TEST(RequireOwnerTest, AnEditorWritesButManagesNoAccess) {
  Principal editor;
  editor.tenant = "acme";
  editor.role = Role::kEditor;
  EXPECT_TRUE(RequireWriter(editor, "create virtual clusters").ok());
  const Status refused = RequireOwner(editor, "issue tokens");
  EXPECT_EQ(refused.code(), Code::kPermissionDenied);
  EXPECT_THAT(refused.message(), ::testing::HasSubstr("an editor may not issue tokens"));
  Principal owner = editor;
  owner.role = Role::kOwner;
  EXPECT_TRUE(RequireOwner(owner, "issue tokens").ok());
  Principal viewer = editor;
  viewer.role = Role::kViewer;
  EXPECT_THAT(RequireOwner(viewer, "issue tokens").message(), ::testing::HasSubstr("a viewer may not"));
  EXPECT_EQ(RoleName(Role::kEditor), "editor");
  EXPECT_EQ(ParseRole("role", "editor").status().code(), Code::kInvalidArgument) << "no token is an editor's";
}

class PeopleTest : public CoreTest {
 protected:
  PeopleTest() {
    store.WatchRevocations([this](const Revocation& r) {
      authenticator.Forget(r);
      if (r.token_id.empty()) people.Forget();
    });
  }
  ~PeopleTest() override { store.WatchRevocations(nullptr); }

  std::shared_ptr<ScriptedPeople> verifier = std::make_shared<ScriptedPeople>();
  PeopleAuthenticator people{
      store, clock, verifier,
      PeopleSettings{.admin_groups = {{kIssuer, {"septa-admins"}}}, .cache_ttl = std::chrono::seconds(5)}};
  MemberService members{store, clock};
};

TEST_F(PeopleTest, AnIdTokenActsAsItsMembershipInTheNamedTenantAndATokenAsItself) {
  MustCreate("acme");
  MustCreate("beta");
  ASSERT_TRUE(members.Create(Admin(), "acme", "group:platform", "editor").ok());
  verifier->answers.insert_or_assign("a.b.c", Alice());
  auto caller = AuthenticateBearer(authenticator, people, "a.b.c", "acme", "req-1");
  ASSERT_TRUE(caller.ok()) << caller.status().ToString();
  ASSERT_NE(caller->person, nullptr);
  EXPECT_EQ(caller->person->user, "alice@acme.test");
  EXPECT_EQ(caller->principal.tenant, "acme");
  EXPECT_EQ(caller->principal.role, Role::kEditor);
  auto elsewhere = AuthenticateBearer(authenticator, people, "a.b.c", "beta", "req-2");
  ASSERT_TRUE(elsewhere.ok());
  EXPECT_TRUE(elsewhere->principal.tenant.empty());

  // An API token is still an API token.
  auto issued =
      tokens.Create(Admin(), TokenRequest{.principal = "tenant:beta", .role = "viewer", .ttl = "", .description = ""});
  ASSERT_TRUE(issued.ok()) << issued.status().ToString();
  auto token = AuthenticateBearer(authenticator, people, issued->secret_text, "acme", "req-3");
  ASSERT_TRUE(token.ok()) << token.status().ToString();
  EXPECT_EQ(token->person, nullptr);
  EXPECT_EQ(token->principal.tenant, "beta") << "a selector never changes a token's principal";
}

TEST_F(PeopleTest, AVerifiedTokenIsKnownUntilItsExpiryAndARefusedOneNever) {
  Person alice = Alice();
  alice.expire_time = clock.Now() + std::chrono::minutes(5);
  verifier->answers.insert_or_assign("a.b.c", alice);
  ASSERT_TRUE(people.Verify("a.b.c", "req-1").ok());
  ASSERT_TRUE(people.Verify("a.b.c", "req-2").ok());
  EXPECT_EQ(verifier->calls, 1) << "the signature is verified once";
  EXPECT_FALSE(people.Verify("a.b.d", "req-3").ok());
  EXPECT_FALSE(people.Verify("a.b.d", "req-4").ok());
  EXPECT_EQ(verifier->calls, 3) << "a refusal is never cached";
  clock.Advance(std::chrono::minutes(5));
  verifier->answers.insert_or_assign("a.b.c", Unauthenticated("expired (scripted)"));
  EXPECT_EQ(people.Verify("a.b.c", "req-5").status().code(), Code::kUnauthenticated) << "verified again at its expiry";
  EXPECT_EQ(verifier->calls, 4);
}

TEST_F(PeopleTest, ARefusedIdTokenIsAPlain401AndAnUnreachableProviderA503) {
  auto refused = AuthenticateBearer(authenticator, people, "x.y.z", "", "req-1");
  EXPECT_EQ(refused.status().code(), Code::kUnauthenticated);
  EXPECT_THAT(refused.status().message(), ::testing::HasSubstr("septad's log says why"));
  EXPECT_THAT(refused.status().message(), ::testing::Not(::testing::HasSubstr("signature")));
  verifier->answers.insert_or_assign("d.o.wn", Unavailable("the identity provider cannot be reached"));
  EXPECT_EQ(AuthenticateBearer(authenticator, people, "d.o.wn", "", "req-2").status().code(), Code::kUnavailable);

  PeopleAuthenticator nobody(store, clock, nullptr, {});
  EXPECT_FALSE(nobody.enabled());
  auto off = AuthenticateBearer(authenticator, nobody, "a.b.c", "", "req-3");
  EXPECT_EQ(off.status().code(), Code::kUnauthenticated);
  EXPECT_THAT(off.status().message(), ::testing::HasSubstr("signs no people in"));
}

TEST_F(PeopleTest, AChangeOfMembersTakesEffectAtOnceThroughTheCache) {
  MustCreate("acme");
  ASSERT_TRUE(members.Create(Admin(), "acme", "user:alice@acme.test", "owner").ok());
  auto owner = people.PrincipalFor(Alice(), "acme");
  ASSERT_TRUE(owner.ok());
  EXPECT_EQ(owner->role, Role::kOwner);
  ASSERT_TRUE(members.Update(Admin(), "acme", "user:alice@acme.test", "viewer", "").ok());
  EXPECT_EQ(people.PrincipalFor(Alice(), "acme")->role, Role::kViewer) << "told by the store, not after cache_ttl";
  ASSERT_TRUE(members.Delete(Admin(), "acme", "user:alice@acme.test", "").ok());
  EXPECT_TRUE(people.PrincipalFor(Alice(), "acme")->tenant.empty());
}

TEST_F(PeopleTest, MembershipsAreCachedPerPersonAndGroups) {
  MustCreate("acme");
  ASSERT_TRUE(members.Create(Admin(), "acme", "group:platform", "viewer").ok());
  ASSERT_EQ(people.PrincipalFor(Alice(), "acme")->tenant, "acme");
  // A write the cache is not told about (another database's, say) shows after cache_ttl.
  store.WatchRevocations(nullptr);
  ASSERT_TRUE(members.Create(Admin(), "acme", "user:alice@acme.test", "owner").ok());
  EXPECT_EQ(people.PrincipalFor(Alice(), "acme")->role, Role::kViewer);
  // The same person with other groups (a refreshed token) is read anew.
  EXPECT_EQ(people.PrincipalFor(Alice({"gpu-users"}), "acme")->role, Role::kOwner);
  clock.Advance(std::chrono::seconds(5));
  EXPECT_EQ(people.PrincipalFor(Alice(), "acme")->role, Role::kOwner);
}

TEST_F(PeopleTest, AUserRemovedFromAGroupLosesItsAccessWithItsNextToken) {
  MustCreate("acme");
  ASSERT_TRUE(members.Create(Admin(), "acme", "group:platform", "owner").ok());
  EXPECT_EQ(people.PrincipalFor(Alice(), "acme")->tenant, "acme");
  EXPECT_TRUE(people.PrincipalFor(Alice({"gpu-users"}), "acme")->tenant.empty());
}

TEST_F(PeopleTest, AnEditorPersonWritesTheTenantButNotItsTokensOrMembers) {
  MustCreate("acme");
  ASSERT_TRUE(members.Create(Admin(), "acme", "user:alice@acme.test", "editor").ok());
  RequestContext ctx;
  ctx.request_id = "req-alice";
  ctx.person = std::make_shared<const Person>(Alice());
  ASSERT_TRUE((ctx.principal = *people.PrincipalFor(*ctx.person, "acme")).role == Role::kEditor);
  EXPECT_EQ(tokens.Create(ctx, TokenRequest{.principal = "tenant:acme", .role = "viewer", .ttl = "", .description = ""})
                .status()
                .code(),
            Code::kPermissionDenied);
  EXPECT_EQ(members.Create(ctx, "acme", "user:mallory", "owner").status().code(), Code::kPermissionDenied);
  EXPECT_EQ(members.Update(ctx, "acme", "user:alice@acme.test", "owner", "").status().code(), Code::kPermissionDenied)
      << "nor make itself an owner";

  // An owner person does, and the audit names the person beside the principal.
  ASSERT_TRUE(members.Update(Admin(), "acme", "user:alice@acme.test", "owner", "").ok());
  ctx.principal = *people.PrincipalFor(*ctx.person, "acme");
  ASSERT_TRUE(members.Create(ctx, "acme", "user:bob@acme.test", "viewer").ok());
  EXPECT_EQ(Audit("tenants/acme/members/user:bob@acme.test").at(0).principal, "tenant:acme user:alice@acme.test");
}

TEST_F(PeopleTest, DescribeCallerListsAPersonsMembershipsAndAdminGroup) {
  MustCreate("acme");
  MustCreate("beta");
  ASSERT_TRUE(members.Create(Admin(), "acme", "group:platform", "editor").ok());
  ASSERT_TRUE(members.Create(Admin(), "beta", "user:alice@acme.test", "viewer").ok());
  RequestContext ctx;
  ctx.person = std::make_shared<const Person>(Alice());
  ctx.principal = *people.PrincipalFor(*ctx.person, "");
  auto described = DescribeCaller(ctx, people);
  ASSERT_TRUE(described.ok());
  EXPECT_FALSE(described->admin_by_group);
  ASSERT_EQ(described->memberships.size(), 2u);
  EXPECT_EQ(described->memberships[0].tenant, "acme");
  EXPECT_THAT(described->memberships[0].via, ElementsAre("group:platform"));
  EXPECT_EQ(described->memberships[1].role, MemberRole::kViewer);

  ctx.person = std::make_shared<const Person>(Alice({"septa-admins"}));
  EXPECT_TRUE(DescribeCaller(ctx, people)->admin_by_group);
  EXPECT_TRUE(people.PrincipalFor(*ctx.person, "")->admin);
  // Another issuer's group of the same name is no admin's.
  Person stranger = Alice({"septa-admins"});
  stranger.issuer = "https://other.test";
  EXPECT_FALSE(people.PrincipalFor(stranger, "")->admin);

  RequestContext token = TenantCtx("acme");
  auto plain = DescribeCaller(token, people);
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(plain->memberships.empty());
  EXPECT_EQ(plain->person, nullptr);
}

TEST_F(PeopleTest, ASelectorMustBeATenantsName) {
  EXPECT_TRUE(CheckTenantSelector("Septa-Tenant", "").ok());
  EXPECT_TRUE(CheckTenantSelector("Septa-Tenant", "acme").ok());
  const Status bad = CheckTenantSelector("Septa-Tenant", "ACME/../x");
  EXPECT_EQ(bad.code(), Code::kInvalidArgument);
  EXPECT_THAT(bad.message(), ::testing::HasSubstr("Septa-Tenant"));
}

}  // namespace
}  // namespace septa::core
