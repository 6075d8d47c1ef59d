#include "services/vault/vault_pki_control_planes.h"

namespace septa::vault {

Result<core::ControlPlaneState> VaultPkiControlPlanes::Ensure(const std::string& tenant, const std::string& vcluster) {
  auto ca = pki_.EnsureVirtualClusterPki(tenant, vcluster, std::nullopt);
  if (!ca.ok()) return Status(ca.status().code(), "the virtual cluster's Vault PKI: " + ca.status().message());
  return inner_.Ensure(tenant, vcluster);
}

Status VaultPkiControlPlanes::Remove(const std::string& tenant, const std::string& vcluster) {
  SEPTA_RETURN_IF_ERROR(inner_.Remove(tenant, vcluster));
  Status removed = pki_.RemoveVirtualClusterPki(tenant, vcluster);
  if (!removed.ok()) return Status(removed.code(), "the virtual cluster's Vault PKI: " + removed.message());
  return Status::Ok();
}

}  // namespace septa::vault
