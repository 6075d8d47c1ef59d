// Virtual cluster use cases, shared by REST and gRPC. A request writes the
// desired state and the GPU reservation it implies in one transaction and
// returns; reconcilers (the provisioner) make it real on the host.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "gpu/catalog.h"
#include "services/core/auth.h"
#include "services/core/capacity_ledger.h"
#include "services/core/idempotency.h"
#include "services/core/per_key_limit.h"
#include "services/core/store.h"
#include "services/core/virtual_cluster_kind.h"
#include "tenancy/reservation.h"
#include "tenancy/virtual_cluster.h"

namespace septa::core {

struct ListVirtualClustersParams {
  int page_size = 0;  // 0: default
  std::string page_token;
  std::string filter;  // empty or "state=<STATE>"
};

struct VirtualClusterPage {
  std::vector<VirtualClusterView> vclusters;
  std::string next_page_token;  // empty on the last page
};

class VirtualClusterService {
 public:
  VirtualClusterService(Store& store, const Clock& clock, CapacityLedger& ledger, const gpu::Catalog& catalog,
                        std::chrono::milliseconds idempotency_ttl = kDefaultIdempotencyTtl)
      : store_(store),
        clock_(clock),
        ledger_(ledger),
        check_ledger_(ledger.Twin()),
        idempotency_ttl_(idempotency_ttl),
        kind_(catalog) {}

  // The tenant's owners and admins. Reserves the capacity in the same
  // transaction: RESOURCE_EXHAUSTED naming what is short, FAILED_PRECONDITION
  // for capacity the tenant's tier does not hold or a suspended tenant.
  // kValidateOnly answers what would be created (its reservation placed)
  // and keeps nothing; an idempotency key is then neither looked up nor
  // spent. One check per tenant at a time: another is kAborted (retry).
  Result<VirtualClusterView> Create(const RequestContext& ctx, const std::string& tenant,
                                    const tenancy::VirtualCluster& draft, std::string_view idempotency_key,
                                    WriteMode mode = WriteMode::kCommit);
  // The tenant's principals (viewers too) and admins; others get NOT_FOUND.
  Result<VirtualClusterView> Get(const RequestContext& ctx, const std::string& tenant, const std::string& name);
  Result<VirtualClusterPage> List(const RequestContext& ctx, const std::string& tenant,
                                  const ListVirtualClustersParams& params);
  // An update mask over display_name, capacity, quota, queue (tenancy/lifecycle.h).
  // A new capacity is reserved all or nothing: on a shortfall the old one stays.
  Result<VirtualClusterView> Update(const RequestContext& ctx, const std::string& tenant, const std::string& name,
                                    const tenancy::VirtualCluster& patch, const std::vector<std::string>& paths,
                                    std::string_view if_match, WriteMode mode = WriteMode::kCommit);
  // Marks it DELETING; its capacity stays held (visibly, `releasing`) until
  // nothing of the tenant runs on it. One that was never provisioned on the
  // host runs nothing: it is released and removed at once.
  Result<VirtualClusterView> Delete(const RequestContext& ctx, const std::string& tenant, const std::string& name,
                                    std::string_view if_match);
  // The tenant's owners and admins. Writes the desired state
  // (tenancy::RequestSleep, RequestWake) and returns at once; the provisioner
  // deletes or lets back the host workloads. Asking again is idempotent:
  // nothing is written or audited.
  Result<VirtualClusterView> Sleep(const RequestContext& ctx, const std::string& tenant, const std::string& name,
                                   std::string_view if_match);
  Result<VirtualClusterView> Wake(const RequestContext& ctx, const std::string& tenant, const std::string& name,
                                  std::string_view if_match);

 private:
  Result<VirtualClusterView> Transition(const RequestContext& ctx, const std::string& tenant, const std::string& name,
                                        std::string_view if_match, std::string_view action,
                                        Result<tenancy::VirtualCluster> (*request)(const tenancy::VirtualCluster&));

  Store& store_;
  const Clock& clock_;
  CapacityLedger& ledger_;
  // validate_only's (CapacityLedger::Twin): checks never stall real writes.
  std::unique_ptr<CapacityLedger> check_ledger_;
  PerKeyLimit checks_in_flight_;  // by tenant: one check each at a time
  // For a check, the tenant's one slot (kAborted while another of its checks
  // runs); nothing for a write.
  Result<std::optional<PerKeyLimit::Held>> CheckSlot(WriteMode mode, const std::string& tenant);
  CapacityLedger& LedgerFor(WriteMode mode) { return mode == WriteMode::kCommit ? ledger_ : *check_ledger_; }
  std::chrono::milliseconds idempotency_ttl_;
  VirtualClusterKind kind_;
};

}  // namespace septa::core
