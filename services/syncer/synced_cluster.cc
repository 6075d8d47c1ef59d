#include "services/syncer/synced_cluster.h"

#include "tenancy/host/config.h"

namespace septa::syncer {

Result<std::optional<SyncedCluster>> LoadSyncedCluster(core::Store& store, const tenancy::host::RenderConfig& render,
                                                       const std::string& tenant, const std::string& vcluster) {
  std::optional<SyncedCluster> out;
  Status st = store.Transact(core::TxMode::kReadOnly, [&](core::Tx& tx) -> Status {
    out.reset();
    auto vc = tx.VirtualClusters().Get(tenant, vcluster);
    if (IsNotFound(vc)) return Status::Ok();
    SEPTA_RETURN_IF_ERROR(vc);
    SyncedCluster synced;
    synced.state = vc->state;
    tenancy::sync::VirtualClusterView& view = synced.view;
    view.tenant = tenant;
    view.vcluster = vcluster;
    view.host_namespace = vc->host_namespace;  // stored: never derived again (a READY one has it)
    auto owner = tx.Tenants().Get(tenant);
    SEPTA_RETURN_IF_ERROR(owner);
    // A suspended tenant's virtual clusters are asleep, whatever their own
    // state: their pods are not copied (the provisioner deletes the host's).
    if (owner->state == core::TenantState::kSuspended) synced.state = tenancy::VirtualClusterState::kSleeping;
    auto tier = tx.TrustTiers().Get(owner->trust_tier);
    SEPTA_RETURN_IF_ERROR(tier);
    view.tier = *std::move(tier);
    view.psa_level = tenancy::host::PsaLevel(render, view.tier);
    view.external_services = tenancy::host::ExternalServicesAllowed(render, view.tier);
    view.integration_domains = tenancy::host::IntegrationDomainsAllowed(render, view.tier);
    view.reservation.tenant = tenant;
    view.reservation.vcluster = vcluster;
    view.reservation.tier = vc->capacity.tier;
    if (auto reservation = tx.Reservations().Get(tenant, vcluster); reservation.ok()) {
      view.reservation = *std::move(reservation);
    } else if (reservation.status().code() != Code::kNotFound) {
      return reservation.status();
    }
    for (const std::string& name : tenancy::ReservedNodeNames(view.reservation)) {
      auto node = tx.Inventory().GetNode(name);
      if (IsNotFound(node)) continue;
      SEPTA_RETURN_IF_ERROR(node);
      view.nodes.push_back(*std::move(node));
    }
    out = std::move(synced);
    return Status::Ok();
  });
  if (!st.ok()) return st;
  return out;
}

}  // namespace septa::syncer
