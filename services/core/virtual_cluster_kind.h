// Virtual clusters as a resource kind (resource_kind.h): the writes
// VirtualClusterService's RPCs and a declared VirtualCluster share. Each
// reserves or releases capacity in the caller's transaction, so it needs
// the scope's capacity session (CapacityLedger::Transact).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/catalog.h"
#include "services/core/resource_kind.h"
#include "tenancy/reservation.h"
#include "tenancy/virtual_cluster.h"

namespace septa::core {

// A virtual cluster and the capacity it holds (none once it has been released).
struct VirtualClusterView {
  tenancy::VirtualCluster vcluster;
  std::optional<tenancy::Reservation> reservation;
};

// `virtual cluster "acme/train"`, as messages name one.
std::string DescribeVirtualCluster(std::string_view tenant, std::string_view name);

// Who may read `tenant`'s virtual cluster `vcluster`, from the names alone:
// names that cannot exist, and another tenant's, are NOT_FOUND.
// NOT_FOUND for a name no tenant can have or one the caller may not see.
Status CheckMaySeeTenant(const RequestContext& ctx, const std::string& tenant);
Status CheckMaySeeVirtualCluster(const RequestContext& ctx, const std::string& tenant, const std::string& vcluster);
// The stored virtual cluster; NOT_FOUND naming it.
Result<tenancy::VirtualCluster> FindVirtualCluster(Tx& tx, const std::string& tenant, const std::string& vcluster);

// What the virtual cluster holds, if anything.
Result<std::optional<tenancy::Reservation>> ReservationOf(Tx& tx, const std::string& tenant, const std::string& name);

// Admins only may change api_limits (the tier's defaults bound a tenant's API).
Status CheckMayPatch(const RequestContext& ctx, const std::vector<std::string>& paths);

class VirtualClusterKind {
 public:
  using Object = tenancy::VirtualCluster;
  static constexpr std::string_view kKind = "VirtualCluster";

  explicit VirtualClusterKind(const gpu::Catalog& catalog) : catalog_(catalog) {}

  std::string ResourceName(const tenancy::VirtualCluster& vc) const;
  // display_name, capacity, and quota, queue and api_limits or a member of each.
  Result<DeclaredFields> CheckDeclared(const DeclaredFields& declared) const;
  // Its tenant's writers; api_limits only by admins; tenant and name well formed.
  Status Validate(const RequestContext& ctx, const tenancy::VirtualCluster& vc) const;
  Result<std::optional<tenancy::VirtualCluster>> Get(Tx& tx, const tenancy::VirtualCluster& key) const;
  Result<tenancy::VirtualCluster> Create(WriteScope& scope, const tenancy::VirtualCluster& draft) const;
  Result<tenancy::VirtualCluster> Update(WriteScope& scope, const tenancy::VirtualCluster& live,
                                         const tenancy::VirtualCluster& desired, const DeclaredFields& declared) const;
  Status Delete(WriteScope& scope, const tenancy::VirtualCluster& live) const;
  // display_name, capacity (compared whole, as it is replaced whole), and
  // each member of quota, queue and api_limits.
  std::vector<FieldChange> Diff(const tenancy::VirtualCluster& live, const tenancy::VirtualCluster& desired,
                                const DeclaredFields& declared) const;

  // The same writes, answering with what the virtual cluster holds.
  // Create: the tenant must be active and its tier hold the capacity
  // (FAILED_PRECONDITION), the capacity must be free (RESOURCE_EXHAUSTED
  // naming what is short), the tenant's quota must allow it; reserved all
  // or nothing with the row.
  Result<VirtualClusterView> CreateView(WriteScope& scope, const tenancy::VirtualCluster& draft) const;
  // `patch`'s `paths` (tenancy::ApplyVirtualClusterPatch) applied to `live`;
  // a new capacity replaces the old one all or nothing. Who may change the
  // paths (CheckMayPatch) is the caller's to check.
  Result<VirtualClusterView> UpdateView(WriteScope& scope, VirtualClusterView live,
                                        const tenancy::VirtualCluster& patch,
                                        const std::vector<std::string>& paths) const;
  // DELETING, its capacity held (releasing) until nothing of the tenant
  // runs on it; one never provisioned on the host is released and removed at once.
  Result<VirtualClusterView> DeleteView(WriteScope& scope, VirtualClusterView live) const;

 private:
  const gpu::Catalog& catalog_;
};

static_assert(ResourceKind<VirtualClusterKind>);

}  // namespace septa::core
