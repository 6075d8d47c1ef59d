// The ensure step of the Vault issuer, as a decorator of the provisioner's
// port: Ensure first converges the virtual cluster's Vault PKI (root,
// mount, intermediate CA, tenant policy: VaultPki::EnsureVirtualClusterPki
// without the roles, which the issuer writes with the tier's cap), then the
// control plane, so the control plane finds its intermediate from its first
// load; the provisioner calls Ensure at every reconcile of the virtual
// cluster, so a failed step (Vault sealed, a crash) is finished by the next
// one. Remove removes the control plane, then the PKI (mount and policy
// stanza). List and SyncerKubeconfig are the inner port's.
#pragma once

#include "services/core/control_plane.h"
#include "services/vault/vault_pki.h"

namespace septa::vault {

class VaultPkiControlPlanes final : public core::ControlPlanes {
 public:
  VaultPkiControlPlanes(core::ControlPlanes& inner, VaultPki& pki) : inner_(inner), pki_(pki) {}

  Result<core::ControlPlaneState> Ensure(const std::string& tenant, const std::string& vcluster) override;
  Status Remove(const std::string& tenant, const std::string& vcluster) override;
  Result<std::vector<std::pair<std::string, std::string>>> List() override { return inner_.List(); }
  Result<std::string> SyncerKubeconfig(const std::string& tenant, const std::string& vcluster) override {
    return inner_.SyncerKubeconfig(tenant, vcluster);
  }

 private:
  core::ControlPlanes& inner_;
  VaultPki& pki_;
};

}  // namespace septa::vault
