// The Vault issuer's step in the provisioner's port, as a decorator:
// Ensure first converges the virtual cluster's Vault PKI (root, mount,
// intermediate CA, tenant policy: VaultPki::EnsureVirtualClusterPki without
// the roles, which the issuer writes with the tier's cap), then the control
// plane, so the control plane finds its intermediate from its first load;
// then, when workload access is on and the control plane serves, the
// virtual cluster's Kubernetes auth method for its workloads
// (VaultWorkloadAccess), which needs the endpoint and its serving CA, and,
// when configured, the Vault Secrets Operator's objects in the virtual
// cluster (vault_secrets_operator.h), written through the syncer's access
// to its API. The provisioner calls Ensure at every reconcile of the
// virtual cluster, so a failed step (Vault sealed, a crash) is finished by
// the next one; so are revocations carried to Vault's CRL (after the PKI,
// RevocationsToVault), within a resync of each revocation. Remove removes
// the control plane (and with it the objects in it), then the workload
// access, then the PKI. List, SyncerKubeconfig and WorkloadEndpointsOf are
// the inner port's.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <vector>

#include "services/core/control_plane.h"
#include "services/vault/vault_pki.h"
#include "services/vault/vault_pki_issuer.h"
#include "services/vault/vault_secrets_operator.h"
#include "services/vault/vault_workload_access.h"

namespace septa::vault {

// The CA certificate (PEM) the virtual cluster's endpoint serves with.
using ServingCa = std::function<Result<std::string>(const std::string& tenant, const std::string& vcluster)>;

// The workloads' side of the step.
struct WorkloadVaultSetup {
  VaultWorkloadAccess* access = nullptr;  // null: no workload access is configured
  ServingCa serving_ca;
  // The operator's objects in each virtual cluster (with `access` only).
  std::optional<VaultSecretsOperatorOptions> secrets_operator;
};

// Revocations carried to Vault, so that its CRL lists what Septa revoked:
// the serials of a virtual cluster's revoked, unexpired credentials
// (core::CredentialService::RevokedUnexpiredSerials) and the issuer that
// revokes them on the cluster's mount. The virtual API servers do not need
// it (they read vcluster_credentials); Vault's own record and anything that
// reads its CRL do.
struct RevocationsToVault {
  std::function<Result<std::vector<std::string>>(const std::string& tenant, const std::string& vcluster)>
      revoked_serials;
  VaultPkiIssuer* issuer = nullptr;  // null: not carried
};

class VaultControlPlanes final : public core::ControlPlanes {
 public:
  VaultControlPlanes(core::ControlPlanes& inner, VaultPki& pki, WorkloadVaultSetup workloads = {},
                     RevocationsToVault revocations = {})
      : inner_(inner), pki_(pki), workloads_(std::move(workloads)), revocations_(std::move(revocations)) {}

  Result<core::ControlPlaneState> Ensure(const std::string& tenant, const std::string& vcluster) override;
  Status Remove(const std::string& tenant, const std::string& vcluster) override;
  Result<std::vector<std::pair<std::string, std::string>>> List() override { return inner_.List(); }
  Result<std::string> SyncerKubeconfig(const std::string& tenant, const std::string& vcluster) override {
    return inner_.SyncerKubeconfig(tenant, vcluster);
  }
  Result<std::optional<core::WorkloadEndpoints>> WorkloadEndpointsOf(const std::string& tenant,
                                                                     const std::string& vcluster) override {
    return inner_.WorkloadEndpointsOf(tenant, vcluster);
  }

 private:
  Status EnsureOperatorObjects(const std::string& tenant, const std::string& vcluster);
  // Revokes in Vault what Septa revoked and this process has not carried yet.
  Status CarryRevocations(const std::string& tenant, const std::string& vcluster);

  core::ControlPlanes& inner_;
  VaultPki& pki_;
  WorkloadVaultSetup workloads_;
  RevocationsToVault revocations_;
  std::mutex carried_mu_;
  // Per "<tenant>/<vcluster>", the revoked serials Vault has been told of
  // (by this process: a restart tells Vault again, which it takes as a no-op).
  std::map<std::string, std::set<std::string>> carried_;
};

}  // namespace septa::vault
