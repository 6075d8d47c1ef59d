#include "services/core/token_delivery.h"

#include "services/core/audit.h"
#include "services/core/token_declaration_kind.h"

namespace septa::core {
namespace {

// Who the delivery's records name.
RequestContext DeliveryContext() {
  RequestContext ctx{.request_id = "token-delivery", .surface = Surface::kSystem};
  ctx.principal.admin = true;
  ctx.principal.role = Role::kOwner;
  return ctx;
}

// When the delivered token is due for a successor: a third of its lifetime before it ends.
TimePoint DueAt(const ApiToken& token) {
  if (!token.expire_time) return TimePoint::max();
  return *token.expire_time - (*token.expire_time - token.create_time) / 3;
}

}  // namespace

Result<DeliveryStep> TokenDelivery::Begin(const std::string& name) {
  const RequestContext ctx = DeliveryContext();
  return TransactFor(store_, TxMode::kReadWrite, [&](Tx& tx) -> Result<DeliveryStep> {
    const TimePoint now = Now(clock_);
    SEPTA_ASSIGN_OR_RETURN(std::optional<TokenDeclaration> found, tx.TokenDeclarations().Get(name));
    if (!found) return DeliveryStep{};
    TokenDeclaration d = *std::move(found);
    if (d.pending_token_id.empty() && !d.token_id.empty() && d.token_version == d.version) {
      auto delivered = tx.Tokens().Get(d.token_id);
      if (!IsNotFound(delivered)) {
        SEPTA_RETURN_IF_ERROR(delivered);
        const TimePoint due = DueAt(*delivered);
        if (!delivered->revoke_time && now < due) return DeliveryStep{.next_due = due};
      }
    }
    if (!d.pending_token_id.empty()) {  // minted, never delivered: its secret is lost
      const Status revoked = tx.Tokens().Revoke(d.pending_token_id, now);
      if (!IsNotFound(revoked)) {  // else deleted long after it expired (core/retention.h)
        SEPTA_RETURN_IF_ERROR(revoked);
        SEPTA_RETURN_IF_ERROR(
            tx.Audit().Append(AuditOf(ctx, now, "token.revoke", "tokens/" + d.pending_token_id, "1", "")));
      }
    }
    SEPTA_ASSIGN_OR_RETURN(const Principal subject, ParsePrincipal("principal", d.principal, d.role));
    std::optional<std::chrono::seconds> ttl;
    if (d.ttl_seconds > 0) ttl = std::chrono::seconds(d.ttl_seconds);
    SEPTA_ASSIGN_OR_RETURN(IssuedToken issued,
                           tokens_.IssueIn(tx, now, ctx, subject,
                                           "declared: " + TokenDeclarationResource(d.name) + " (delivery " +
                                               std::to_string(d.deliveries + 1) + ")",
                                           ttl));
    d.pending_token_id = issued.token.id;
    SEPTA_RETURN_IF_ERROR(tx.TokenDeclarations().Update(d, d.version));
    Delivery delivery{.token_id = issued.token.id,
                      .secret = std::move(issued.secret_text),
                      .sink = d.sink,
                      .expire_time = issued.token.expire_time.value_or(TimePoint::max())};
    const TimePoint due = DueAt(issued.token);
    return DeliveryStep{.deliver = std::move(delivery), .next_due = due};
  });
}

Status TokenDelivery::Finish(const std::string& name, const std::string& token_id) {
  const RequestContext ctx = DeliveryContext();
  return store_.Transact(TxMode::kReadWrite, [&](Tx& tx) -> Status {
    const TimePoint now = Now(clock_);
    SEPTA_ASSIGN_OR_RETURN(std::optional<TokenDeclaration> found, tx.TokenDeclarations().Get(name));
    if (!found || found->pending_token_id != token_id) return Status::Ok();
    TokenDeclaration d = *std::move(found);
    SEPTA_ASSIGN_OR_RETURN(const ApiToken token, tx.Tokens().Get(token_id));
    d.token_id = token_id;
    d.token_expire_time = token.expire_time;
    d.token_version = d.version;
    d.pending_token_id.clear();
    d.deliveries += 1;
    SEPTA_RETURN_IF_ERROR(tx.TokenDeclarations().Update(d, d.version));
    // The record names the token, never its secret.
    return tx.Audit().Append(
        AuditOf(ctx, now, "api_token.deliver", TokenDeclarationResource(d.name), "", "tokens/" + token_id));
  });
}

}  // namespace septa::core
