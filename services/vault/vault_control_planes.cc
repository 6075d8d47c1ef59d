#include "services/vault/vault_control_planes.h"

namespace septa::vault {
namespace {

Status InStep(const Status& status, const std::string& step) {
  return status.ok() ? status : Status(status.code(), step + ": " + status.message());
}

}  // namespace

Result<core::ControlPlaneState> VaultControlPlanes::Ensure(const std::string& tenant, const std::string& vcluster) {
  auto ca = pki_.EnsureVirtualClusterPki(tenant, vcluster, std::nullopt);
  if (!ca.ok()) return InStep(ca.status(), "the virtual cluster's Vault PKI");
  auto state = inner_.Ensure(tenant, vcluster);
  if (!state.ok() || workloads_ == nullptr || !state->serving) return state;
  auto serving_ca = serving_ca_ ? serving_ca_(tenant, vcluster) : Result<std::string>(std::string());
  if (!serving_ca.ok()) return InStep(serving_ca.status(), "the virtual cluster's serving CA");
  SEPTA_RETURN_IF_ERROR(
      InStep(workloads_->Ensure(tenant, vcluster, state->endpoint, *serving_ca), "the workloads' Vault access"));
  return state;
}

Status VaultControlPlanes::Remove(const std::string& tenant, const std::string& vcluster) {
  SEPTA_RETURN_IF_ERROR(inner_.Remove(tenant, vcluster));
  if (workloads_ != nullptr) {
    SEPTA_RETURN_IF_ERROR(InStep(workloads_->Remove(tenant, vcluster), "the workloads' Vault access"));
  }
  return InStep(pki_.RemoveVirtualClusterPki(tenant, vcluster), "the virtual cluster's Vault PKI");
}

}  // namespace septa::vault
