#include "services/core/token_declaration_kind.h"

#include "common/duration.h"
#include "services/core/audit.h"
#include "services/core/validation.h"

namespace septa::core {
namespace {

std::string SinkText(const SecretSink& sink) {
  return "kubernetes_secret " + sink.ns + "/" + sink.name + " key " + sink.key;
}

std::string TtlText(std::int64_t seconds) { return seconds == 0 ? "" : FormatDuration(std::chrono::seconds(seconds)); }

bool IsSecretKey(std::string_view key) {  // Kubernetes' data keys: [-._a-zA-Z0-9]+, at most 253
  if (key.empty() || key.size() > 253) return false;
  for (const char c : key) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';
    if (!ok) return false;
  }
  return true;
}

// Revokes the tokens `d` minted, and tells the authenticator once committed.
Status RevokeTokensOf(WriteScope& scope, const TokenDeclaration& d) {
  for (const std::string& id : {d.token_id, d.pending_token_id}) {
    if (id.empty()) continue;
    const Status revoked = scope.tx.Tokens().Revoke(id, scope.now);
    if (IsNotFound(revoked)) continue;  // deleted long after it died (core/retention.h): nothing to revoke
    SEPTA_RETURN_IF_ERROR(revoked);
    SEPTA_RETURN_IF_ERROR(
        scope.tx.Audit().Append(AuditOf(scope.ctx, scope.now, "token.revoke", "tokens/" + id, "1", "")));
    scope.forget.push_back(Revocation{id, ""});
  }
  return Status::Ok();
}

// A tenant principal's tenant must exist (INVALID_ARGUMENT naming principal).
Status CheckSubjectExists(Tx& tx, const TokenDeclaration& d) {
  SEPTA_ASSIGN_OR_RETURN(const Principal subject, ParsePrincipal("principal", d.principal, d.role));
  if (subject.admin) return Status::Ok();
  auto tenant = tx.Tenants().Get(subject.tenant);
  if (IsNotFound(tenant)) return InvalidField("principal", "tenant \"" + subject.tenant + "\" does not exist");
  return tenant.status();
}

}  // namespace

std::string TokenDeclarationResource(std::string_view name) { return "apitokens/" + std::string(name); }

Result<DeclaredFields> TokenDeclarationKind::CheckDeclared(const DeclaredFields& declared) const {
  return CheckDeclaredPaths(declared, kKind, {"principal", "role", "ttl", "deliver_to"});
}

Status TokenDeclarationKind::Validate(const RequestContext& ctx, const TokenDeclaration& d) const {
  SEPTA_RETURN_IF_ERROR(
      RequireAdminWriter(ctx.principal,
                         "declare API tokens (they belong to the platform's apply sets: their secret goes to a "
                         "namespace of the host cluster)"));
  if (!IsDns1123Label(d.name)) {
    return InvalidField("name", "must be a DNS label of 1-63 lower-case letters, digits and '-'");
  }
  return Status::Ok();
}

Status TokenDeclarationKind::CheckSpec(const TokenDeclaration& d) const {
  SEPTA_RETURN_IF_ERROR(ParsePrincipal("principal", d.principal, d.role).status());
  if (d.ttl_seconds != 0 && d.ttl_seconds < kMinDeclaredTokenTtl.count()) {
    return InvalidField("ttl", "must be at least " + FormatDuration(kMinDeclaredTokenTtl) + " (or empty: the cap)");
  }
  if (!IsDns1123Label(d.sink.ns)) {
    return InvalidField("deliver_to.kubernetes_secret.namespace", "must be a namespace's name (a DNS label)");
  }
  if (!IsDns1123Subdomain(d.sink.name)) {
    return InvalidField("deliver_to.kubernetes_secret.name", "must be a Secret's name (a DNS subdomain)");
  }
  if (!IsSecretKey(d.sink.key)) {
    return InvalidField("deliver_to.kubernetes_secret.key",
                        "must be a Secret data key: 1-253 of letters, digits, '-', '.' and '_'");
  }
  return Status::Ok();
}

Result<std::optional<TokenDeclaration>> TokenDeclarationKind::Get(Tx& tx, const TokenDeclaration& key) const {
  return tx.TokenDeclarations().Get(key.name);
}

Result<TokenDeclaration> TokenDeclarationKind::Create(WriteScope& scope, const TokenDeclaration& draft) const {
  SEPTA_RETURN_IF_ERROR(Validate(scope.ctx, draft));
  SEPTA_RETURN_IF_ERROR(CheckSpec(draft));
  SEPTA_RETURN_IF_ERROR(CheckSubjectExists(scope.tx, draft));
  TokenDeclaration created{.name = draft.name,
                           .principal = draft.principal,
                           .role = draft.role,
                           .ttl_seconds = draft.ttl_seconds,
                           .sink = draft.sink,
                           .version = 1,
                           .create_time = scope.now,
                           .update_time = scope.now};
  SEPTA_RETURN_IF_ERROR(scope.tx.TokenDeclarations().Insert(created));
  SEPTA_RETURN_IF_ERROR(scope.tx.Audit().Append(
      AuditOf(scope.ctx, scope.now, "api_token.declare", TokenDeclarationResource(created.name), "", EtagOf(1))));
  return created;
}

Result<TokenDeclaration> TokenDeclarationKind::Update(WriteScope& scope, const TokenDeclaration& live,
                                                      const TokenDeclaration& desired,
                                                      const DeclaredFields& declared) const {
  const std::vector<FieldChange> changes = Diff(live, desired, declared);
  if (changes.empty()) return live;
  TokenDeclaration next = live;
  bool revoke = false;  // who the token is, or where its secret goes, changed
  for (const FieldChange& change : changes) {
    if (change.path == "principal") next.principal = desired.principal, revoke = true;
    if (change.path == "role") next.role = desired.role, revoke = true;
    if (change.path == "ttl") next.ttl_seconds = desired.ttl_seconds;
    if (change.path == "deliver_to") next.sink = desired.sink, revoke = true;
  }
  SEPTA_RETURN_IF_ERROR(Validate(scope.ctx, next));
  SEPTA_RETURN_IF_ERROR(CheckSpec(next));
  if (next.principal != live.principal) SEPTA_RETURN_IF_ERROR(CheckSubjectExists(scope.tx, next));
  if (revoke) {
    SEPTA_RETURN_IF_ERROR(RevokeTokensOf(scope, live));
    next.token_id.clear();
    next.token_expire_time.reset();
    next.pending_token_id.clear();
  }
  next.version = live.version + 1;
  next.update_time = scope.now;
  SEPTA_RETURN_IF_ERROR(scope.tx.TokenDeclarations().Update(next, live.version));
  SEPTA_RETURN_IF_ERROR(
      scope.tx.Audit().Append(AuditOf(scope.ctx, scope.now, "api_token.update", TokenDeclarationResource(live.name),
                                      EtagOf(live.version), EtagOf(next.version))));
  return next;
}

Status TokenDeclarationKind::Delete(WriteScope& scope, const TokenDeclaration& live) const {
  SEPTA_RETURN_IF_ERROR(RequireAdminWriter(scope.ctx.principal, "delete API token declarations"));
  SEPTA_RETURN_IF_ERROR(RevokeTokensOf(scope, live));
  SEPTA_RETURN_IF_ERROR(scope.tx.TokenDeclarations().Delete(live.name));
  return scope.tx.Audit().Append(
      AuditOf(scope.ctx, scope.now, "api_token.delete", TokenDeclarationResource(live.name), EtagOf(live.version), ""));
}

std::vector<FieldChange> TokenDeclarationKind::Diff(const TokenDeclaration& live, const TokenDeclaration& desired,
                                                    const DeclaredFields& declared) const {
  std::vector<FieldChange> changes;
  CompareField(changes, declared, "principal", live.principal, desired.principal);
  CompareField(changes, declared, "role", std::string(RoleName(live.role)), std::string(RoleName(desired.role)));
  CompareField(changes, declared, "ttl", TtlText(live.ttl_seconds), TtlText(desired.ttl_seconds));
  CompareField(changes, declared, "deliver_to", SinkText(live.sink), SinkText(desired.sink));
  return changes;
}

}  // namespace septa::core
