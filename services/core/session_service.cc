#include "services/core/session_service.h"

#include <algorithm>

#include "services/base/base64.h"
#include "services/base/mac.h"
#include "services/core/audit.h"
#include "services/core/crypto.h"
#include "services/core/person_sign_in.h"

namespace septa::core {

namespace {
constexpr std::string_view kCsrfLabel = "septa session csrf v1";

TimePoint Earlier(TimePoint at, const std::optional<TimePoint>& other) { return other ? std::min(at, *other) : at; }

// A new row's id and secret, and the secret's text.
struct NewSecret {
  std::string id;
  std::string secret;
};
Result<NewSecret> MakeSecret(RandomSource& random) {
  auto id = RandomHex(random, kTokenIdBytes);
  SEPTA_RETURN_IF_ERROR(id);
  auto secret = RandomBase64Url(random, kTokenSecretBytes);
  SEPTA_RETURN_IF_ERROR(secret);
  return NewSecret{*std::move(id), *std::move(secret)};
}

RequestContext SystemContextOf(const Principal& principal, const std::string& request_id) {
  RequestContext ctx;
  ctx.principal = principal;
  ctx.request_id = request_id;
  return ctx;
}
}  // namespace

std::string SessionService::CsrfToken(std::string_view cookie_value) {
  std::optional<ParsedTokenText> parsed = ParseTokenText(cookie_value);
  if (!parsed) parsed = ParsePersonCookie(cookie_value);
  if (!parsed) return "";
  return base::Base64UrlEncode(base::HmacSha256(parsed->secret, kCsrfLabel));
}

Result<IssuedSession> SessionService::Issue(Tx& tx, const ApiToken& parent, const RequestContext& ctx,
                                            std::vector<std::string>& ended) {
  if (!parent.apply_sets.empty()) {
    // A pipeline's token for its sets is no person's: the portal writes as a person.
    return PermissionDenied("a token scoped to apply sets does not sign in to the portal");
  }
  const TimePoint now = Now(clock_);
  TimePoint expire = Earlier(now + limits_.ttl, parent.expire_time);
  if (!ctx.principal.admin) {
    auto tenant = tx.Tenants().Get(ctx.principal.tenant);
    if (IsNotFound(tenant)) return Unauthenticated("tenant \"" + ctx.principal.tenant + "\" no longer exists");
    SEPTA_RETURN_IF_ERROR(tenant);
    auto tier = tx.TrustTiers().Get(tenant->trust_tier);
    SEPTA_RETURN_IF_ERROR(tier);
    expire = std::min(expire, now + std::chrono::seconds(tier->credential_ttl_max_seconds));
  }
  // The oldest live sessions beyond the bound end now.
  auto held = tx.Tokens().List(parent.principal, TokenKind::kSession);
  SEPTA_RETURN_IF_ERROR(held);
  std::vector<const ApiToken*> live;
  for (const ApiToken& t : *held) {
    if (IsLive(t, now)) live.push_back(&t);
  }
  for (std::size_t i = 0; i + static_cast<std::size_t>(limits_.live_max) <= live.size(); ++i) {
    SEPTA_RETURN_IF_ERROR(tx.Tokens().Revoke(live[i]->id, now));
    SEPTA_RETURN_IF_ERROR(tx.Audit().Append(AuditOf(ctx, now, "session.evict", SessionResource(live[i]->id), "1", "")));
    ended.push_back(live[i]->id);
  }
  auto made = MakeSecret(random_);
  SEPTA_RETURN_IF_ERROR(made);
  IssuedSession issued;
  ApiToken& session = issued.token;
  session.id = made->id;
  session.principal = parent.principal;
  session.role = parent.role;
  session.secret_hash = Sha256Hex(made->secret);
  session.description = "portal session";
  session.create_time = now;
  session.expire_time = expire;
  session.kind = TokenKind::kSession;
  session.parent_id = parent.id;
  SEPTA_RETURN_IF_ERROR(tx.Tokens().Insert(session));
  SEPTA_RETURN_IF_ERROR(tx.Audit().Append(AuditOf(ctx, now, "session.create", SessionResource(session.id), "", "1")));
  issued.cookie_value = FormatTokenText(session.id, made->secret);
  issued.csrf_token = CsrfToken(issued.cookie_value);
  return issued;
}

Result<IssuedSession> SessionService::SignIn(std::string_view api_token, const std::string& request_id) {
  auto principal = authenticator_.Authenticate(api_token);
  SEPTA_RETURN_IF_ERROR(principal);
  const RequestContext ctx = SystemContextOf(*principal, request_id);
  std::vector<std::string> ended;
  auto issued = TransactFor(store_, TxMode::kReadWrite, [&](Tx& tx) -> Result<IssuedSession> {
    ended.clear();
    SEPTA_ASSIGN_OR_RETURN(const ApiToken parent, tx.Tokens().Get(principal->token_id));
    return Issue(tx, parent, ctx, ended);
  });
  for (const std::string& id : ended) authenticator_.Forget(id);
  return issued;
}

Result<IssuedSession> SessionService::Redeem(std::string_view code, const std::string& request_id) {
  std::optional<ParsedTokenText> parsed = ParseTokenText(code);
  if (!parsed) return Unauthenticated("invalid sign-in code");
  std::vector<std::string> ended;
  // Serializable: of two redemptions of one code, one commits and the other,
  // retried, finds it spent.
  auto issued = TransactFor(store_, TxMode::kReadWrite, [&](Tx& tx) -> Result<IssuedSession> {
    ended.clear();
    auto row = tx.Tokens().Get(parsed->id);
    if (IsNotFound(row)) return Unauthenticated("invalid sign-in code");
    SEPTA_RETURN_IF_ERROR(row);
    if (row->kind != TokenKind::kSignIn || !base::ConstantTimeEquals(Sha256Hex(parsed->secret), row->secret_hash)) {
      return Unauthenticated("invalid sign-in code");
    }
    const TimePoint now = Now(clock_);
    if (row->revoke_time) return Unauthenticated("sign-in code has been used or revoked: ask for a new one");
    if (row->expire_time && now >= *row->expire_time) {
      return Unauthenticated("sign-in code has expired: ask for a new one");
    }
    auto parent = tx.Tokens().Get(row->parent_id);
    SEPTA_RETURN_IF_ERROR(parent);
    if (!IsLive(*parent, now)) {
      return Unauthenticated("sign-in code has ended: the API token it was made from was revoked or expired");
    }
    auto principal = ParsePrincipal("principal", parent->principal, parent->role);
    if (!principal.ok()) return Internal("stored token has an invalid principal");
    principal->token_id = parent->id;
    const RequestContext ctx = SystemContextOf(*principal, request_id);
    SEPTA_RETURN_IF_ERROR(tx.Tokens().Revoke(row->id, now));  // spent
    SEPTA_RETURN_IF_ERROR(
        tx.Audit().Append(AuditOf(ctx, now, "session.sign_in_code.redeem", SessionResource(row->id), "1", "")));
    ended.push_back(row->id);
    return Issue(tx, *parent, ctx, ended);
  });
  for (const std::string& id : ended) authenticator_.Forget(id);
  return issued;
}

Result<IssuedSignInCode> SessionService::CreateSignInCode(const RequestContext& ctx) {
  IssuedSignInCode issued;
  std::string secret;
  Status st = store_.Transact(TxMode::kReadWrite, [&](Tx& tx) -> Status {
    auto parent = tx.Tokens().Get(ctx.principal.token_id);
    SEPTA_RETURN_IF_ERROR(parent);
    if (parent->kind != TokenKind::kApi) {  // a session's code is its API token's
      parent = tx.Tokens().Get(parent->parent_id);
      SEPTA_RETURN_IF_ERROR(parent);
    }
    const TimePoint now = Now(clock_);
    auto held = tx.Tokens().List(parent->principal, TokenKind::kSignIn);
    SEPTA_RETURN_IF_ERROR(held);
    const auto live = std::count_if(held->begin(), held->end(), [&](const ApiToken& t) { return IsLive(t, now); });
    if (live >= limits_.sign_in_live_max) {
      return ResourceExhausted(parent->principal + " already holds " + std::to_string(live) +
                               " unused sign-in codes, the limit; use one or wait for one to expire");
    }
    auto made = MakeSecret(random_);
    SEPTA_RETURN_IF_ERROR(made);
    ApiToken& code = issued.token;
    code.id = made->id;
    code.principal = parent->principal;
    code.role = parent->role;
    code.secret_hash = Sha256Hex(made->secret);
    code.description = "portal sign-in code";
    code.create_time = now;
    code.expire_time = Earlier(now + limits_.sign_in_ttl, parent->expire_time);
    code.kind = TokenKind::kSignIn;
    code.parent_id = parent->id;
    SEPTA_RETURN_IF_ERROR(tx.Tokens().Insert(code));
    secret = made->secret;
    return tx.Audit().Append(AuditOf(ctx, now, "session.sign_in_code.create", SessionResource(code.id), "", "1"));
  });
  if (!st.ok()) return st;
  issued.code = FormatTokenText(issued.token.id, secret);
  return issued;
}

Status SessionService::SignOut(const RequestContext& ctx) {
  Status st = store_.Transact(TxMode::kReadWrite, [&](Tx& tx) -> Status {
    auto session = tx.Tokens().Get(ctx.principal.token_id);
    SEPTA_RETURN_IF_ERROR(session);
    if (session->kind != TokenKind::kSession) return InvalidArgument("only a session signs out; revoke an API token");
    if (session->revoke_time) return Status::Ok();
    const TimePoint now = Now(clock_);
    SEPTA_RETURN_IF_ERROR(tx.Tokens().Revoke(session->id, now));
    return tx.Audit().Append(AuditOf(ctx, now, "session.delete", SessionResource(session->id), "1", ""));
  });
  if (st.ok()) authenticator_.Forget(ctx.principal.token_id);
  return st;
}

}  // namespace septa::core
