#include "services/core/token_service.h"

#include "services/core/auth.h"
#include "services/core/retention.h"
#include "tests/unit/services/core/core_fixture.h"

namespace septa::core {
namespace {

using TokenServiceTest = CoreTest;

TEST_F(TokenServiceTest, IssuedTokenAuthenticatesAndStoresOnlyAHash) {
  auto issued = tokens.Create(Admin(), {"admin", "viewer", "", "ci"});
  ASSERT_TRUE(issued.ok()) << issued.status().ToString();
  EXPECT_TRUE(issued->secret_text.starts_with("septa_" + issued->token.id + "_"));
  EXPECT_EQ(issued->secret_text.size(), 6 + 16 + 1 + 43u);
  EXPECT_EQ(issued->secret_text.find(issued->token.secret_hash), std::string::npos);
  auto who = authenticator.Authenticate(issued->secret_text);
  ASSERT_TRUE(who.ok()) << who.status().ToString();
  EXPECT_TRUE(who->admin);
  EXPECT_EQ(who->role, Role::kViewer);
  EXPECT_EQ(who->token_id, issued->token.id);
}

TEST_F(TokenServiceTest, BadTokensAreUnauthenticated) {
  auto issued = tokens.Create(Admin(), {"admin", "owner", "", ""});
  ASSERT_TRUE(issued.ok());
  std::string tampered = issued->secret_text;
  tampered.back() = tampered.back() == 'A' ? 'B' : 'A';
  for (const std::string& bad :
       {std::string(""), std::string("nonsense"), tampered, "septa_0000000000000000_" + std::string(43, 'A')}) {
    EXPECT_EQ(authenticator.Authenticate(bad).status().code(), Code::kUnauthenticated) << bad;
  }
}

TEST_F(TokenServiceTest, ExpiryAndRevocation) {
  auto issued = tokens.Create(Admin(), {"admin", "owner", "1h", ""});
  ASSERT_TRUE(issued.ok());
  EXPECT_TRUE(authenticator.Authenticate(issued->secret_text).ok());
  clock.Advance(std::chrono::minutes(61));
  EXPECT_EQ(authenticator.Authenticate(issued->secret_text).status().message(), "bearer token has expired");

  auto other = tokens.Create(Admin(), {"admin", "owner", "", ""});
  ASSERT_TRUE(other.ok());
  EXPECT_TRUE(authenticator.Authenticate(other->secret_text).ok());
  ASSERT_TRUE(tokens.Revoke(Admin(), other->token.id).ok());
  // Revocation through this process is seen at once, cache or not.
  EXPECT_EQ(authenticator.Authenticate(other->secret_text).status().message(), "bearer token has been revoked");
  EXPECT_TRUE(tokens.Revoke(Admin(), other->token.id).ok());  // idempotent
  EXPECT_EQ(Audit("tokens/" + other->token.id).size(), 2u);   // create + one revoke
}

TEST_F(TokenServiceTest, RevocationByAnotherReplicaIsSeenWithinTheCacheTtl) {
  auto issued = tokens.Create(Admin(), {"admin", "owner", "", ""});
  ASSERT_TRUE(issued.ok());
  ASSERT_TRUE(authenticator.Authenticate(issued->secret_text).ok());  // now cached
  ASSERT_TRUE(
      store.Transact(TxMode::kReadWrite, [&](Tx& tx) { return tx.Tokens().Revoke(issued->token.id, Now(clock)); })
          .ok());
  EXPECT_TRUE(authenticator.Authenticate(issued->secret_text).ok());
  clock.Advance(std::chrono::seconds(6));
  EXPECT_EQ(authenticator.Authenticate(issued->secret_text).status().code(), Code::kUnauthenticated);
}

TEST_F(TokenServiceTest, AToldRevocationEndsTheCachedTrustAtOnce) {
  MustCreate("acme");
  MustCreate("beta");
  auto acme = tokens.Create(Admin(), {"tenant:acme", "owner", "", ""});
  auto beta = tokens.Create(Admin(), {"tenant:beta", "owner", "", ""});
  auto admin = tokens.Create(Admin(), {"admin", "owner", "", ""});
  ASSERT_TRUE(acme.ok() && beta.ok() && admin.ok());
  // Wired as septad wires it: the store tells the authenticator.
  store.WatchRevocations([this](const Revocation& r) { authenticator.Forget(r); });
  for (const auto* t : {&*acme, &*beta, &*admin}) ASSERT_TRUE(authenticator.Authenticate(t->secret_text).ok());

  ASSERT_TRUE(
      store.Transact(TxMode::kReadWrite, [&](Tx& tx) { return tx.Tokens().RevokeAllOf("tenant:acme", Now(clock)); })
          .ok());
  EXPECT_EQ(authenticator.Authenticate(acme->secret_text).status().code(), Code::kUnauthenticated)
      << "within the cache TTL, the principal's tokens are no longer trusted";
  EXPECT_TRUE(authenticator.Authenticate(beta->secret_text).ok());
  ASSERT_TRUE(
      store.Transact(TxMode::kReadWrite, [&](Tx& tx) { return tx.Tokens().Revoke(admin->token.id, Now(clock)); }).ok());
  EXPECT_EQ(authenticator.Authenticate(admin->secret_text).status().code(), Code::kUnauthenticated);

  // "Start over" drops everything: a row changed behind the cache's back is read again.
  store.WatchRevocations(nullptr);
  ASSERT_TRUE(
      store.Transact(TxMode::kReadWrite, [&](Tx& tx) { return tx.Tokens().RevokeAllOf("tenant:beta", Now(clock)); })
          .ok());
  EXPECT_TRUE(authenticator.Authenticate(beta->secret_text).ok()) << "not told: still cached";
  authenticator.Forget(Revocation{});
  EXPECT_EQ(authenticator.Authenticate(beta->secret_text).status().code(), Code::kUnauthenticated);
}

TEST_F(TokenServiceTest, TenantOwnersIssueForTheirOwnTenantOnly) {
  MustCreate("acme");
  MustCreate("beta");
  auto viewer = tokens.Create(TenantCtx("acme"), {"tenant:acme", "viewer", "30m", ""});
  ASSERT_TRUE(viewer.ok()) << viewer.status().ToString();
  auto who = authenticator.Authenticate(viewer->secret_text);
  ASSERT_TRUE(who.ok());
  EXPECT_EQ(who->tenant, "acme");
  EXPECT_FALSE(who->admin);
  EXPECT_EQ(tokens.Create(TenantCtx("acme"), {"tenant:beta", "owner", "", ""}).status().code(), Code::kNotFound);
  EXPECT_EQ(tokens.Create(TenantCtx("acme"), {"admin", "owner", "", ""}).status().code(), Code::kPermissionDenied);
  EXPECT_EQ(tokens.Create(TenantCtx("acme", Role::kViewer), {"tenant:acme", "viewer", "", ""}).status().code(),
            Code::kPermissionDenied);
  // Listing and revoking stay inside the tenant.
  auto beta = tokens.Create(Admin(), {"tenant:beta", "owner", "", ""});
  ASSERT_TRUE(beta.ok());
  auto listed = tokens.List(TenantCtx("acme", Role::kViewer));
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].principal, "tenant:acme");
  EXPECT_EQ(tokens.Revoke(TenantCtx("acme"), beta->token.id).code(), Code::kNotFound);
  EXPECT_EQ(tokens.Revoke(TenantCtx("acme", Role::kViewer), viewer->token.id).code(), Code::kPermissionDenied);
}

TEST_F(TokenServiceTest, RequestsAreValidated) {
  EXPECT_EQ(tokens.Create(Admin(), {"root", "owner", "", ""}).status().violations()[0].field, "principal");
  EXPECT_EQ(tokens.Create(Admin(), {"tenant:Bad", "owner", "", ""}).status().violations()[0].field, "principal");
  EXPECT_EQ(tokens.Create(Admin(), {"admin", "god", "", ""}).status().violations()[0].field, "role");
  EXPECT_EQ(tokens.Create(Admin(), {"admin", "owner", "3 days", ""}).status().violations()[0].field, "ttl");
  EXPECT_EQ(tokens.Create(Admin(), {"admin", "owner", "0s", ""}).status().violations()[0].field, "ttl");
  EXPECT_EQ(tokens.Create(Admin(), {"tenant:ghost", "owner", "", ""}).status().violations()[0].field, "principal");
  EXPECT_TRUE(Audit().empty());
}

// Issue 9: randomness that fails is an error, never a predictable secret; the
// request id falls back to a fixed marker so the failure can still be logged.
TEST_F(TokenServiceTest, NoEntropyIsUnavailableAndWritesNothing) {
  ExhaustedRandom exhausted;
  TokenService no_entropy(store, clock, exhausted, authenticator);
  auto issued = no_entropy.Create(Admin(), {"admin", "owner", "", "ci"});
  EXPECT_EQ(issued.status().code(), Code::kUnavailable) << issued.status().ToString();
  EXPECT_TRUE(Audit().empty());
  EXPECT_EQ(AcceptOrMakeRequestId("", exhausted), "no-entropy");
  EXPECT_EQ(AcceptOrMakeRequestId("abc-1", exhausted), "abc-1");
}

// DESIGN.md section 2: a tier caps its tenants' credential lifetimes; a TTL
// above the cap is capped, not refused (as Vault treats a role's max_ttl).
TEST_F(TokenServiceTest, TenantTokensLiveNoLongerThanTheirTiersCap) {
  MustCreate("vault", "exclusive");  // cap 15 min
  const TimePoint now = Now(clock);
  struct Case {
    RequestContext ctx;
    std::string ttl;
    std::chrono::seconds lifetime;
  };
  for (const auto& c : {Case{TenantCtx("vault"), "", std::chrono::minutes(15)},
                        Case{TenantCtx("vault"), "87600h", std::chrono::minutes(15)},
                        Case{TenantCtx("vault"), "16m", std::chrono::minutes(15)},
                        Case{TenantCtx("vault"), "10m", std::chrono::minutes(10)},
                        Case{Admin(), "", std::chrono::minutes(15)}, Case{Admin(), "24h", std::chrono::minutes(15)}}) {
    auto issued = tokens.Create(c.ctx, {"tenant:vault", "owner", c.ttl, ""});
    ASSERT_TRUE(issued.ok()) << c.ttl << ": " << issued.status().ToString();
    ASSERT_TRUE(issued->token.expire_time.has_value()) << c.ttl;
    EXPECT_EQ(*issued->token.expire_time - now, c.lifetime) << c.ttl;
  }
  auto longest = tokens.Create(TenantCtx("vault"), {"tenant:vault", "owner", "87600h", ""});
  ASSERT_TRUE(longest.ok());
  clock.Advance(std::chrono::minutes(15) + std::chrono::seconds(1));
  EXPECT_EQ(authenticator.Authenticate(longest->secret_text).status().message(), "bearer token has expired");
}

TEST_F(TokenServiceTest, AdminTokensLiveNoLongerThanTheAdminCap) {
  TokenService capped(store, clock, random, authenticator, TokenLimits{.admin_ttl_max = std::chrono::hours(2)});
  const TimePoint now = Now(clock);
  for (const auto& [ttl, lifetime] : std::vector<std::pair<std::string, std::chrono::seconds>>{
           {"", std::chrono::hours(2)}, {"87600h", std::chrono::hours(2)}, {"90m", std::chrono::minutes(90)}}) {
    auto issued = capped.Create(Admin(), {"admin", "viewer", ttl, ""});
    ASSERT_TRUE(issued.ok()) << ttl << ": " << issued.status().ToString();
    ASSERT_TRUE(issued->token.expire_time.has_value()) << ttl;
    EXPECT_EQ(*issued->token.expire_time - now, lifetime) << ttl;
  }
  auto defaulted = tokens.Create(Admin(), {"admin", "viewer", "", ""});
  ASSERT_TRUE(defaulted.ok());
  ASSERT_TRUE(defaulted->token.expire_time.has_value());
  EXPECT_EQ(*defaulted->token.expire_time - now, kDefaultAdminTokenTtlMax);
}

TEST_F(TokenServiceTest, RoleIsRequired) {
  MustCreate("acme");
  for (const auto& ctx : {Admin(), TenantCtx("acme")}) {
    auto refused = tokens.Create(ctx, {"tenant:acme", "", "", ""});
    ASSERT_EQ(refused.status().code(), Code::kInvalidArgument) << refused.status().ToString();
    EXPECT_EQ(refused.status().violations()[0].field, "role");
  }
  EXPECT_EQ(tokens.Create(Admin(), {"admin", "", "", ""}).status().violations()[0].field, "role");
  EXPECT_TRUE(Audit("").size() == 1u) << "only the tenant's creation is audited";
}

TEST_F(TokenServiceTest, ATenantHoldsAtMostTheLimitOfLiveTokens) {
  MustCreate("acme");
  MustCreate("beta");
  TokenService limited(store, clock, random, authenticator, TokenLimits{.tenant_live_max = 3});
  std::vector<IssuedToken> held;
  for (int i = 0; i < 3; ++i) {
    const std::string ttl = i == 2 ? "1h" : "";
    auto issued = limited.Create(TenantCtx("acme"), {"tenant:acme", i == 0 ? "viewer" : "owner", ttl, ""});
    ASSERT_TRUE(issued.ok()) << issued.status().ToString();
    held.push_back(*issued);
  }
  for (const auto& ctx : {TenantCtx("acme"), Admin()}) {
    auto refused = limited.Create(ctx, {"tenant:acme", "viewer", "", ""});
    EXPECT_EQ(refused.status().code(), Code::kResourceExhausted) << refused.status().ToString();
    EXPECT_NE(refused.status().message().find("limit of 3 live tokens"), std::string::npos)
        << refused.status().message();
  }
  // Another tenant and admins have their own room.
  EXPECT_TRUE(limited.Create(TenantCtx("beta"), {"tenant:beta", "owner", "", ""}).ok());
  EXPECT_TRUE(limited.Create(Admin(), {"admin", "owner", "", ""}).ok());
  // A revoked token frees its place, and so does an expired one.
  ASSERT_TRUE(limited.Revoke(TenantCtx("acme"), held[0].token.id).ok());
  EXPECT_TRUE(limited.Create(TenantCtx("acme"), {"tenant:acme", "viewer", "2h", ""}).ok());
  EXPECT_EQ(limited.Create(TenantCtx("acme"), {"tenant:acme", "viewer", "", ""}).status().code(),
            Code::kResourceExhausted);
  clock.Advance(std::chrono::hours(1));
  EXPECT_TRUE(limited.Create(TenantCtx("acme"), {"tenant:acme", "viewer", "", ""}).ok());
}

TEST_F(TokenServiceTest, ABootstrapAdminTokenIsMintedOnlyWhileNoLiveAdminOwnerTokenExistsAndExpires) {
  auto issued = tokens.CreateBootstrapAdmin(std::chrono::hours(24));
  ASSERT_TRUE(issued.ok()) << issued.status().ToString();
  ASSERT_TRUE(issued->has_value());
  const IssuedToken first = **issued;
  ASSERT_TRUE(first.token.expire_time.has_value()) << "no root credential lives for ever";
  EXPECT_EQ(*first.token.expire_time, Now(clock) + std::chrono::hours(24));
  auto who = authenticator.Authenticate(first.secret_text);
  ASSERT_TRUE(who.ok());
  EXPECT_TRUE(who->admin);
  EXPECT_EQ(who->role, Role::kOwner);

  auto again = tokens.CreateBootstrapAdmin(std::chrono::hours(24));
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->has_value()) << "a restart or another replica mints nothing while an admin can sign in";

  clock.Advance(std::chrono::hours(25));
  auto after_expiry = tokens.CreateBootstrapAdmin(std::chrono::hours(24 * 365));
  ASSERT_TRUE(after_expiry.ok());
  ASSERT_TRUE(after_expiry->has_value()) << "no live admin owner token left: one is minted again";
  EXPECT_LE(*(*after_expiry)->token.expire_time, Now(clock) + kDefaultAdminTokenTtlMax) << "capped like any";
  ASSERT_TRUE(tokens.Revoke(Admin(), (*after_expiry)->token.id).ok());
  auto after_revocation = tokens.CreateBootstrapAdmin(std::chrono::hours(24));
  ASSERT_TRUE(after_revocation.ok());
  EXPECT_TRUE(after_revocation->has_value()) << "a revoked one does not count";
}

TEST_F(TokenServiceTest, TiersAreReadableByEveryone) {
  auto listed = tiers.List(TenantCtx("anyone", Role::kViewer));
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 4u);
  auto exclusive = tiers.Get(Admin(), "exclusive");
  ASSERT_TRUE(exclusive.ok());
  EXPECT_EQ(exclusive->credential_ttl_max_seconds, 15 * 60);
  EXPECT_EQ(exclusive->gpu_sharing, gpu::Tier::kExclusive);
  EXPECT_EQ(tiers.Get(Admin(), "gold").status().code(), Code::kNotFound);
}

}  // namespace
}  // namespace septa::core

namespace septa::core {
namespace {

// A pipeline's exchanged tokens would pile up for ever: once dead for
// token_retention they are deleted (core/retention.h), the live ones and
// the audit records stay, and the live count no longer reads the dead.
TEST_F(TokenServiceTest, TokensDeadLongEnoughAreSweptAndTheLiveStay) {
  MustCreate("acme");
  auto short_lived = tokens.Create(Admin(), {"tenant:acme", "owner", "1h", "ci"});
  auto revoked = tokens.Create(Admin(), {"tenant:acme", "owner", "", "old"});
  auto lasting = tokens.Create(Admin(), {"admin", "viewer", "", "dashboard"});  // 32 days
  ASSERT_TRUE(short_lived.ok() && revoked.ok() && lasting.ok());
  ASSERT_TRUE(tokens.Revoke(Admin(), revoked->token.id).ok());
  clock.Advance(std::chrono::hours(2));
  // Dead, but not for long enough yet.
  auto swept = SweepDeadTokens(store, Now(clock) - std::chrono::hours(24));
  ASSERT_TRUE(swept.ok()) << swept.status().ToString();
  EXPECT_EQ(*swept, 0);
  clock.Advance(std::chrono::hours(24));
  swept = SweepDeadTokens(store, Now(clock) - std::chrono::hours(24), {.batch = 1, .max_batches = 100});
  ASSERT_TRUE(swept.ok()) << swept.status().ToString();
  EXPECT_EQ(*swept, 2) << "one a batch, until none is left";
  auto listed = tokens.List(Admin());
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].id, lasting->token.id);
  EXPECT_TRUE(authenticator.Authenticate(lasting->secret_text).ok());
  EXPECT_EQ(Audit("tokens/" + revoked->token.id).size(), 2u) << "its audit records stay";
  EXPECT_EQ(tokens.Revoke(Admin(), short_lived->token.id).code(), Code::kNotFound) << "gone";
}

// People's portal sessions and sign-ins go on the same retention.
TEST_F(TokenServiceTest, PeoplesSessionsDeadLongEnoughAreSweptWithTheTokens) {
  const TimePoint now = Now(clock);
  const auto session = [&](const std::string& id) {
    return PersonSession{.id = id,
                         .secret_hash = std::string(64, 'a'),
                         .issuer = "https://idp.example.com",
                         .user = "alice@acme.test",
                         .identity_expire_time = now + std::chrono::minutes(5),
                         .id_token = "header.payload.signature",
                         .create_time = now,
                         .expire_time = now + std::chrono::hours(12)};
  };
  const PendingSignIn sign_in{.state_hash = std::string(64, 'b'),
                              .issuer = "https://idp.example.com",
                              .browser_hash = std::string(64, 'c'),
                              .code_verifier = std::string(43, 'v'),
                              .nonce = "n",
                              .return_to = "/",
                              .create_time = now,
                              .expire_time = now + std::chrono::minutes(10)};
  ASSERT_TRUE(store
                  .Transact(TxMode::kReadWrite,
                            [&](Tx& tx) {
                              SEPTA_RETURN_IF_ERROR(tx.PersonSessions().InsertSignIn(sign_in));
                              SEPTA_RETURN_IF_ERROR(tx.PersonSessions().Insert(session("00000000000000a1")));
                              SEPTA_RETURN_IF_ERROR(tx.PersonSessions().Insert(session("00000000000000a2")));
                              return tx.PersonSessions().Revoke("00000000000000a1", now);
                            })
                  .ok());
  clock.Advance(std::chrono::hours(2));
  auto swept = SweepDeadTokens(store, Now(clock) - std::chrono::hours(24));
  ASSERT_TRUE(swept.ok()) << swept.status().ToString();
  EXPECT_EQ(*swept, 0) << "dead, but not for long enough yet";
  clock.Advance(std::chrono::hours(24));
  swept = SweepDeadTokens(store, Now(clock) - std::chrono::hours(24), {.batch = 1, .max_batches = 100});
  ASSERT_TRUE(swept.ok()) << swept.status().ToString();
  EXPECT_EQ(*swept, 2) << "the revoked session and the expired sign-in";
  const Status left = store.Transact(TxMode::kReadOnly, [&](Tx& tx) {
    EXPECT_EQ(tx.PersonSessions().Get("00000000000000a1").status().code(), Code::kNotFound);
    EXPECT_TRUE(tx.PersonSessions().Get("00000000000000a2").ok()) << "expired 14 h ago: kept";
    return Status::Ok();
  });
  EXPECT_TRUE(left.ok()) << left.ToString();
  EXPECT_EQ(store
                .Transact(TxMode::kReadWrite,
                          [](Tx& tx) { return tx.PersonSessions().TakeSignIn(std::string(64, 'b')).status(); })
                .code(),
            Code::kNotFound);
}

}  // namespace
}  // namespace septa::core
