#include "services/core/token_service.h"

#include "services/core/audit.h"

#include <algorithm>

#include "common/duration.h"
#include "services/core/crypto.h"
#include "services/core/validation.h"

namespace septa::core {

namespace {
constexpr std::size_t kMaxDescription = 200;

std::string ResourceOf(const std::string& id) { return "tokens/" + id; }

// A principal sees a token if it is an admin or the token belongs to its tenant.
bool CanSeeToken(const Principal& p, const ApiToken& token) {
  return p.admin || token.principal == "tenant:" + p.tenant;
}

// The requested lifetime, or the cap when none was asked for or more than it.
std::chrono::seconds CappedTtl(std::optional<std::chrono::seconds> requested, std::chrono::seconds cap) {
  return requested ? std::min(*requested, cap) : cap;
}
}  // namespace

Result<IssuedToken> TokenService::Create(const RequestContext& ctx, const TokenRequest& request) {
  if (request.role.empty()) return InvalidField("role", "is required: owner or viewer");
  auto role = ParseRole("role", request.role);
  SEPTA_RETURN_IF_ERROR(role);
  auto subject = ParsePrincipal("principal", request.principal, *role);
  SEPTA_RETURN_IF_ERROR(subject);
  SEPTA_RETURN_IF_ERROR(ValidateText("description", request.description, kMaxDescription));
  SEPTA_RETURN_IF_ERROR(CheckApplySetScope("apply_sets", request.apply_sets));
  subject->apply_sets = request.apply_sets;
  std::optional<std::chrono::seconds> ttl;
  if (!request.ttl.empty()) {
    auto parsed = ParseDuration("ttl", request.ttl);
    SEPTA_RETURN_IF_ERROR(parsed);
    if (parsed->count() <= 0) return InvalidField("ttl", "must be positive");
    ttl = *parsed;
  }
  if (subject->admin) {
    SEPTA_RETURN_IF_ERROR(RequireAdminWriter(ctx.principal, "issue admin tokens"));
  } else {
    SEPTA_RETURN_IF_ERROR(RequireSeeTenant(ctx.principal, subject->tenant));
    SEPTA_RETURN_IF_ERROR(RequireOwner(ctx.principal, "issue tokens"));
  }
  return Issue(ctx, *subject, request.description, ttl);
}

Result<IssuedToken> TokenService::Issue(const RequestContext& ctx, const Principal& subject, std::string description,
                                        std::optional<std::chrono::seconds> ttl) {
  return TransactFor(store_, TxMode::kReadWrite,
                     [&](Tx& tx) { return IssueIn(tx, Now(clock_), ctx, subject, description, ttl); });
}

Result<IssuedToken> TokenService::IssueIn(Tx& tx, TimePoint now, const RequestContext& ctx, const Principal& subject,
                                          std::string description, std::optional<std::chrono::seconds> ttl,
                                          std::string audit_action, std::string audit_detail) {
  IssuedToken issued;
  SEPTA_ASSIGN_OR_RETURN(const std::string secret, RandomBase64Url(random_, kTokenSecretBytes));
  ApiToken& token = issued.token;
  token.principal = subject.ToString();
  token.role = subject.role;
  token.apply_sets = subject.apply_sets;
  token.secret_hash = Sha256Hex(secret);
  token.description = std::move(description);
  if (!subject.admin) {
    auto tenant = tx.Tenants().Get(subject.tenant);
    if (IsNotFound(tenant)) {
      return ctx.principal.admin ? InvalidField("principal", "tenant \"" + subject.tenant + "\" does not exist")
                                 : NotFound("tenant \"" + subject.tenant + "\" not found");
    }
    SEPTA_RETURN_IF_ERROR(tenant);
    if (tenant->state == TenantState::kSuspended) {
      return FieldError(Code::kFailedPrecondition, "principal",
                        "tenant \"" + subject.tenant +
                            "\" is suspended: no tokens are issued for it until an admin makes it ACTIVE again");
    }
    auto tier = tx.TrustTiers().Get(tenant->trust_tier);
    SEPTA_RETURN_IF_ERROR(tier);
    token.expire_time = now + CappedTtl(ttl, std::chrono::seconds(tier->credential_ttl_max_seconds));
    SEPTA_RETURN_IF_ERROR(RequireRoomForAnotherToken(tx, token.principal, now));
  } else {
    token.expire_time = now + CappedTtl(ttl, limits_.admin_ttl_max);
  }
  SEPTA_ASSIGN_OR_RETURN(token.id, RandomHex(random_, kTokenIdBytes));
  token.create_time = now;
  SEPTA_RETURN_IF_ERROR(tx.Tokens().Insert(token));
  AuditRecord audit = AuditOf(ctx, now, std::move(audit_action), ResourceOf(token.id), "", "1");
  audit.detail = std::move(audit_detail);
  SEPTA_RETURN_IF_ERROR(tx.Audit().Append(audit));
  issued.secret_text = FormatTokenText(token.id, secret);
  return issued;
}

Status TokenService::RequireRoomForAnotherToken(Tx& tx, const std::string& principal, TimePoint now) const {
  SEPTA_ASSIGN_OR_RETURN(const int live, tx.Tokens().CountLive(principal, now));
  if (live < limits_.tenant_live_max) return Status::Ok();
  return ResourceExhausted(principal + " already holds " + std::to_string(live) + " live tokens, the limit of " +
                           std::to_string(limits_.tenant_live_max) +
                           " live tokens per tenant; revoke one or let one expire");
}

Result<std::vector<ApiToken>> TokenService::List(const RequestContext& ctx) {
  return TransactFor(store_, TxMode::kReadOnly,
                     [&](Tx& tx) { return tx.Tokens().List(ctx.principal.admin ? "" : ctx.principal.ToString()); });
}

Status TokenService::Revoke(const RequestContext& ctx, const std::string& id) {
  if (!CanNameToken(id)) return NotFound("token \"" + EscapeControlCharacters(id) + "\" not found");
  Status st = store_.Transact(TxMode::kReadWrite, [&](Tx& tx) -> Status {
    auto token = tx.Tokens().Get(id);
    if ((IsNotFound(token)) || (token.ok() && !CanSeeToken(ctx.principal, *token))) {
      return NotFound("token \"" + id + "\" not found");
    }
    SEPTA_RETURN_IF_ERROR(token);
    SEPTA_RETURN_IF_ERROR(RequireOwner(ctx.principal, "revoke tokens"));
    if (token->revoke_time) return Status::Ok();
    const TimePoint now = Now(clock_);
    SEPTA_RETURN_IF_ERROR(tx.Tokens().Revoke(id, now));
    return tx.Audit().Append(AuditOf(ctx, now, "token.revoke", ResourceOf(id), "1", ""));
  });
  if (st.ok()) authenticator_.Forget(id);
  return st;
}

Result<std::optional<IssuedToken>> TokenService::CreateBootstrapAdmin(std::chrono::seconds ttl) {
  RequestContext system;
  system.principal.admin = true;
  system.principal.role = Role::kOwner;
  system.request_id = "bootstrap";
  Principal subject;
  subject.admin = true;
  subject.role = Role::kOwner;
  return TransactFor(store_, TxMode::kReadWrite, [&](Tx& tx) -> Result<std::optional<IssuedToken>> {
    const TimePoint now = Now(clock_);
    SEPTA_ASSIGN_OR_RETURN(const std::vector<ApiToken> admins, tx.Tokens().List(subject.ToString()));
    if (std::any_of(admins.begin(), admins.end(),
                    [&](const ApiToken& t) { return t.role == Role::kOwner && IsLive(t, now); })) {
      return std::optional<IssuedToken>();
    }
    SEPTA_ASSIGN_OR_RETURN(IssuedToken issued, IssueIn(tx, now, system, subject, "bootstrap admin token", ttl));
    return std::optional<IssuedToken>(std::move(issued));
  });
}

}  // namespace septa::core
