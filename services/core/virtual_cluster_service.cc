#include "services/core/virtual_cluster_service.h"

#include "services/core/audit.h"
#include "services/core/crypto.h"
#include "services/core/idempotency.h"
#include "services/core/tenant_query.h"
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

std::string NameOf(std::string_view tenant, std::string_view name) {
  return "virtual cluster \"" + tenancy::VirtualClusterText(tenant, name) + "\"";
}

// Names that cannot exist are not found without asking the store.
Status CheckCanName(const std::string& tenant, const std::string& name) {
  if (CanNameTenantOrTier(tenant) && tenancy::ValidateVirtualClusterName("name", name).ok()) return Status::Ok();
  return NotFound(NameOf(EscapeControlCharacters(tenant), EscapeControlCharacters(name)) + " not found");
}

Result<VirtualCluster> Find(Tx& tx, const std::string& tenant, const std::string& name) {
  auto found = tx.VirtualClusters().Get(tenant, name);
  if (IsNotFound(found)) return NotFound(NameOf(tenant, name) + " not found");
  return found;
}

std::optional<tenancy::Reservation> ReservationOf(Tx& tx, const std::string& tenant, const std::string& name,
                                                  Status& error) {
  auto r = tx.Reservations().Get(tenant, name);
  if (r.ok()) return *std::move(r);
  if (r.status().code() != Code::kNotFound) error = r.status();
  return std::nullopt;
}

// Who may change `tenant`'s virtual cluster `name`: its owners and admins.
Status CheckMayWrite(const RequestContext& ctx, const std::string& tenant, const std::string& name,
                     std::string_view what) {
  SEPTA_RETURN_IF_ERROR(CheckCanName(tenant, name));
  SEPTA_RETURN_IF_ERROR(RequireSeeTenant(ctx.principal, tenant));
  return RequireWriter(ctx.principal, what);
}

// The virtual cluster a write starts from, with what it holds; its etag
// must be `if_match` when that is set.
Result<VirtualClusterView> FindForWrite(Tx& tx, const std::string& tenant, const std::string& name,
                                        std::string_view if_match) {
  auto current = Find(tx, tenant, name);
  SEPTA_RETURN_IF_ERROR(current);
  SEPTA_RETURN_IF_ERROR(CheckEtag(if_match, current->version, NameOf(tenant, name)));
  Status error;
  auto reservation = ReservationOf(tx, tenant, name, error);
  SEPTA_RETURN_IF_ERROR(error);
  return VirtualClusterView{*std::move(current), std::move(reservation)};
}

// Fingerprint of a create request for idempotency checks.
std::string CreateFingerprint(const std::string& tenant, const VirtualCluster& v) {
  std::string canon = tenant + '\n' + v.name + '\n' + v.display_name + '\n' +
                      std::string(gpu::TierName(v.capacity.tier)) + '\n' + std::to_string(v.capacity.milli_gpu) + '\n' +
                      std::to_string(v.capacity.gpu_memory_mib) + '\n' + v.capacity.model + '\n' +
                      std::to_string(v.capacity.count) + '\n';
  for (const auto& m : v.capacity.mig) canon += m.profile + '/' + m.model + '/' + std::to_string(m.count) + '\n';
  canon += std::to_string(v.quota.cpu_milli) + ' ' + std::to_string(v.quota.memory_mib) + ' ' +
           std::to_string(v.quota.pods) + ' ' + std::to_string(v.queue.priority) + ' ' +
           std::to_string(v.queue.over_quota_weight) + '\n';
  for (const auto& limit :
       {v.api_limits.objects, v.api_limits.object_bytes, v.api_limits.watches, v.api_limits.requests_in_flight}) {
    canon += limit ? std::to_string(*limit) + ' ' : "- ";
  }
  return Sha256Hex(canon);
}

Result<VirtualClusterState> ParseStateFilter(std::string_view filter) {
  constexpr std::string_view kPrefix = "state=";
  const std::string escaped = EscapeControlCharacters(filter);
  if (!filter.starts_with(kPrefix)) {
    return InvalidField("filter", "must be empty or state=<STATE>, not \"" + escaped + "\"");
  }
  const std::string_view value = filter.substr(kPrefix.size());
  for (VirtualClusterState s :
       {VirtualClusterState::kProvisioning, VirtualClusterState::kReady, VirtualClusterState::kSleeping,
        VirtualClusterState::kDeleting, VirtualClusterState::kFailed}) {
    if (value == tenancy::VirtualClusterStateName(s)) return s;
  }
  return InvalidField("filter",
                      "unknown state in \"" + escaped + "\"; one of PROVISIONING, READY, SLEEPING, DELETING, FAILED");
}

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
  auto tier = tx.TrustTiers().Get(tenant.trust_tier);
  SEPTA_RETURN_IF_ERROR(tier);
  return tier->gpu_sharing;
}

}  // namespace

Result<VirtualClusterView> VirtualClusterService::Create(const RequestContext& ctx, const std::string& tenant,
                                                         const VirtualCluster& draft,
                                                         std::string_view idempotency_key) {
  if (!CanNameTenantOrTier(tenant)) return NotFound("tenant \"" + EscapeControlCharacters(tenant) + "\" not found");
  SEPTA_RETURN_IF_ERROR(RequireSeeTenant(ctx.principal, tenant));
  SEPTA_RETURN_IF_ERROR(RequireWriter(ctx.principal, "create virtual clusters"));
  if (draft.api_limits != tenancy::ApiLimits{}) SEPTA_RETURN_IF_ERROR(RequireAdmin(ctx.principal, kSetApiLimits));
  SEPTA_RETURN_IF_ERROR(ValidateIdempotencyKey(idempotency_key));
  const std::string principal = ctx.principal.ToString();
  const std::string key(idempotency_key);
  const std::string fingerprint = CreateFingerprint(tenant, draft);

  VirtualClusterView created;
  Status st = ledger_.Transact(store_, TxMode::kReadWrite, [&](Tx& tx, CapacityLedger::Session& session) -> Status {
    const TimePoint now = Now(clock_);
    if (!key.empty()) {
      auto previous = FindIdempotentCreate(tx, principal, key, fingerprint, now, idempotency_ttl_);
      if (previous.ok()) {
        auto existing = Find(tx, tenant, draft.name);
        SEPTA_RETURN_IF_ERROR(existing);
        Status error;
        created = {*std::move(existing), ReservationOf(tx, tenant, draft.name, error)};
        return error;
      }
      if (previous.status().code() != Code::kNotFound) return previous.status();
    }
    auto owner = ActiveTenant(tx, tenant);
    SEPTA_RETURN_IF_ERROR(owner);
    auto tier = TierOf(tx, *owner);
    SEPTA_RETURN_IF_ERROR(tier);
    SEPTA_RETURN_IF_ERROR(tenancy::ValidateVirtualClusterSpec(draft, *tier, catalog_));

    VirtualCluster vc = draft;
    vc.tenant = tenant;
    vc.state = VirtualClusterState::kProvisioning;
    vc.conditions.clear();
    // Given once, here, and stored: a later name function moves no namespace.
    vc.host_namespace = tenancy::host::HostNamespaceName(tenant, vc.name);
    vc.on_host = false;
    vc.endpoint.clear();
    vc.generation = 1;
    vc.version = 1;
    vc.create_time = vc.update_time = now;
    tenancy::SetCondition(vc.conditions, tenancy::CapacityReadyCondition({}, vc.generation), now);
    if (Status ins = tx.VirtualClusters().Insert(vc); !ins.ok()) {
      if (ins.code() != Code::kAlreadyExists) return ins;
      if (ins.violations().empty() || ins.violations()[0].field != "host_namespace") {
        return AlreadyExists(NameOf(tenant, vc.name) + " already exists");
      }
      // Another virtual cluster holds the namespace this name maps to (one
      // named under an earlier name function, or a 44-bit hash collision):
      // never shared, whoever holds it.
      const std::string why =
          "its host namespace " + vc.host_namespace + " is another virtual cluster's; choose another name";
      return Status(Code::kAlreadyExists, "name: " + why, {{"name", why}});
    }
    SEPTA_RETURN_IF_ERROR(EnforceTenantQuota(tx, catalog_, *owner, vc, nullptr, nullptr));
    SEPTA_RETURN_IF_ERROR(session.Engine(tx));
    auto placed = session.Place(tx, tenant, vc.name, vc.capacity, now);
    SEPTA_RETURN_IF_ERROR(placed);
    SEPTA_RETURN_IF_ERROR(tx.Reservations().Insert(placed->reservation));
    if (!placed->relayout.empty()) {  // capacity not ready until the MIG layout controller has applied it
      tenancy::SetCondition(vc.conditions, tenancy::CapacityReadyCondition(placed->relayout, vc.generation), now);
      SEPTA_RETURN_IF_ERROR(tx.VirtualClusters().Update(vc, vc.version));
    }
    SEPTA_RETURN_IF_ERROR(tx.Audit().Append(
        AuditOf(ctx, now, "vcluster.create", VirtualClusterResource(tenant, vc.name), "", EtagOf(vc.version))));
    if (!key.empty()) {
      SEPTA_RETURN_IF_ERROR(tx.Idempotency().Insert(
          IdempotencyRecord{principal, key, fingerprint, VirtualClusterResource(tenant, vc.name), now}));
    }
    created = {std::move(vc), std::move(placed->reservation)};
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return created;
}

Result<VirtualClusterView> VirtualClusterService::Get(const RequestContext& ctx, const std::string& tenant,
                                                      const std::string& name) {
  SEPTA_RETURN_IF_ERROR(CheckCanName(tenant, name));
  SEPTA_RETURN_IF_ERROR(RequireSeeTenant(ctx.principal, tenant));
  VirtualClusterView view;
  Status st = store_.Transact(TxMode::kReadOnly, [&](Tx& tx) -> Status {
    auto found = Find(tx, tenant, name);
    SEPTA_RETURN_IF_ERROR(found);
    Status error;
    view = {*std::move(found), ReservationOf(tx, tenant, name, error)};
    return error;
  });
  if (!st.ok()) return st;
  return view;
}

Result<VirtualClusterPage> VirtualClusterService::List(const RequestContext& ctx, const std::string& tenant,
                                                       const ListVirtualClustersParams& params) {
  if (!CanNameTenantOrTier(tenant)) return NotFound("tenant \"" + EscapeControlCharacters(tenant) + "\" not found");
  SEPTA_RETURN_IF_ERROR(RequireSeeTenant(ctx.principal, tenant));
  if (params.page_size < 0 || params.page_size > kMaxPageSize) {
    return InvalidField("page_size", "must be between 1 and 500 (0 for the default of 50)");
  }
  VirtualClusterQuery query;
  query.tenant = tenant;
  query.after_tenant = tenant;
  query.limit = params.page_size == 0 ? kDefaultPageSize : params.page_size;
  if (!params.filter.empty()) {
    auto state = ParseStateFilter(params.filter);
    SEPTA_RETURN_IF_ERROR(state);
    query.state = *state;
  }
  if (!params.page_token.empty()) {
    auto after = DecodePageToken(params.page_token);
    SEPTA_RETURN_IF_ERROR(after);
    query.after_name = *after;
  }
  VirtualClusterPage page;
  Status st = store_.Transact(TxMode::kReadOnly, [&](Tx& tx) -> Status {
    page.vclusters.clear();
    auto owner = tx.Tenants().Get(tenant);
    if (IsNotFound(owner)) return NotFound("tenant \"" + tenant + "\" not found");
    SEPTA_RETURN_IF_ERROR(owner);
    // One row more than asked tells whether another page exists.
    VirtualClusterQuery probe = query;
    probe.limit = query.limit + 1;
    auto rows = tx.VirtualClusters().List(probe);
    SEPTA_RETURN_IF_ERROR(rows);
    for (auto& vc : *rows) {
      Status error;
      auto reservation = ReservationOf(tx, tenant, vc.name, error);
      SEPTA_RETURN_IF_ERROR(error);
      page.vclusters.push_back({std::move(vc), std::move(reservation)});
    }
    return Status::Ok();
  });
  if (!st.ok()) return st;
  if (static_cast<int>(page.vclusters.size()) > query.limit) {
    page.vclusters.resize(query.limit);
    page.next_page_token = EncodePageToken(page.vclusters.back().vcluster.name);
  }
  return page;
}

Result<VirtualClusterView> VirtualClusterService::Update(const RequestContext& ctx, const std::string& tenant,
                                                         const std::string& name, const VirtualCluster& patch,
                                                         const std::vector<std::string>& paths,
                                                         std::string_view if_match) {
  SEPTA_RETURN_IF_ERROR(CheckMayWrite(ctx, tenant, name, "update virtual clusters"));
  for (const std::string& path : paths) {
    if (path == "api_limits" || path.starts_with("api_limits."))
      SEPTA_RETURN_IF_ERROR(RequireAdmin(ctx.principal, kSetApiLimits));
  }
  VirtualClusterView updated;
  Status st = ledger_.Transact(store_, TxMode::kReadWrite, [&](Tx& tx, CapacityLedger::Session& session) -> Status {
    const TimePoint now = Now(clock_);
    auto found = FindForWrite(tx, tenant, name, if_match);
    SEPTA_RETURN_IF_ERROR(found);
    const VirtualCluster* current = &found->vcluster;
    std::optional<tenancy::Reservation>& reservation = found->reservation;
    auto next = tenancy::ApplyVirtualClusterPatch(*current, patch, paths);
    SEPTA_RETURN_IF_ERROR(next);
    auto owner = tx.Tenants().Get(tenant);
    SEPTA_RETURN_IF_ERROR(owner);
    auto tier = TierOf(tx, *owner);
    SEPTA_RETURN_IF_ERROR(tier);
    SEPTA_RETURN_IF_ERROR(tenancy::ValidateVirtualClusterSpec(*next, *tier, catalog_));
    SEPTA_RETURN_IF_ERROR(
        EnforceTenantQuota(tx, catalog_, *owner, *next, current, reservation ? &*reservation : nullptr));
    if (!(next->capacity == current->capacity)) {
      SEPTA_RETURN_IF_ERROR(ActiveTenant(tx, tenant));
      // All or nothing: the old capacity is given back in the engine and the
      // new one placed; a shortfall fails the transaction, which keeps the old rows.
      SEPTA_RETURN_IF_ERROR(session.Engine(tx));
      session.Release(tenant, name);
      auto placed = session.Place(tx, tenant, name, next->capacity, now);
      SEPTA_RETURN_IF_ERROR(placed);
      SEPTA_RETURN_IF_ERROR(tx.Reservations().Delete(tenant, name));
      SEPTA_RETURN_IF_ERROR(tx.Reservations().Insert(placed->reservation));
      reservation = std::move(placed->reservation);
      tenancy::SetCondition(next->conditions, tenancy::CapacityReadyCondition(placed->relayout, next->generation), now);
    } else if (const tenancy::Condition* capacity = tenancy::FindCondition(next->conditions, tenancy::kCapacityReady);
               capacity != nullptr && next->generation != current->generation) {
      // The capacity is what it was: its condition holds for the new generation too.
      tenancy::Condition same = *capacity;
      same.observed_generation = next->generation;
      tenancy::SetCondition(next->conditions, std::move(same), now);
    }
    const VirtualClusterChange change = VirtualClusterChange::By(ctx, "vcluster.update");
    SEPTA_RETURN_IF_ERROR(WriteVirtualCluster(tx, *current, *next, now, &change));
    updated = {*std::move(next), std::move(reservation)};
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return updated;
}

Result<VirtualClusterView> VirtualClusterService::Delete(const RequestContext& ctx, const std::string& tenant,
                                                         const std::string& name, std::string_view if_match) {
  SEPTA_RETURN_IF_ERROR(CheckMayWrite(ctx, tenant, name, "delete virtual clusters"));
  VirtualClusterView deleted;
  Status st = ledger_.Transact(store_, TxMode::kReadWrite, [&](Tx& tx, CapacityLedger::Session& session) -> Status {
    const TimePoint now = Now(clock_);
    auto found = FindForWrite(tx, tenant, name, if_match);
    SEPTA_RETURN_IF_ERROR(found);
    const VirtualCluster* current = &found->vcluster;
    std::optional<tenancy::Reservation>& reservation = found->reservation;
    VirtualCluster next = *current;
    SEPTA_RETURN_IF_ERROR(tenancy::CheckTransition(current->state, VirtualClusterState::kDeleting));
    next.state = VirtualClusterState::kDeleting;
    if (!current->on_host) {
      // The answer shows the version the delete would have written.
      StampNextVersion(*current, next, now);
      // Never provisioned on the host: nothing of the tenant can run on its capacity.
      SEPTA_RETURN_IF_ERROR(session.Engine(tx));
      session.Release(tenant, name);
      SEPTA_RETURN_IF_ERROR(tx.Reservations().Delete(tenant, name));
      SEPTA_RETURN_IF_ERROR(tx.VirtualClusters().Delete(tenant, name, current->version));
      reservation.reset();
      SEPTA_RETURN_IF_ERROR(tx.Audit().Append(
          AuditOf(ctx, now, "vcluster.delete", VirtualClusterResource(tenant, name), EtagOf(current->version), "")));
    } else {
      if (reservation) {
        // Its capacity stays held until the provisioner has emptied the
        // host namespace. Compared first, so the session seals the epoch
        // the mark moves and the next reservation does not rebuild for it.
        SEPTA_RETURN_IF_ERROR(session.Engine(tx));
        SEPTA_RETURN_IF_ERROR(tx.Reservations().MarkReleasing(tenant, name));
        reservation->releasing = true;
      }
      const VirtualClusterChange change = VirtualClusterChange::By(ctx, "vcluster.delete");
      SEPTA_RETURN_IF_ERROR(WriteVirtualCluster(tx, *current, next, now, &change));
    }
    deleted = {std::move(next), std::move(reservation)};
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return deleted;
}

Result<VirtualClusterView> VirtualClusterService::Sleep(const RequestContext& ctx, const std::string& tenant,
                                                        const std::string& name, std::string_view if_match) {
  return Transition(ctx, tenant, name, if_match, "sleep", &tenancy::RequestSleep);
}

Result<VirtualClusterView> VirtualClusterService::Wake(const RequestContext& ctx, const std::string& tenant,
                                                       const std::string& name, std::string_view if_match) {
  return Transition(ctx, tenant, name, if_match, "wake", &tenancy::RequestWake);
}

Result<VirtualClusterView> VirtualClusterService::Transition(const RequestContext& ctx, const std::string& tenant,
                                                             const std::string& name, std::string_view if_match,
                                                             std::string_view action,
                                                             Result<VirtualCluster> (*request)(const VirtualCluster&)) {
  SEPTA_RETURN_IF_ERROR(CheckMayWrite(ctx, tenant, name, std::string(action) + " virtual clusters"));
  VirtualClusterView out;
  Status st = store_.Transact(TxMode::kReadWrite, [&](Tx& tx) -> Status {
    const TimePoint now = Now(clock_);
    auto found = FindForWrite(tx, tenant, name, if_match);
    SEPTA_RETURN_IF_ERROR(found);
    const VirtualCluster& current = found->vcluster;
    auto next = request(current);
    SEPTA_RETURN_IF_ERROR(next);
    if (next->state != current.state) {
      const VirtualClusterChange change = VirtualClusterChange::By(ctx, "vcluster." + std::string(action));
      SEPTA_RETURN_IF_ERROR(WriteVirtualCluster(tx, current, *next, now, &change));
    }
    out = {*std::move(next), std::move(found->reservation)};
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return out;
}

}  // namespace septa::core
