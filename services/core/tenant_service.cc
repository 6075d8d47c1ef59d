#include "services/core/tenant_service.h"

#include "services/core/audit.h"
#include "services/core/crypto.h"
#include "services/core/idempotency.h"
#include "services/core/tenant_query.h"
#include "services/core/tenant_quota_check.h"
#include "services/core/validation.h"

namespace septa::core {

namespace {

// A name that no tenant can have is not found without asking the store.
Status CheckCanNameTenant(const std::string& name) {
  if (CanNameTenantOrTier(name)) return Status::Ok();
  return NotFound("tenant \"" + EscapeControlCharacters(name) + "\" not found");
}

// Fingerprint of a create request for idempotency checks.
std::string CreateFingerprint(const Tenant& t) {
  std::string canon =
      t.name + '\n' + t.display_name + '\n' + t.trust_tier + '\n' + std::to_string(static_cast<int>(t.state)) + '\n';
  for (const auto& [k, v] : t.labels) canon += k + '=' + v + '\n';
  for (const auto& limit :
       {t.quota.gpu_milli, t.quota.cpu_milli, t.quota.memory_mib, t.quota.pods, t.quota.vclusters}) {
    canon += (limit ? std::to_string(*limit) : "-") + ' ';
  }
  return Sha256Hex(canon);
}

// The tenant, or kNotFound in the words users see (whatever the store says).
Result<Tenant> FindTenant(Tx& tx, const std::string& name) {
  auto found = tx.Tenants().Get(name);
  if (IsNotFound(found)) {
    return NotFound("tenant \"" + name + "\" not found");
  }
  return found;
}

bool Matches(const Tenant& t, const TenantQuery& q) {
  if (q.trust_tier && t.trust_tier != *q.trust_tier) return false;
  for (const auto& [k, v] : q.labels) {
    auto it = t.labels.find(k);
    if (it == t.labels.end() || it->second != v) return false;
  }
  return t.name > q.after_name;
}

}  // namespace

Result<Tenant> TenantService::Create(const RequestContext& ctx, const Tenant& draft, std::string_view idempotency_key) {
  SEPTA_RETURN_IF_ERROR(RequireAdminWriter(ctx.principal, "create tenants"));
  SEPTA_RETURN_IF_ERROR(kind_.Validate(ctx, draft));
  SEPTA_RETURN_IF_ERROR(ValidateIdempotencyKey(idempotency_key));

  const std::string fingerprint = CreateFingerprint(draft);
  const std::string principal = ctx.principal.ToString();
  return TransactFor(store_, TxMode::kReadWrite, [&](Tx& tx) -> Result<Tenant> {
    const TimePoint now = Now(clock_);
    if (!idempotency_key.empty()) {
      auto previous =
          FindIdempotentCreate(tx, principal, std::string(idempotency_key), fingerprint, now, idempotency_ttl_);
      if (previous.ok()) return tx.Tenants().Get(draft.name);
      if (previous.status().code() != Code::kNotFound) return previous.status();
    }
    WriteScope scope{ctx, tx, nullptr, now};
    SEPTA_ASSIGN_OR_RETURN(Tenant created, kind_.Create(scope, draft));
    if (!idempotency_key.empty()) {
      SEPTA_RETURN_IF_ERROR(tx.Idempotency().Insert(
          IdempotencyRecord{principal, std::string(idempotency_key), fingerprint, TenantResource(created.name), now}));
    }
    return created;
  });
}

Result<TenantView> TenantService::Get(const RequestContext& ctx, const std::string& name) {
  SEPTA_RETURN_IF_ERROR(CheckCanNameTenant(name));
  SEPTA_RETURN_IF_ERROR(RequireSeeTenant(ctx.principal, name));
  return TransactFor(store_, TxMode::kReadOnly, [&](Tx& tx) -> Result<TenantView> {
    SEPTA_ASSIGN_OR_RETURN(Tenant tenant, FindTenant(tx, name));
    // A tenant without a quota is one read, as before quotas existed.
    if (tenant.quota == tenancy::TenantQuota{}) return TenantView{std::move(tenant), std::nullopt};
    SEPTA_ASSIGN_OR_RETURN(tenancy::TenantUsage usage, ReadTenantUsage(tx, catalog_, name));
    return TenantView{std::move(tenant), usage};
  });
}

Result<TenantQuotaView> TenantService::GetQuota(const RequestContext& ctx, const std::string& name) {
  SEPTA_RETURN_IF_ERROR(CheckCanNameTenant(name));
  SEPTA_RETURN_IF_ERROR(RequireSeeTenant(ctx.principal, name));
  return TransactFor(store_, TxMode::kReadOnly, [&](Tx& tx) -> Result<TenantQuotaView> {
    SEPTA_ASSIGN_OR_RETURN(const Tenant tenant, FindTenant(tx, name));
    SEPTA_ASSIGN_OR_RETURN(tenancy::TenantUsage usage, ReadTenantUsage(tx, catalog_, name));
    return TenantQuotaView{name, tenant.quota, usage};
  });
}

Result<TenantPage> TenantService::List(const RequestContext& ctx, const ListTenantsParams& params) {
  if (params.page_size < 0 || params.page_size > kMaxPageSize) {
    return InvalidField("page_size", "must be between 1 and 500 (0 for the default of 50)");
  }
  TenantQuery query;
  query.limit = params.page_size == 0 ? kDefaultPageSize : params.page_size;
  SEPTA_RETURN_IF_ERROR(ParseTenantFilter(params.filter, query));
  if (!params.page_token.empty()) {
    auto after = DecodePageToken(params.page_token);
    SEPTA_RETURN_IF_ERROR(after);
    query.after_name = *after;
  }
  auto rows = TransactFor(store_, TxMode::kReadOnly, [&](Tx& tx) -> Result<std::vector<Tenant>> {
    if (!ctx.principal.admin) {
      // A tenant principal lists only itself.
      auto own = tx.Tenants().Get(ctx.principal.tenant);
      if (IsNotFound(own)) return std::vector<Tenant>();
      SEPTA_RETURN_IF_ERROR(own);
      if (!Matches(*own, query)) return std::vector<Tenant>();
      return std::vector<Tenant>{*std::move(own)};
    }
    // One row more than asked tells whether another page exists.
    TenantQuery probe = query;
    probe.limit = query.limit + 1;
    return tx.Tenants().List(probe);
  });
  SEPTA_RETURN_IF_ERROR(rows);
  TenantPage page{*std::move(rows), ""};
  if (static_cast<int>(page.tenants.size()) > query.limit) {
    page.tenants.resize(query.limit);
    page.next_page_token = EncodePageToken(page.tenants.back().name);
  }
  return page;
}

Result<Tenant> TenantService::Update(const RequestContext& ctx, const std::string& name, const TenantUpdate& update,
                                     std::string_view if_match) {
  SEPTA_RETURN_IF_ERROR(CheckCanNameTenant(name));
  SEPTA_RETURN_IF_ERROR(RequireSeeTenant(ctx.principal, name));
  SEPTA_RETURN_IF_ERROR(CheckTenantUpdate(ctx, update));

  std::vector<Revocation> forget;
  auto updated = TransactFor(store_, TxMode::kReadWrite, [&](Tx& tx) -> Result<Tenant> {
    SEPTA_ASSIGN_OR_RETURN(const Tenant current, FindTenant(tx, name));
    SEPTA_RETURN_IF_ERROR(CheckEtag(if_match, current.version, "tenant \"" + current.name + "\""));
    WriteScope scope{ctx, tx, nullptr, Now(clock_)};
    auto next = kind_.Apply(scope, current, update);
    forget = std::move(scope.forget);
    return next;
  });
  if (updated.ok()) ForgetAll(authenticator_, forget);
  return updated;
}

Status TenantService::Delete(const RequestContext& ctx, const std::string& name, std::string_view if_match) {
  SEPTA_RETURN_IF_ERROR(CheckCanNameTenant(name));
  SEPTA_RETURN_IF_ERROR(RequireSeeTenant(ctx.principal, name));
  SEPTA_RETURN_IF_ERROR(RequireAdminWriter(ctx.principal, "delete tenants"));
  std::vector<Revocation> forget;
  const Status st = store_.Transact(TxMode::kReadWrite, [&](Tx& tx) -> Status {
    SEPTA_ASSIGN_OR_RETURN(const Tenant current, FindTenant(tx, name));
    SEPTA_RETURN_IF_ERROR(CheckEtag(if_match, current.version, "tenant \"" + current.name + "\""));
    WriteScope scope{ctx, tx, nullptr, Now(clock_)};
    const Status deleted = kind_.Delete(scope, current);
    forget = std::move(scope.forget);
    return deleted;
  });
  if (st.ok()) ForgetAll(authenticator_, forget);
  return st;
}

}  // namespace septa::core
