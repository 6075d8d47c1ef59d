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

// Names that cannot exist are not found without asking the store.
Status CheckCanName(const std::string& tenant, const std::string& name) {
  if (CanNameTenantOrTier(tenant) && tenancy::ValidateVirtualClusterName("name", name).ok()) return Status::Ok();
  return NotFound(DescribeVirtualCluster(EscapeControlCharacters(tenant), EscapeControlCharacters(name)) +
                  " not found");
}

Result<VirtualCluster> Find(Tx& tx, const std::string& tenant, const std::string& name) {
  auto found = tx.VirtualClusters().Get(tenant, name);
  if (IsNotFound(found)) return NotFound(DescribeVirtualCluster(tenant, name) + " not found");
  return found;
}

// The virtual cluster with what it holds.
Result<VirtualClusterView> FindView(Tx& tx, const std::string& tenant, const std::string& name) {
  SEPTA_ASSIGN_OR_RETURN(VirtualCluster found, Find(tx, tenant, name));
  SEPTA_ASSIGN_OR_RETURN(auto reservation, ReservationOf(tx, tenant, name));
  return VirtualClusterView{std::move(found), std::move(reservation)};
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
  SEPTA_ASSIGN_OR_RETURN(VirtualClusterView found, FindView(tx, tenant, name));
  SEPTA_RETURN_IF_ERROR(CheckEtag(if_match, found.vcluster.version, DescribeVirtualCluster(tenant, name)));
  return found;
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

}  // namespace

Result<std::optional<PerKeyLimit::Held>> VirtualClusterService::CheckSlot(WriteMode mode, const std::string& tenant) {
  if (mode == WriteMode::kCommit) return std::optional<PerKeyLimit::Held>();
  std::optional<PerKeyLimit::Held> held = checks_in_flight_.TryHold(tenant);
  if (!held) {
    // ABORTED, a concurrency conflict: clients retry it (the portal's form does).
    return Aborted("a validate_only check of tenant \"" + tenant +
                   "\" is already under way: send the next one when it has answered");
  }
  return held;
}

Result<VirtualClusterView> VirtualClusterService::Create(const RequestContext& ctx, const std::string& tenant,
                                                         const VirtualCluster& draft, std::string_view idempotency_key,
                                                         WriteMode mode) {
  SEPTA_RETURN_IF_ERROR(CheckMaySeeTenant(ctx, tenant));
  SEPTA_RETURN_IF_ERROR(RequireWriter(ctx.principal, "create virtual clusters"));
  if (draft.api_limits != tenancy::ApiLimits{}) SEPTA_RETURN_IF_ERROR(CheckMayPatch(ctx, {"api_limits"}));
  SEPTA_RETURN_IF_ERROR(ValidateIdempotencyKey(idempotency_key));
  const std::string principal = ctx.principal.ToString();
  const std::string key(mode == WriteMode::kCommit ? idempotency_key : "");
  const std::string fingerprint = CreateFingerprint(tenant, draft);
  SEPTA_ASSIGN_OR_RETURN(const auto slot, CheckSlot(mode, tenant));

  return TransactFor(
      LedgerFor(mode), store_,
      [&](Tx& tx, CapacityLedger::Session& session) -> Result<VirtualClusterView> {
        const TimePoint now = Now(clock_);
        if (!key.empty()) {
          auto previous = FindIdempotentCreate(tx, principal, key, fingerprint, now, idempotency_ttl_);
          if (previous.ok()) return FindView(tx, tenant, draft.name);
          if (previous.status().code() != Code::kNotFound) return previous.status();
        }
        WriteScope scope{ctx, tx, &session, now};
        VirtualCluster vc = draft;
        vc.tenant = tenant;
        SEPTA_ASSIGN_OR_RETURN(VirtualClusterView created, kind_.CreateView(scope, vc));
        if (!key.empty()) {
          SEPTA_RETURN_IF_ERROR(tx.Idempotency().Insert(
              IdempotencyRecord{principal, key, fingerprint, VirtualClusterResource(tenant, draft.name), now}));
        }
        return created;
      },
      TxModeOf(mode));
}

Result<VirtualClusterView> VirtualClusterService::Get(const RequestContext& ctx, const std::string& tenant,
                                                      const std::string& name) {
  SEPTA_RETURN_IF_ERROR(CheckCanName(tenant, name));
  SEPTA_RETURN_IF_ERROR(RequireSeeTenant(ctx.principal, tenant));
  return TransactFor(store_, TxMode::kReadOnly, [&](Tx& tx) { return FindView(tx, tenant, name); });
}

Result<VirtualClusterPage> VirtualClusterService::List(const RequestContext& ctx, const std::string& tenant,
                                                       const ListVirtualClustersParams& params) {
  SEPTA_RETURN_IF_ERROR(CheckMaySeeTenant(ctx, tenant));
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
  auto views = TransactFor(store_, TxMode::kReadOnly, [&](Tx& tx) -> Result<std::vector<VirtualClusterView>> {
    auto owner = tx.Tenants().Get(tenant);
    if (IsNotFound(owner)) return NotFound("tenant \"" + tenant + "\" not found");
    SEPTA_RETURN_IF_ERROR(owner);
    // One row more than asked tells whether another page exists.
    VirtualClusterQuery probe = query;
    probe.limit = query.limit + 1;
    SEPTA_ASSIGN_OR_RETURN(std::vector<VirtualCluster> rows, tx.VirtualClusters().List(probe));
    std::vector<VirtualClusterView> out;
    for (auto& vc : rows) {
      SEPTA_ASSIGN_OR_RETURN(auto reservation, ReservationOf(tx, tenant, vc.name));
      out.push_back({std::move(vc), std::move(reservation)});
    }
    return out;
  });
  SEPTA_RETURN_IF_ERROR(views);
  VirtualClusterPage page{*std::move(views), ""};
  if (static_cast<int>(page.vclusters.size()) > query.limit) {
    page.vclusters.resize(query.limit);
    page.next_page_token = EncodePageToken(page.vclusters.back().vcluster.name);
  }
  return page;
}

Result<VirtualClusterView> VirtualClusterService::Update(const RequestContext& ctx, const std::string& tenant,
                                                         const std::string& name, const VirtualCluster& patch,
                                                         const std::vector<std::string>& paths,
                                                         std::string_view if_match, WriteMode mode) {
  SEPTA_RETURN_IF_ERROR(CheckMayWrite(ctx, tenant, name, "update virtual clusters"));
  SEPTA_RETURN_IF_ERROR(CheckMayPatch(ctx, paths));
  SEPTA_ASSIGN_OR_RETURN(const auto slot, CheckSlot(mode, tenant));
  return TransactFor(
      LedgerFor(mode), store_,
      [&](Tx& tx, CapacityLedger::Session& session) -> Result<VirtualClusterView> {
        SEPTA_ASSIGN_OR_RETURN(VirtualClusterView found, FindForWrite(tx, tenant, name, if_match));
        WriteScope scope{ctx, tx, &session, Now(clock_)};
        return kind_.UpdateView(scope, std::move(found), patch, paths);
      },
      TxModeOf(mode));
}

Result<VirtualClusterView> VirtualClusterService::Delete(const RequestContext& ctx, const std::string& tenant,
                                                         const std::string& name, std::string_view if_match) {
  SEPTA_RETURN_IF_ERROR(CheckMayWrite(ctx, tenant, name, "delete virtual clusters"));
  return TransactFor(ledger_, store_, [&](Tx& tx, CapacityLedger::Session& session) -> Result<VirtualClusterView> {
    SEPTA_ASSIGN_OR_RETURN(VirtualClusterView found, FindForWrite(tx, tenant, name, if_match));
    WriteScope scope{ctx, tx, &session, Now(clock_)};
    return kind_.DeleteView(scope, std::move(found));
  });
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
  return TransactFor(store_, TxMode::kReadWrite, [&](Tx& tx) -> Result<VirtualClusterView> {
    SEPTA_ASSIGN_OR_RETURN(VirtualClusterView found, FindForWrite(tx, tenant, name, if_match));
    const VirtualCluster& current = found.vcluster;
    SEPTA_ASSIGN_OR_RETURN(VirtualCluster next, request(current));
    if (next.state != current.state) {
      const VirtualClusterChange change = VirtualClusterChange::By(ctx, "vcluster." + std::string(action));
      SEPTA_RETURN_IF_ERROR(WriteVirtualCluster(tx, current, next, Now(clock_), &change));
    }
    return VirtualClusterView{std::move(next), std::move(found.reservation)};
  });
}

}  // namespace septa::core
