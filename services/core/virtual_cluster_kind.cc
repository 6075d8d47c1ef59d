#include "services/core/virtual_cluster_kind.h"

#include "services/core/apply_set_guard.h"
#include "services/core/audit.h"
#include "services/core/tenant_quota_check.h"
#include "services/core/validation.h"
#include "services/core/virtual_cluster_write.h"
#include "tenancy/host/names.h"
#include "tenancy/lifecycle.h"
#include "tenancy/names.h"
#include "tenancy/validation.h"
#include "tenancy/virtual_cluster_ref.h"

namespace septa::core {
namespace {

using tenancy::VirtualCluster;
using tenancy::VirtualClusterState;

// The trust tier's defaults bound a tenant's API; only the platform's admins move them.
constexpr std::string_view kSetApiLimits = "set a virtual cluster's api_limits";

// The tenant the request acts for, refused when it cannot take new capacity.
Result<Tenant> ActiveTenant(Tx& tx, const std::string& name) {
  auto tenant = tx.Tenants().Get(name);
  if (IsNotFound(tenant)) return NotFound("tenant \"" + name + "\" not found");
  SEPTA_RETURN_IF_ERROR(tenant);
  if (tenant->state == TenantState::kSuspended) {
    return FailedPrecondition("tenant \"" + name + "\" is suspended: it cannot take new capacity");
  }
  return tenant;
}

Result<gpu::Tier> TierOf(Tx& tx, const Tenant& tenant) {
  SEPTA_ASSIGN_OR_RETURN(const TrustTier tier, tx.TrustTiers().Get(tenant.trust_tier));
  return tier.gpu_sharing;
}

Result<CapacityLedger::Session*> SessionOf(const WriteScope& scope) {
  if (scope.capacity == nullptr) return Internal("a virtual cluster write needs the transaction's capacity session");
  return scope.capacity;
}

// The capacity as one comparable text (it is replaced whole): its tier and
// the members that tier uses.
std::string CapacityText(const tenancy::Capacity& c) {
  std::string text(gpu::TierName(c.tier));
  if (c.milli_gpu != 0) text += " milli_gpu=" + std::to_string(c.milli_gpu);
  if (c.gpu_memory_mib != 0) text += " gpu_memory_mib=" + std::to_string(c.gpu_memory_mib);
  for (const auto& m : c.mig) {
    text += " mig=" + std::to_string(m.count) + "x" + m.profile + (m.model.empty() ? "" : "@" + m.model);
  }
  if (!c.model.empty()) text += " model=" + c.model;
  if (c.count != 0) text += " count=" + std::to_string(c.count);
  return text;
}

std::optional<std::int64_t> Present(std::int64_t v) { return v; }

}  // namespace

std::string DescribeVirtualCluster(std::string_view tenant, std::string_view name) {
  return "virtual cluster \"" + tenancy::VirtualClusterText(tenant, name) + "\"";
}

Status CheckMaySeeTenant(const RequestContext& ctx, const std::string& tenant) {
  if (!CanNameTenantOrTier(tenant)) return NotFound("tenant \"" + EscapeControlCharacters(tenant) + "\" not found");
  return RequireSeeTenant(ctx.principal, tenant);
}

Status CheckMaySeeVirtualCluster(const RequestContext& ctx, const std::string& tenant, const std::string& vcluster) {
  if (!CanNameTenantOrTier(tenant) || !tenancy::ValidateVirtualClusterName("vcluster", vcluster).ok()) {
    return NotFound(DescribeVirtualCluster(EscapeControlCharacters(tenant), EscapeControlCharacters(vcluster)) +
                    " not found");
  }
  return RequireSeeTenant(ctx.principal, tenant);
}

Result<tenancy::VirtualCluster> FindVirtualCluster(Tx& tx, const std::string& tenant, const std::string& vcluster) {
  auto found = tx.VirtualClusters().Get(tenant, vcluster);
  if (IsNotFound(found)) return NotFound(DescribeVirtualCluster(tenant, vcluster) + " not found");
  return found;
}

Result<std::optional<tenancy::Reservation>> ReservationOf(Tx& tx, const std::string& tenant, const std::string& name) {
  auto r = tx.Reservations().Get(tenant, name);
  if (IsNotFound(r)) return std::optional<tenancy::Reservation>();
  SEPTA_RETURN_IF_ERROR(r);
  return std::optional<tenancy::Reservation>(*std::move(r));
}

Status CheckMayPatch(const RequestContext& ctx, const std::vector<std::string>& paths) {
  for (const std::string& path : paths) {
    if (path == "api_limits" || path.starts_with("api_limits.")) {
      SEPTA_RETURN_IF_ERROR(RequireAdmin(ctx.principal, kSetApiLimits));
    }
  }
  return Status::Ok();
}

std::string VirtualClusterKind::ResourceName(const VirtualCluster& vc) const {
  return VirtualClusterResource(vc.tenant, vc.name);
}

Result<DeclaredFields> VirtualClusterKind::CheckDeclared(const DeclaredFields& declared) const {
  return CheckDeclaredPaths(declared, kKind,
                            {"display_name", "capacity", "quota.cpu_milli", "quota.memory_mib", "quota.pods",
                             "queue.priority", "queue.over_quota_weight", "api_limits.objects",
                             "api_limits.object_bytes", "api_limits.watches", "api_limits.requests_in_flight"});
}

Status VirtualClusterKind::Validate(const RequestContext& ctx, const VirtualCluster& vc) const {
  SEPTA_RETURN_IF_ERROR(ValidateTenantName("tenant", vc.tenant));
  SEPTA_RETURN_IF_ERROR(tenancy::ValidateVirtualClusterName("name", vc.name));
  SEPTA_RETURN_IF_ERROR(RequireSeeTenant(ctx.principal, vc.tenant));
  SEPTA_RETURN_IF_ERROR(RequireWriter(ctx.principal, "write virtual clusters"));
  if (vc.api_limits != tenancy::ApiLimits{}) SEPTA_RETURN_IF_ERROR(RequireAdmin(ctx.principal, kSetApiLimits));
  return ValidateDisplayName("display_name", vc.display_name);
}

Result<std::optional<VirtualCluster>> VirtualClusterKind::Get(Tx& tx, const VirtualCluster& key) const {
  auto found = tx.VirtualClusters().Get(key.tenant, key.name);
  if (IsNotFound(found)) return std::optional<VirtualCluster>();
  SEPTA_RETURN_IF_ERROR(found);
  return std::optional<VirtualCluster>(*std::move(found));
}

Result<VirtualCluster> VirtualClusterKind::Create(WriteScope& scope, const VirtualCluster& draft) const {
  SEPTA_ASSIGN_OR_RETURN(VirtualClusterView created, CreateView(scope, draft));
  return std::move(created.vcluster);
}

Result<VirtualCluster> VirtualClusterKind::Update(WriteScope& scope, const VirtualCluster& live,
                                                  const VirtualCluster& desired, const DeclaredFields& declared) const {
  // The paths that differ are the patch: ApplyVirtualClusterPatch knows
  // each, and nothing differing writes nothing.
  std::vector<std::string> paths;
  for (FieldChange& change : Diff(live, desired, declared)) paths.push_back(std::move(change.path));
  if (paths.empty()) return live;
  SEPTA_RETURN_IF_ERROR(CheckMayPatch(scope.ctx, paths));
  SEPTA_ASSIGN_OR_RETURN(auto reservation, ReservationOf(scope.tx, live.tenant, live.name));
  SEPTA_ASSIGN_OR_RETURN(VirtualClusterView updated,
                         UpdateView(scope, VirtualClusterView{live, std::move(reservation)}, desired, paths));
  return std::move(updated.vcluster);
}

Status VirtualClusterKind::Delete(WriteScope& scope, const VirtualCluster& live) const {
  SEPTA_ASSIGN_OR_RETURN(auto reservation, ReservationOf(scope.tx, live.tenant, live.name));
  return DeleteView(scope, VirtualClusterView{live, std::move(reservation)}).status();
}

std::vector<FieldChange> VirtualClusterKind::Diff(const VirtualCluster& live, const VirtualCluster& desired,
                                                  const DeclaredFields& declared) const {
  std::vector<FieldChange> changes;
  CompareField(changes, declared, "display_name", live.display_name, desired.display_name);
  if (!(live.capacity == desired.capacity)) {
    CompareField(changes, declared, "capacity", CapacityText(live.capacity), CapacityText(desired.capacity));
  }
  CompareField(changes, declared, "quota.cpu_milli", Present(live.quota.cpu_milli), Present(desired.quota.cpu_milli));
  CompareField(changes, declared, "quota.memory_mib", Present(live.quota.memory_mib),
               Present(desired.quota.memory_mib));
  CompareField(changes, declared, "quota.pods", Present(live.quota.pods), Present(desired.quota.pods));
  CompareField(changes, declared, "queue.priority", Present(live.queue.priority), Present(desired.queue.priority));
  CompareField(changes, declared, "queue.over_quota_weight", Present(live.queue.over_quota_weight),
               Present(desired.queue.over_quota_weight));
  CompareApiLimits(changes, declared, live.api_limits, desired.api_limits);
  return changes;
}

Result<VirtualClusterView> VirtualClusterKind::CreateView(WriteScope& scope, const VirtualCluster& draft) const {
  SEPTA_ASSIGN_OR_RETURN(CapacityLedger::Session * session, SessionOf(scope));
  Tx& tx = scope.tx;
  const std::string& tenant = draft.tenant;
  SEPTA_ASSIGN_OR_RETURN(const Tenant owner, ActiveTenant(tx, tenant));
  SEPTA_ASSIGN_OR_RETURN(const gpu::Tier tier, TierOf(tx, owner));
  SEPTA_RETURN_IF_ERROR(tenancy::ValidateVirtualClusterSpec(draft, tier, catalog_));

  VirtualCluster vc = draft;
  vc.state = VirtualClusterState::kProvisioning;
  vc.conditions.clear();
  // Given once, here, and stored: a later name function moves no namespace.
  vc.host_namespace = tenancy::host::HostNamespaceName(tenant, vc.name);
  vc.on_host = false;
  vc.endpoint.clear();
  vc.generation = 1;
  vc.version = 1;
  vc.create_time = vc.update_time = scope.now;
  tenancy::SetCondition(vc.conditions, tenancy::CapacityReadyCondition({}, vc.generation), scope.now);
  if (Status ins = tx.VirtualClusters().Insert(vc); !ins.ok()) {
    if (ins.code() != Code::kAlreadyExists) return ins;
    if (ins.violations().empty() || ins.violations()[0].field != "host_namespace") {
      return AlreadyExists(DescribeVirtualCluster(tenant, vc.name) + " already exists");
    }
    // Another virtual cluster holds the namespace this name maps to (one
    // named under an earlier name function, or a 44-bit hash collision):
    // never shared, whoever holds it.
    const std::string why =
        "its host namespace " + vc.host_namespace + " is another virtual cluster's; choose another name";
    return Status(Code::kAlreadyExists, "name: " + why, {{"name", why}});
  }
  SEPTA_RETURN_IF_ERROR(EnforceTenantQuota(tx, catalog_, owner, vc, nullptr, nullptr));
  SEPTA_RETURN_IF_ERROR(session->Engine(tx));
  SEPTA_ASSIGN_OR_RETURN(CapacityLedger::Placed placed, session->Place(tx, tenant, vc.name, vc.capacity, scope.now));
  SEPTA_RETURN_IF_ERROR(tx.Reservations().Insert(placed.reservation));
  if (!placed.relayout.empty()) {  // capacity not ready until the MIG layout controller has applied it
    tenancy::SetCondition(vc.conditions, tenancy::CapacityReadyCondition(placed.relayout, vc.generation), scope.now);
    SEPTA_RETURN_IF_ERROR(tx.VirtualClusters().Update(vc, vc.version));
  }
  SEPTA_RETURN_IF_ERROR(tx.Audit().Append(AuditOf(scope.ctx, scope.now, "vcluster.create",
                                                  VirtualClusterResource(tenant, vc.name), "", EtagOf(vc.version))));
  return VirtualClusterView{std::move(vc), std::move(placed.reservation)};
}

Result<VirtualClusterView> VirtualClusterKind::UpdateView(WriteScope& scope, VirtualClusterView live,
                                                          const VirtualCluster& patch,
                                                          const std::vector<std::string>& paths) const {
  Tx& tx = scope.tx;
  const VirtualCluster& current = live.vcluster;
  const std::string& tenant = current.tenant;
  const std::string& name = current.name;
  std::optional<tenancy::Reservation>& reservation = live.reservation;
  SEPTA_ASSIGN_OR_RETURN(VirtualCluster next, tenancy::ApplyVirtualClusterPatch(current, patch, paths));
  if (const std::vector<std::string> changed = PathsOf(Diff(current, next, DeclaredFields())); !changed.empty()) {
    SEPTA_RETURN_IF_ERROR(
        GuardSetMember(scope, kKind, VirtualClusterResource(tenant, name), "vcluster.update", changed));
  }
  SEPTA_ASSIGN_OR_RETURN(const Tenant owner, tx.Tenants().Get(tenant));
  SEPTA_ASSIGN_OR_RETURN(const gpu::Tier tier, TierOf(tx, owner));
  SEPTA_RETURN_IF_ERROR(tenancy::ValidateVirtualClusterSpec(next, tier, catalog_));
  SEPTA_RETURN_IF_ERROR(EnforceTenantQuota(tx, catalog_, owner, next, &current, reservation ? &*reservation : nullptr));
  if (!(next.capacity == current.capacity)) {
    SEPTA_RETURN_IF_ERROR(ActiveTenant(tx, tenant));
    SEPTA_ASSIGN_OR_RETURN(CapacityLedger::Session * session, SessionOf(scope));
    // All or nothing: the old capacity is given back in the engine and the
    // new one placed; a shortfall fails the transaction, which keeps the old rows.
    SEPTA_RETURN_IF_ERROR(session->Engine(tx));
    session->Release(tenant, name);
    SEPTA_ASSIGN_OR_RETURN(CapacityLedger::Placed placed, session->Place(tx, tenant, name, next.capacity, scope.now));
    SEPTA_RETURN_IF_ERROR(tx.Reservations().Delete(tenant, name));
    SEPTA_RETURN_IF_ERROR(tx.Reservations().Insert(placed.reservation));
    reservation = std::move(placed.reservation);
    tenancy::SetCondition(next.conditions, tenancy::CapacityReadyCondition(placed.relayout, next.generation),
                          scope.now);
  } else if (const tenancy::Condition* capacity = tenancy::FindCondition(next.conditions, tenancy::kCapacityReady);
             capacity != nullptr && next.generation != current.generation) {
    // The capacity is what it was: its condition holds for the new generation too.
    tenancy::Condition same = *capacity;
    same.observed_generation = next.generation;
    tenancy::SetCondition(next.conditions, std::move(same), scope.now);
  }
  const VirtualClusterChange change = VirtualClusterChange::By(scope.ctx, "vcluster.update");
  SEPTA_RETURN_IF_ERROR(WriteVirtualCluster(tx, current, next, scope.now, &change));
  return VirtualClusterView{std::move(next), std::move(reservation)};
}

Result<VirtualClusterView> VirtualClusterKind::DeleteView(WriteScope& scope, VirtualClusterView live) const {
  SEPTA_ASSIGN_OR_RETURN(CapacityLedger::Session * session, SessionOf(scope));
  Tx& tx = scope.tx;
  const VirtualCluster& current = live.vcluster;
  const std::string& tenant = current.tenant;
  const std::string& name = current.name;
  std::optional<tenancy::Reservation>& reservation = live.reservation;
  VirtualCluster next = current;
  SEPTA_RETURN_IF_ERROR(tenancy::CheckTransition(current.state, VirtualClusterState::kDeleting));
  SEPTA_RETURN_IF_ERROR(GuardSetMember(scope, kKind, VirtualClusterResource(tenant, name), "vcluster.delete", {}));
  next.state = VirtualClusterState::kDeleting;
  if (!current.on_host) {
    // The answer shows the version the delete would have written.
    StampNextVersion(current, next, scope.now);
    // Never provisioned on the host: nothing of the tenant can run on its capacity.
    SEPTA_RETURN_IF_ERROR(session->Engine(tx));
    session->Release(tenant, name);
    SEPTA_RETURN_IF_ERROR(tx.Reservations().Delete(tenant, name));
    SEPTA_RETURN_IF_ERROR(tx.VirtualClusters().Delete(tenant, name, current.version));
    reservation.reset();
    SEPTA_RETURN_IF_ERROR(tx.Audit().Append(AuditOf(
        scope.ctx, scope.now, "vcluster.delete", VirtualClusterResource(tenant, name), EtagOf(current.version), "")));
  } else {
    if (reservation) {
      // Its capacity stays held until the provisioner has emptied the
      // host namespace. Compared first, so the session seals the epoch
      // the mark moves and the next reservation does not rebuild for it.
      SEPTA_RETURN_IF_ERROR(session->Engine(tx));
      SEPTA_RETURN_IF_ERROR(tx.Reservations().MarkReleasing(tenant, name));
      reservation->releasing = true;
    }
    const VirtualClusterChange change = VirtualClusterChange::By(scope.ctx, "vcluster.delete");
    SEPTA_RETURN_IF_ERROR(WriteVirtualCluster(tx, current, next, scope.now, &change));
  }
  return VirtualClusterView{std::move(next), std::move(reservation)};
}

}  // namespace septa::core
