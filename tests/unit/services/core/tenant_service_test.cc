#include "services/core/tenant_service.h"

#include "tests/unit/services/core/core_fixture.h"

namespace septa::core {
namespace {

using TenantServiceTest = CoreTest;

TEST_F(TenantServiceTest, AdminCreatesAndAudits) {
  Tenant draft = Draft("acme", "isolated");
  draft.display_name = "Acme";
  draft.labels = {{"team", "ml"}};
  auto created = tenants.Create(Admin(), draft, "");
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(created->version, 1);
  EXPECT_EQ(created->state, TenantState::kActive);
  EXPECT_EQ(created->create_time, Now(clock));
  auto audit = Audit("tenants/acme");
  ASSERT_EQ(audit.size(), 1u);
  EXPECT_EQ(audit[0].action, "tenant.create");
  EXPECT_EQ(audit[0].principal, "admin");
  EXPECT_EQ(audit[0].old_etag, "");
  EXPECT_EQ(audit[0].new_etag, "1");
  EXPECT_EQ(audit[0].request_id, "req-admin");
}

TEST_F(TenantServiceTest, OnlyAdminOwnersCreate) {
  EXPECT_EQ(tenants.Create(Admin(Role::kViewer), Draft("a"), "").status().code(), Code::kPermissionDenied);
  EXPECT_EQ(tenants.Create(TenantCtx("a"), Draft("a"), "").status().code(), Code::kPermissionDenied);
  EXPECT_TRUE(Audit().empty());
}

TEST_F(TenantServiceTest, InvalidInputNamesTheField) {
  struct Case {
    Tenant draft;
    std::string field;
  };
  Tenant long_name = Draft(std::string(41, 'a'));
  Tenant bad_label = Draft("ok");
  bad_label.labels = {{"-bad", "x"}};
  Tenant bad_value = Draft("ok");
  bad_value.labels = {{"team", "no spaces"}};
  Tenant bad_display = Draft("ok");
  bad_display.display_name = "tab\there";
  std::vector<Case> cases = {
      {Draft(""), "name"},        {Draft("Upper"), "name"},        {Draft("-lead"), "name"},
      {long_name, "name"},        {Draft("ok", ""), "trust_tier"}, {Draft("ok", "gold"), "trust_tier"},
      {bad_label, "labels.-bad"}, {bad_value, "labels.team"},      {bad_display, "display_name"},
  };
  for (const auto& c : cases) {
    auto r = tenants.Create(Admin(), c.draft, "");
    ASSERT_FALSE(r.ok()) << c.field;
    EXPECT_EQ(r.status().code(), Code::kInvalidArgument) << r.status().ToString();
    ASSERT_EQ(r.status().violations().size(), 1u) << r.status().ToString();
    EXPECT_EQ(r.status().violations()[0].field, c.field);
  }
  EXPECT_TRUE(Audit().empty());
}

TEST_F(TenantServiceTest, UnknownTierListsTheChoices) {
  auto r = tenants.Create(Admin(), Draft("ok", "gold"), "");
  EXPECT_NE(r.status().message().find("dedicated, exclusive, isolated, shared"), std::string::npos)
      << r.status().message();
}

TEST_F(TenantServiceTest, DuplicateNameIsAlreadyExists) {
  MustCreate("acme");
  auto again = tenants.Create(Admin(), Draft("acme"), "");
  EXPECT_EQ(again.status().code(), Code::kAlreadyExists);
  EXPECT_EQ(Audit().size(), 1u);
}

TEST_F(TenantServiceTest, IdempotencyKeyReplaysAndRefusesADifferentRequest) {
  auto first = tenants.Create(Admin(), Draft("acme"), "key-1");
  ASSERT_TRUE(first.ok());
  clock.Advance(std::chrono::seconds(3));
  auto replay = tenants.Create(Admin(), Draft("acme"), "key-1");
  ASSERT_TRUE(replay.ok()) << replay.status().ToString();
  EXPECT_EQ(replay->create_time, first->create_time);
  EXPECT_EQ(Audit().size(), 1u);
  auto other = tenants.Create(Admin(), Draft("acme", "isolated"), "key-1");
  EXPECT_EQ(other.status().code(), Code::kAlreadyExists);
  EXPECT_NE(other.status().message().find("Idempotency-Key"), std::string::npos);
  auto second = tenants.Create(Admin(), Draft("beta"), "key-2");
  EXPECT_TRUE(second.ok());
}

TEST_F(TenantServiceTest, AnIdempotencyKeyIsFreeAgainAfterItsTimeToLive) {
  ASSERT_TRUE(tenants.Create(Admin(), Draft("acme"), "key-1").ok());
  clock.Advance(kDefaultIdempotencyTtl - std::chrono::seconds(1));
  EXPECT_EQ(tenants.Create(Admin(), Draft("beta"), "key-1").status().code(), Code::kAlreadyExists)
      << "still answering retries";
  clock.Advance(std::chrono::seconds(1));
  auto reused = tenants.Create(Admin(), Draft("beta"), "key-1");
  ASSERT_TRUE(reused.ok()) << reused.status().ToString();
  EXPECT_EQ(reused->name, "beta");
  auto replay = tenants.Create(Admin(), Draft("beta"), "key-1");
  ASSERT_TRUE(replay.ok()) << "the key now answers for beta: " << replay.status().ToString();
  EXPECT_EQ(replay->create_time, reused->create_time);
  EXPECT_EQ(Audit().size(), 2u);
}

TEST_F(TenantServiceTest, TheSweepForgetsOnlyExpiredKeysInBatches) {
  for (int i = 0; i < 7; ++i) {
    ASSERT_TRUE(tenants.Create(Admin(), Draft("old-" + std::to_string(i)), "old-" + std::to_string(i)).ok());
  }
  clock.Advance(std::chrono::hours(20));
  ASSERT_TRUE(tenants.Create(Admin(), Draft("recent"), "recent").ok());
  clock.Advance(std::chrono::hours(5));  // the old keys are 25 h old, the recent one 5 h
  auto swept = SweepExpiredIdempotencyKeys(store, clock.Now(), kDefaultIdempotencyTtl, 3);
  ASSERT_TRUE(swept.ok()) << swept.status().ToString();
  EXPECT_EQ(*swept, 7);
  auto key_exists = [&](const std::string& key) {
    bool found = false;
    EXPECT_TRUE(store
                    .Transact(TxMode::kReadOnly,
                              [&](Tx& tx) {
                                found = tx.Idempotency().Get(Admin().principal.ToString(), key).ok();
                                return Status::Ok();
                              })
                    .ok());
    return found;
  };
  EXPECT_FALSE(key_exists("old-0"));
  EXPECT_FALSE(key_exists("old-6"));
  EXPECT_TRUE(key_exists("recent"));
  auto again = SweepExpiredIdempotencyKeys(store, clock.Now(), kDefaultIdempotencyTtl, 3);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, 0);
}

TEST_F(TenantServiceTest, TenantsSeeOnlyThemselves) {
  MustCreate("acme");
  MustCreate("beta");
  EXPECT_TRUE(tenants.Get(TenantCtx("acme", Role::kViewer), "acme").ok());
  EXPECT_EQ(tenants.Get(TenantCtx("acme"), "beta").status().code(), Code::kNotFound);
  EXPECT_EQ(tenants.Get(TenantCtx("acme"), "nobody").status().code(), Code::kNotFound);
  auto page = tenants.List(TenantCtx("acme"), {});
  ASSERT_TRUE(page.ok());
  ASSERT_EQ(page->tenants.size(), 1u);
  EXPECT_EQ(page->tenants[0].name, "acme");
}

TEST_F(TenantServiceTest, ListPaginatesAndFilters) {
  for (const char* n : {"t1", "t2", "t3", "t4", "t5"}) {
    MustCreate(n, n == std::string("t2") ? "isolated" : "shared", {{"team", n == std::string("t4") ? "ml" : "web"}});
  }
  std::vector<std::string> seen;
  std::string token;
  int pages = 0;
  do {
    auto page = tenants.List(Admin(Role::kViewer), {2, token, ""});
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    for (const auto& t : page->tenants) seen.push_back(t.name);
    token = page->next_page_token;
    ++pages;
  } while (!token.empty());
  EXPECT_EQ(seen, (std::vector<std::string>{"t1", "t2", "t3", "t4", "t5"}));
  EXPECT_EQ(pages, 3);

  auto shared_web = tenants.List(Admin(), {0, "", "trust_tier=shared AND labels.team=\"web\""});
  ASSERT_TRUE(shared_web.ok());
  std::vector<std::string> names;
  for (const auto& t : shared_web->tenants) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"t1", "t3", "t5"}));

  EXPECT_EQ(tenants.List(Admin(), {501, "", ""}).status().violations()[0].field, "page_size");
  EXPECT_EQ(tenants.List(Admin(), {0, "garbage!", ""}).status().violations()[0].field, "page_token");
  EXPECT_EQ(tenants.List(Admin(), {0, "", "color=red"}).status().violations()[0].field, "filter");
}

TEST_F(TenantServiceTest, UpdateChecksEtagAndBumpsVersion) {
  MustCreate("acme");
  TenantUpdate update;
  update.display_name = "Acme Corp";
  auto stale = tenants.Update(Admin(), "acme", update, "7");
  EXPECT_EQ(stale.status().code(), Code::kFailedPrecondition);
  auto updated = tenants.Update(Admin(), "acme", update, "1");
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  EXPECT_EQ(updated->version, 2);
  EXPECT_EQ(updated->display_name, "Acme Corp");
  // The same change again changes nothing and audits nothing.
  auto noop = tenants.Update(Admin(), "acme", update, "");
  ASSERT_TRUE(noop.ok());
  EXPECT_EQ(noop->version, 2);
  auto audit = Audit("tenants/acme");
  ASSERT_EQ(audit.size(), 2u);
  EXPECT_EQ(audit[0].action, "tenant.update");  // newest first
  EXPECT_EQ(audit[0].old_etag, "1");
  EXPECT_EQ(audit[0].new_etag, "2");
}

TEST_F(TenantServiceTest, OwnersEditTheirTenantButNotItsTier) {
  MustCreate("acme");
  MustCreate("beta");
  TenantUpdate labels;
  labels.labels = std::map<std::string, std::string>{{"team", "ml"}};
  EXPECT_TRUE(tenants.Update(TenantCtx("acme"), "acme", labels, "").ok());
  EXPECT_EQ(tenants.Update(TenantCtx("acme", Role::kViewer), "acme", labels, "").status().code(),
            Code::kPermissionDenied);
  EXPECT_EQ(tenants.Update(TenantCtx("acme"), "beta", labels, "").status().code(), Code::kNotFound);
  TenantUpdate tier;
  tier.trust_tier = "exclusive";
  EXPECT_EQ(tenants.Update(TenantCtx("acme"), "acme", tier, "").status().code(), Code::kPermissionDenied);
  auto by_admin = tenants.Update(Admin(), "acme", tier, "");
  ASSERT_TRUE(by_admin.ok());
  EXPECT_EQ(by_admin->trust_tier, "exclusive");
  tier.trust_tier = "gold";
  EXPECT_EQ(tenants.Update(Admin(), "acme", tier, "").status().violations()[0].field, "trust_tier");
}

TEST_F(TenantServiceTest, AdminsSetTheQuotaOwnersOnlyReadIt) {
  Tenant draft = Draft("acme", "shared");
  draft.quota.vclusters = 3;
  auto created = tenants.Create(Admin(), draft, "");
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(created->quota.vclusters, 3);
  TenantUpdate gpus;
  gpus.quota.gpu_milli = 2500;
  gpus.quota_members = {&tenancy::TenantQuota::gpu_milli};
  EXPECT_EQ(tenants.Update(TenantCtx("acme"), "acme", gpus, "").status().code(), Code::kPermissionDenied);
  auto updated = tenants.Update(Admin(), "acme", gpus, "");
  ASSERT_TRUE(updated.ok()) << updated.status().ToString();
  EXPECT_EQ(updated->quota, (tenancy::TenantQuota{2500, std::nullopt, std::nullopt, std::nullopt, 3}));
  EXPECT_EQ(updated->version, 2);
  auto seen = tenants.Get(TenantCtx("acme", Role::kViewer), "acme");
  ASSERT_TRUE(seen.ok());
  EXPECT_EQ(seen->tenant.quota, updated->quota);
  ASSERT_TRUE(seen->quota_usage);
  EXPECT_EQ(*seen->quota_usage, tenancy::TenantUsage{});
  // The same quota again changes nothing; a bad one names its field and writes nothing.
  EXPECT_EQ(tenants.Update(Admin(), "acme", gpus, "")->version, 2);
  TenantUpdate bad;
  bad.quota.pods = -1;
  bad.quota_members = {&tenancy::TenantQuota::pods};
  EXPECT_EQ(tenants.Update(Admin(), "acme", bad, "").status().violations()[0].field, "quota.pods");
  Tenant huge = Draft("beta", "shared");
  huge.quota.gpu_milli = tenancy::kMaxGpuMilli + 1;
  EXPECT_EQ(tenants.Create(Admin(), huge, "").status().violations()[0].field, "quota.gpu_milli");
  EXPECT_EQ(tenants.Get(Admin(), "acme")->tenant.version, 2);
}

TEST_F(TenantServiceTest, GetQuotaReadsTheLimitsAndTheUsageWithOrWithoutAQuota) {
  Tenant draft = Draft("acme", "shared");
  draft.quota.vclusters = 3;
  ASSERT_TRUE(tenants.Create(Admin(), draft, "").ok());
  ASSERT_TRUE(tenants.Create(Admin(), Draft("beta", "shared"), "").ok());
  auto acme = tenants.GetQuota(TenantCtx("acme", Role::kViewer), "acme");
  ASSERT_TRUE(acme.ok()) << acme.status().ToString();
  EXPECT_EQ(acme->tenant, "acme");
  EXPECT_EQ(acme->quota.vclusters, 3);
  EXPECT_EQ(acme->usage, tenancy::TenantUsage{});
  auto beta = tenants.GetQuota(Admin(), "beta");  // no quota: unlimited, and its usage all the same
  ASSERT_TRUE(beta.ok()) << beta.status().ToString();
  EXPECT_EQ(beta->quota, tenancy::TenantQuota{});
  EXPECT_EQ(tenants.GetQuota(TenantCtx("acme"), "beta").status().code(), Code::kNotFound);
  EXPECT_EQ(tenants.GetQuota(Admin(), "nobody").status().code(), Code::kNotFound);
  EXPECT_EQ(tenants.GetQuota(Admin(), "Not A Name").status().code(), Code::kNotFound);
}

// A token issued under the old tier lives no longer than the new tier's cap
// allows, counted from its issue; a cached verification is dropped at once.
TEST_F(TenantServiceTest, AStricterTierShortensTheTenantsTokens) {
  MustCreate("acme");  // shared: tokens live up to 24 h
  store.WatchRevocations([this](const Revocation& r) { authenticator.Forget(r); });
  auto issued = tokens.Create(Admin(), {"tenant:acme", "owner", "", ""});
  ASSERT_TRUE(issued.ok());
  const TimePoint created = issued->token.create_time;
  EXPECT_EQ(issued->token.expire_time, created + std::chrono::hours(24));
  clock.Advance(std::chrono::minutes(10));
  ASSERT_TRUE(authenticator.Authenticate(issued->secret_text).ok());  // verified and cached

  TenantUpdate tier;
  tier.trust_tier = "exclusive";  // tokens live up to 15 min
  ASSERT_TRUE(tenants.Update(Admin(), "acme", tier, "").ok());
  auto listed = tokens.List(Admin());
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].expire_time, created + std::chrono::minutes(15));
  EXPECT_TRUE(authenticator.Authenticate(issued->secret_text).ok()) << "still within the new cap";
  clock.Advance(std::chrono::minutes(5) + std::chrono::seconds(1));
  EXPECT_EQ(authenticator.Authenticate(issued->secret_text).status().code(), Code::kUnauthenticated);

  tier.trust_tier = "shared";  // a looser tier does not lengthen them again
  ASSERT_TRUE(tenants.Update(Admin(), "acme", tier, "").ok());
  EXPECT_EQ((*tokens.List(Admin()))[0].expire_time, created + std::chrono::minutes(15));
  store.WatchRevocations(nullptr);
}

// Issue 28 L1: while a tenant is suspended its API tokens only read: every
// write is refused naming the suspension, from the very next request (the
// state change is told to the token cache as a revocation is), no token is
// issued for it, and another tenant is untouched. Resumed, all is as before.
TEST_F(TenantServiceTest, ASuspendedTenantsTokensOnlyReadAndItGetsNoNewTokens) {
  MustCreate("acme");
  MustCreate("beta");
  store.WatchRevocations([this](const Revocation& r) { authenticator.Forget(r); });
  auto owner = tokens.Create(Admin(), {"tenant:acme", "owner", "", ""});
  auto other = tokens.Create(Admin(), {"tenant:beta", "owner", "", ""});
  ASSERT_TRUE(owner.ok() && other.ok());
  auto before = authenticator.Authenticate(owner->secret_text);  // verified and cached
  ASSERT_TRUE(before.ok());
  EXPECT_FALSE(before->suspended);

  TenantUpdate suspend;
  suspend.state = TenantState::kSuspended;
  ASSERT_TRUE(tenants.Update(Admin(), "acme", suspend, "").ok());
  auto who = authenticator.Authenticate(owner->secret_text);
  ASSERT_TRUE(who.ok()) << who.status().ToString();
  EXPECT_TRUE(who->suspended) << "told at once, not after the cache's TTL";
  const RequestContext ctx{*who, "req-suspended"};
  EXPECT_TRUE(tenants.Get(ctx, "acme").ok());
  TenantUpdate rename;
  rename.display_name = "Acme";
  const Status refused = tenants.Update(ctx, "acme", rename, "").status();
  EXPECT_EQ(refused.code(), Code::kPermissionDenied) << refused.ToString();
  EXPECT_EQ(refused.message(),
            "tenant \"acme\" is suspended: its tokens may read but not update tenants until an admin makes it "
            "ACTIVE again");
  EXPECT_EQ(tokens.Create(ctx, {"tenant:acme", "viewer", "", ""}).status().code(), Code::kPermissionDenied);
  EXPECT_EQ(tokens.Revoke(ctx, owner->token.id).code(), Code::kPermissionDenied);
  auto minted = tokens.Create(Admin(), {"tenant:acme", "owner", "", ""});
  EXPECT_EQ(minted.status().code(), Code::kFailedPrecondition) << minted.status().ToString();
  ASSERT_FALSE(minted.status().violations().empty());
  EXPECT_EQ(minted.status().violations()[0].field, "principal");
  auto beta = authenticator.Authenticate(other->secret_text);
  ASSERT_TRUE(beta.ok());
  EXPECT_FALSE(beta->suspended);

  TenantUpdate resume;
  resume.state = TenantState::kActive;
  ASSERT_TRUE(tenants.Update(Admin(), "acme", resume, "").ok());
  who = authenticator.Authenticate(owner->secret_text);
  ASSERT_TRUE(who.ok());
  EXPECT_FALSE(who->suspended);
  EXPECT_TRUE(tenants.Update(RequestContext{*who, "req-resumed"}, "acme", rename, "").ok());
  EXPECT_TRUE(tokens.Create(Admin(), {"tenant:acme", "owner", "", ""}).ok());
  store.WatchRevocations(nullptr);
}

TEST_F(TenantServiceTest, DeleteRevokesTheTenantsTokens) {
  MustCreate("acme");
  auto issued = tokens.Create(Admin(), {"tenant:acme", "owner", "", ""});
  ASSERT_TRUE(issued.ok());
  EXPECT_EQ(tenants.Delete(TenantCtx("acme"), "acme", "").code(), Code::kPermissionDenied);
  EXPECT_EQ(tenants.Delete(Admin(), "acme", "9").code(), Code::kFailedPrecondition);
  ASSERT_TRUE(tenants.Delete(Admin(), "acme", "1").ok());
  EXPECT_EQ(tenants.Get(Admin(), "acme").status().code(), Code::kNotFound);
  EXPECT_EQ(tenants.Delete(Admin(), "acme", "").code(), Code::kNotFound);
  auto listed = tokens.List(Admin());
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_TRUE((*listed)[0].revoke_time.has_value());
  EXPECT_EQ(Audit("tenants/acme")[0].action, "tenant.delete");
}

TEST_F(TenantServiceTest, StoreOutageSurfacesAsUnavailable) {
  store.FailNext(Unavailable("database down"));
  EXPECT_EQ(tenants.Get(Admin(), "acme").status().code(), Code::kUnavailable);
}

}  // namespace
}  // namespace septa::core
