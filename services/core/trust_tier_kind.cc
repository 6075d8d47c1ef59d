#include "services/core/trust_tier_kind.h"

#include "services/core/apply_set_guard.h"
#include "services/core/audit.h"
#include "tenancy/names.h"

namespace septa::core {
namespace {

// The API's names of gpu::Tier as a tier's gpu_sharing (trust_tier.proto).
std::string SharingName(gpu::Tier tier) {
  switch (tier) {
    case gpu::Tier::kShared: return "FRACTIONAL";
    case gpu::Tier::kIsolated: return "MIG";
    case gpu::Tier::kDedicated: return "WHOLE_GPU";
    case gpu::Tier::kExclusive: return "WHOLE_NODE";
  }
  return "";
}

std::string Seconds(std::int64_t seconds) { return std::to_string(seconds) + "s"; }

// Store pages of tenants read at a time.
constexpr int kTenantPage = 500;

// The names of the tenants that have `tier`, at most `limit` (0: all).
Result<std::vector<std::string>> TenantsOf(Tx& tx, const std::string& tier, std::size_t limit) {
  std::vector<std::string> names;
  TenantQuery query;
  query.trust_tier = tier;
  query.limit = kTenantPage;
  while (true) {
    SEPTA_ASSIGN_OR_RETURN(const std::vector<Tenant> page, tx.Tenants().List(query));
    for (const Tenant& t : page) {
      names.push_back(t.name);
      if (limit != 0 && names.size() == limit) return names;
    }
    if (static_cast<int>(page.size()) < query.limit) return names;
    query.after_name = page.back().name;
  }
}

// "acme, globex and 3 more": tenants named in a refusal.
std::string NameSome(const std::vector<std::string>& names, std::size_t shown) {
  std::string text;
  for (std::size_t i = 0; i < names.size() && i < shown; ++i) text += (i == 0 ? "" : ", ") + names[i];
  if (names.size() > shown) text += " and more";
  return text;
}

// Refused while tenants have the tier: what they hold was made under the old value.
Status CheckUnused(Tx& tx, const TrustTier& tier, std::string_view field, std::string_view why) {
  SEPTA_ASSIGN_OR_RETURN(const std::vector<std::string> tenants, TenantsOf(tx, tier.name, 4));
  if (tenants.empty()) return Status::Ok();
  const std::string message = "cannot change while tenants have the tier (" + NameSome(tenants, 3) +
                              "): " + std::string(why) + "; move them to another tier first";
  return Status(Code::kFailedPrecondition, std::string(field) + ": " + message, {{std::string(field), message}});
}

}  // namespace

std::string TrustTierResource(std::string_view name) { return "trust-tiers/" + std::string(name); }

Result<DeclaredFields> TrustTierKind::CheckDeclared(const DeclaredFields& declared) const {
  return CheckDeclaredPaths(
      declared, kKind,
      {"display_name", "description", "gpu_sharing", "co_tenancy", "runtime_class", "credential_ttl_max",
       "api_limits.objects", "api_limits.object_bytes", "api_limits.watches", "api_limits.requests_in_flight"});
}

Status TrustTierKind::Validate(const RequestContext& ctx, const TrustTier& tier) const {
  SEPTA_RETURN_IF_ERROR(RequireAdminWriter(ctx.principal, "write trust tiers"));
  return tenancy::ValidateTrustTierName("name", tier.name);
}

Result<std::optional<TrustTier>> TrustTierKind::Get(Tx& tx, const TrustTier& key) const {
  auto found = tx.TrustTiers().Get(key.name);
  if (IsNotFound(found)) return std::optional<TrustTier>();
  SEPTA_RETURN_IF_ERROR(found);
  return std::optional<TrustTier>(*std::move(found));
}

Result<TrustTier> TrustTierKind::Create(WriteScope& scope, const TrustTier& draft) const {
  SEPTA_RETURN_IF_ERROR(RequireAdminWriter(scope.ctx.principal, "create trust tiers"));
  SEPTA_RETURN_IF_ERROR(tenancy::ValidateTrustTier(draft));
  TrustTier created = draft;
  created.create_time = created.update_time = scope.now;
  created.version = 1;
  if (Status ins = scope.tx.TrustTiers().Insert(created); !ins.ok()) {
    if (IsAlreadyExists(ins)) return AlreadyExists("trust tier \"" + draft.name + "\" already exists");
    return ins;
  }
  SEPTA_RETURN_IF_ERROR(scope.tx.Audit().Append(
      AuditOf(scope.ctx, scope.now, "trust_tier.create", TrustTierResource(created.name), "", EtagOf(1))));
  return created;
}

Result<TrustTier> TrustTierKind::Update(WriteScope& scope, const TrustTier& live, const TrustTier& desired,
                                        const DeclaredFields& declared) const {
  const std::vector<FieldChange> changes = Diff(live, desired, declared);
  if (changes.empty()) return live;
  SEPTA_RETURN_IF_ERROR(RequireAdminWriter(scope.ctx.principal, "update trust tiers"));
  SEPTA_RETURN_IF_ERROR(
      GuardSetMember(scope, kKind, TrustTierResource(live.name), "trust_tier.update", PathsOf(changes)));
  TrustTier next = live;
  for (const FieldChange& change : changes) {
    const std::string& path = change.path;
    if (path == "display_name") next.display_name = desired.display_name;
    if (path == "description") next.description = desired.description;
    if (path == "gpu_sharing") next.gpu_sharing = desired.gpu_sharing;
    if (path == "co_tenancy") next.co_tenancy = desired.co_tenancy;
    if (path == "runtime_class") next.runtime_class = desired.runtime_class;
    if (path == "credential_ttl_max") next.credential_ttl_max_seconds = desired.credential_ttl_max_seconds;
    if (path == "api_limits.objects") next.api_limits.objects = desired.api_limits.objects;
    if (path == "api_limits.object_bytes") next.api_limits.object_bytes = desired.api_limits.object_bytes;
    if (path == "api_limits.watches") next.api_limits.watches = desired.api_limits.watches;
    if (path == "api_limits.requests_in_flight") {
      next.api_limits.requests_in_flight = desired.api_limits.requests_in_flight;
    }
  }
  SEPTA_RETURN_IF_ERROR(tenancy::ValidateTrustTier(next));
  if (next.gpu_sharing != live.gpu_sharing) {
    SEPTA_RETURN_IF_ERROR(
        CheckUnused(scope.tx, live, "gpu_sharing", "their capacity was placed under the current sharing"));
  }
  if (next.runtime_class != live.runtime_class) {
    SEPTA_RETURN_IF_ERROR(CheckUnused(scope.tx, live, "runtime_class", "their pods run under the current class"));
  }
  next.update_time = scope.now;
  next.version = live.version + 1;
  SEPTA_RETURN_IF_ERROR(scope.tx.TrustTiers().Update(next, live.version));
  if (next.credential_ttl_max_seconds < live.credential_ttl_max_seconds) {
    // Its tenants' tokens live no longer than the new cap allows, counted from their issue.
    SEPTA_ASSIGN_OR_RETURN(const std::vector<std::string> tenants, TenantsOf(scope.tx, live.name, 0));
    for (const std::string& tenant : tenants) {
      const std::string principal = "tenant:" + tenant;
      SEPTA_RETURN_IF_ERROR(
          scope.tx.Tokens().CapLifetimes(principal, std::chrono::seconds(next.credential_ttl_max_seconds)));
      scope.forget.push_back(Revocation{"", principal});
    }
  }
  SEPTA_RETURN_IF_ERROR(
      scope.tx.Audit().Append(AuditOf(scope.ctx, scope.now, "trust_tier.update", TrustTierResource(live.name),
                                      EtagOf(live.version), EtagOf(next.version))));
  return next;
}

Status TrustTierKind::Delete(WriteScope& scope, const TrustTier& live) const {
  SEPTA_RETURN_IF_ERROR(RequireAdminWriter(scope.ctx.principal, "delete trust tiers"));
  SEPTA_ASSIGN_OR_RETURN(const std::vector<std::string> tenants, TenantsOf(scope.tx, live.name, 4));
  if (!tenants.empty()) {
    return FailedPrecondition("trust tier \"" + live.name + "\" is the tier of tenants " + NameSome(tenants, 3) +
                              "; move them to another tier first");
  }
  SEPTA_RETURN_IF_ERROR(GuardSetMember(scope, kKind, TrustTierResource(live.name), "trust_tier.delete", {}));
  SEPTA_RETURN_IF_ERROR(scope.tx.TrustTiers().Delete(live.name, live.version));
  return scope.tx.Audit().Append(
      AuditOf(scope.ctx, scope.now, "trust_tier.delete", TrustTierResource(live.name), EtagOf(live.version), ""));
}

std::vector<FieldChange> TrustTierKind::Diff(const TrustTier& live, const TrustTier& desired,
                                             const DeclaredFields& declared) const {
  std::vector<FieldChange> changes;
  CompareField(changes, declared, "display_name", live.display_name, desired.display_name);
  CompareField(changes, declared, "description", live.description, desired.description);
  CompareField(changes, declared, "gpu_sharing", SharingName(live.gpu_sharing), SharingName(desired.gpu_sharing));
  CompareField(changes, declared, "co_tenancy", live.co_tenancy, desired.co_tenancy);
  CompareField(changes, declared, "runtime_class", live.runtime_class, desired.runtime_class);
  CompareField(changes, declared, "credential_ttl_max", Seconds(live.credential_ttl_max_seconds),
               Seconds(desired.credential_ttl_max_seconds));
  CompareApiLimits(changes, declared, live.api_limits, desired.api_limits);
  return changes;
}

}  // namespace septa::core
