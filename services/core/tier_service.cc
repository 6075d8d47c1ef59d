#include "services/core/tier_service.h"

#include "services/core/validation.h"

namespace septa::core {
namespace {

std::string TierNoun(std::string_view name) { return "trust tier \"" + std::string(name) + "\""; }

// A name that no tier can have is not found without asking the store.
Status CheckCanNameTier(const std::string& name) {
  if (CanNameTenantOrTier(name)) return Status::Ok();
  return NotFound(TierNoun(EscapeControlCharacters(name)) + " not found");
}

Result<TrustTier> ReadTier(Tx& tx, const std::string& name) {
  auto row = tx.TrustTiers().Get(name);
  if (IsNotFound(row)) return NotFound(TierNoun(name) + " not found");
  return row;
}

}  // namespace

Result<std::vector<TrustTier>> TrustTierService::List(const RequestContext&) {
  return TransactFor(store_, TxMode::kReadOnly, [&](Tx& tx) { return tx.TrustTiers().List(); });
}

Result<TrustTier> TrustTierService::Get(const RequestContext&, const std::string& name) {
  SEPTA_RETURN_IF_ERROR(CheckCanNameTier(name));
  return TransactFor(store_, TxMode::kReadOnly, [&](Tx& tx) { return ReadTier(tx, name); });
}

Result<TrustTier> TrustTierService::Create(const RequestContext& ctx, const TrustTier& draft) {
  SEPTA_RETURN_IF_ERROR(kind_.Validate(ctx, draft));
  return TransactFor(store_, TxMode::kReadWrite, [&](Tx& tx) -> Result<TrustTier> {
    WriteScope scope{ctx, tx, nullptr, Now(clock_)};
    return kind_.Create(scope, draft);
  });
}

Result<TrustTier> TrustTierService::Update(const RequestContext& ctx, const TrustTier& desired,
                                           const std::vector<std::string>& paths, std::string_view if_match) {
  SEPTA_RETURN_IF_ERROR(RequireAdminWriter(ctx.principal, "update trust tiers"));
  SEPTA_RETURN_IF_ERROR(CheckCanNameTier(desired.name));
  if (paths.empty()) return InvalidField("update_mask", "names no field to change");
  SEPTA_ASSIGN_OR_RETURN(const DeclaredFields declared, kind_.CheckDeclared(DeclaredFields(paths)));
  std::vector<Revocation> forget;
  auto updated = TransactFor(store_, TxMode::kReadWrite, [&](Tx& tx) -> Result<TrustTier> {
    SEPTA_ASSIGN_OR_RETURN(const TrustTier live, ReadTier(tx, desired.name));
    SEPTA_RETURN_IF_ERROR(CheckEtag(if_match, live.version, TierNoun(live.name)));
    WriteScope scope{ctx, tx, nullptr, Now(clock_)};
    auto next = kind_.Update(scope, live, desired, declared);
    forget = std::move(scope.forget);
    return next;
  });
  if (updated.ok()) ForgetAll(authenticator_, forget);
  return updated;
}

Status TrustTierService::Delete(const RequestContext& ctx, const std::string& name, std::string_view if_match) {
  SEPTA_RETURN_IF_ERROR(RequireAdminWriter(ctx.principal, "delete trust tiers"));
  SEPTA_RETURN_IF_ERROR(CheckCanNameTier(name));
  return store_.Transact(TxMode::kReadWrite, [&](Tx& tx) -> Status {
    SEPTA_ASSIGN_OR_RETURN(const TrustTier live, ReadTier(tx, name));
    SEPTA_RETURN_IF_ERROR(CheckEtag(if_match, live.version, TierNoun(live.name)));
    WriteScope scope{ctx, tx, nullptr, Now(clock_)};
    return kind_.Delete(scope, live);
  });
}

}  // namespace septa::core
