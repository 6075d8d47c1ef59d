#include "services/core/tenant_kind.h"

#include <set>

#include "services/core/apply_set_guard.h"
#include "services/core/audit.h"
#include "services/core/validation.h"

namespace septa::core {
namespace {

// Tier names are validated against the table, so a typo names the choices.
Result<TrustTier> FindTier(Tx& tx, const std::string& tier) {
  if (tier.empty()) return InvalidField("trust_tier", "is required");
  if (CanNameTenantOrTier(tier)) {
    auto found = tx.TrustTiers().Get(tier);
    if (found.status().code() != Code::kNotFound) return found;
  }
  std::string choices;
  auto tiers = tx.TrustTiers().List();
  if (tiers.ok()) {
    for (const auto& t : *tiers) choices += (choices.empty() ? "" : ", ") + t.name;
  }
  return InvalidField("trust_tier", "unknown trust tier \"" + EscapeControlCharacters(tier) + "\"; one of: " + choices);
}

std::string StateName(TenantState state) {
  switch (state) {
    case TenantState::kActive: return "ACTIVE";
    case TenantState::kSuspended: return "SUSPENDED";
  }
  return "";
}

using QuotaMember = std::optional<std::int64_t> tenancy::TenantQuota::*;

struct NamedQuotaMember {
  std::string_view path;
  QuotaMember member;
};

constexpr NamedQuotaMember kQuotaMembers[] = {{"quota.gpu_milli", &tenancy::TenantQuota::gpu_milli},
                                              {"quota.cpu_milli", &tenancy::TenantQuota::cpu_milli},
                                              {"quota.memory_mib", &tenancy::TenantQuota::memory_mib},
                                              {"quota.pods", &tenancy::TenantQuota::pods},
                                              {"quota.vclusters", &tenancy::TenantQuota::vclusters}};

// Every label key either side has, in order.
std::set<std::string> LabelKeys(const Tenant& a, const Tenant& b) {
  std::set<std::string> keys;
  for (const auto& [k, v] : a.labels) keys.insert(k);
  for (const auto& [k, v] : b.labels) keys.insert(k);
  return keys;
}

}  // namespace

std::string TenantResource(std::string_view name) { return "tenants/" + std::string(name); }

Status CheckTenantUpdate(const RequestContext& ctx, const TenantUpdate& update) {
  SEPTA_RETURN_IF_ERROR(RequireWriter(ctx.principal, "update tenants"));
  if (update.trust_tier) SEPTA_RETURN_IF_ERROR(RequireAdmin(ctx.principal, "change a tenant's trust_tier"));
  if (update.state) SEPTA_RETURN_IF_ERROR(RequireAdmin(ctx.principal, "change a tenant's state"));
  if (!update.quota_members.empty()) {
    SEPTA_RETURN_IF_ERROR(RequireAdmin(ctx.principal, "change a tenant's quota"));
    SEPTA_RETURN_IF_ERROR(tenancy::ValidateTenantQuota("quota", update.quota));
  }
  if (update.display_name) SEPTA_RETURN_IF_ERROR(ValidateDisplayName("display_name", *update.display_name));
  if (update.labels) SEPTA_RETURN_IF_ERROR(ValidateLabels("labels", *update.labels));
  return Status::Ok();
}

Result<DeclaredFields> TenantKind::CheckDeclared(const DeclaredFields& declared) const {
  return CheckDeclaredPaths(declared, kKind,
                            {"display_name", "labels.*", "trust_tier", "state", "quota.gpu_milli", "quota.cpu_milli",
                             "quota.memory_mib", "quota.pods", "quota.vclusters"});
}

Status TenantKind::Validate(const RequestContext& ctx, const Tenant& tenant) const {
  SEPTA_RETURN_IF_ERROR(ValidateTenantName("name", tenant.name));
  SEPTA_RETURN_IF_ERROR(RequireSeeTenant(ctx.principal, tenant.name));
  SEPTA_RETURN_IF_ERROR(RequireWriter(ctx.principal, "write tenants"));
  SEPTA_RETURN_IF_ERROR(ValidateDisplayName("display_name", tenant.display_name));
  SEPTA_RETURN_IF_ERROR(ValidateLabels("labels", tenant.labels));
  return tenancy::ValidateTenantQuota("quota", tenant.quota);
}

Result<std::optional<Tenant>> TenantKind::Get(Tx& tx, const Tenant& key) const {
  auto found = tx.Tenants().Get(key.name);
  if (IsNotFound(found)) return std::optional<Tenant>();
  SEPTA_RETURN_IF_ERROR(found);
  return std::optional<Tenant>(*std::move(found));
}

Result<Tenant> TenantKind::Create(WriteScope& scope, const Tenant& draft) const {
  SEPTA_RETURN_IF_ERROR(RequireAdminWriter(scope.ctx.principal, "create tenants"));
  SEPTA_RETURN_IF_ERROR(FindTier(scope.tx, draft.trust_tier));
  Tenant created = draft;
  created.create_time = scope.now;
  created.update_time = scope.now;
  created.version = 1;
  if (Status ins = scope.tx.Tenants().Insert(created); !ins.ok()) {
    if (IsAlreadyExists(ins)) return AlreadyExists("tenant \"" + draft.name + "\" already exists");
    return ins;
  }
  SEPTA_RETURN_IF_ERROR(scope.tx.Audit().Append(
      AuditOf(scope.ctx, scope.now, "tenant.create", TenantResource(created.name), "", EtagOf(created.version))));
  return created;
}

Result<Tenant> TenantKind::Update(WriteScope& scope, const Tenant& live, const Tenant& desired,
                                  const DeclaredFields& declared) const {
  TenantUpdate update;
  for (const FieldChange& change : Diff(live, desired, declared)) {
    if (change.path == "display_name") update.display_name = desired.display_name;
    if (change.path == "trust_tier") update.trust_tier = desired.trust_tier;
    if (change.path == "state") update.state = desired.state;
    if (change.path.starts_with("labels.")) {
      const std::string key = change.path.substr(std::string_view("labels.").size());
      if (!update.labels) update.labels = live.labels;
      auto value = desired.labels.find(key);
      if (value == desired.labels.end()) {
        update.labels->erase(key);
      } else {
        (*update.labels)[key] = value->second;
      }
    }
    for (const NamedQuotaMember& m : kQuotaMembers) {
      if (change.path == m.path) update.quota_members.push_back(m.member);
    }
  }
  update.quota = desired.quota;
  SEPTA_RETURN_IF_ERROR(CheckTenantUpdate(scope.ctx, update));
  return Apply(scope, live, update);
}

Result<Tenant> TenantKind::Apply(WriteScope& scope, const Tenant& live, const TenantUpdate& update) const {
  Tenant next = live;
  if (update.display_name) next.display_name = *update.display_name;
  if (update.labels) next.labels = *update.labels;
  if (update.state) next.state = *update.state;
  // Lowering a quota below what the tenant holds takes nothing away; the
  // next create or resize that grows a quantity over it is refused.
  for (auto member : update.quota_members) next.quota.*member = update.quota.*member;
  std::optional<TrustTier> new_tier;
  if (update.trust_tier && *update.trust_tier != live.trust_tier) {
    SEPTA_ASSIGN_OR_RETURN(new_tier, FindTier(scope.tx, *update.trust_tier));
    next.trust_tier = new_tier->name;
  }
  if (next.display_name == live.display_name && next.labels == live.labels && next.state == live.state &&
      next.trust_tier == live.trust_tier && next.quota == live.quota) {
    return live;  // nothing to change: no new version, nothing to audit
  }
  SEPTA_RETURN_IF_ERROR(GuardSetMember(scope, kKind, TenantResource(live.name), "tenant.update",
                                       PathsOf(Diff(live, next, DeclaredFields()))));
  next.update_time = scope.now;
  next.version = live.version + 1;
  SEPTA_RETURN_IF_ERROR(scope.tx.Tenants().Update(next, live.version));
  const std::string principal = "tenant:" + live.name;
  // The tenant's tokens live no longer than its new tier allows, counted
  // from their issue, as if they had been issued under it.
  if (new_tier) {
    SEPTA_RETURN_IF_ERROR(
        scope.tx.Tokens().CapLifetimes(principal, std::chrono::seconds(new_tier->credential_ttl_max_seconds)));
  }
  SEPTA_RETURN_IF_ERROR(scope.tx.Audit().Append(AuditOf(
      scope.ctx, scope.now, "tenant.update", TenantResource(live.name), EtagOf(live.version), EtagOf(next.version))));
  // Their lifetimes, or what their tenant's state lets them do, changed.
  if (new_tier || next.state != live.state) scope.forget.push_back(Revocation{"", principal});
  return next;
}

Status TenantKind::Delete(WriteScope& scope, const Tenant& live) const {
  SEPTA_RETURN_IF_ERROR(RequireAdminWriter(scope.ctx.principal, "delete tenants"));
  SEPTA_RETURN_IF_ERROR(GuardSetMember(scope, kKind, TenantResource(live.name), "tenant.delete", {}));
  const std::string principal = "tenant:" + live.name;
  SEPTA_RETURN_IF_ERROR(scope.tx.Tenants().Delete(live.name, live.version));
  SEPTA_RETURN_IF_ERROR(scope.tx.Tokens().RevokeAllOf(principal, scope.now));
  SEPTA_RETURN_IF_ERROR(scope.tx.Audit().Append(
      AuditOf(scope.ctx, scope.now, "tenant.delete", TenantResource(live.name), EtagOf(live.version), "")));
  scope.forget.push_back(Revocation{"", principal});
  return Status::Ok();
}

std::vector<FieldChange> TenantKind::Diff(const Tenant& live, const Tenant& desired,
                                          const DeclaredFields& declared) const {
  std::vector<FieldChange> changes;
  CompareField(changes, declared, "display_name", live.display_name, desired.display_name);
  CompareField(changes, declared, "trust_tier", live.trust_tier, desired.trust_tier);
  CompareField(changes, declared, "state", StateName(live.state), StateName(desired.state));
  for (const std::string& key : LabelKeys(live, desired)) {
    const auto in_live = live.labels.find(key);
    const auto in_desired = desired.labels.find(key);
    const bool both = in_live != live.labels.end() && in_desired != desired.labels.end();
    const std::string path = "labels." + key;
    if (both) {
      CompareField(changes, declared, path, in_live->second, in_desired->second);
    } else if (declared.Covers(path)) {  // added or removed, even with an empty value
      changes.push_back({path, in_live == live.labels.end() ? "" : in_live->second,
                         in_desired == desired.labels.end() ? "" : in_desired->second});
    }
  }
  for (const NamedQuotaMember& m : kQuotaMembers) {
    CompareField(changes, declared, m.path, live.quota.*m.member, desired.quota.*m.member);
  }
  return changes;
}

}  // namespace septa::core
