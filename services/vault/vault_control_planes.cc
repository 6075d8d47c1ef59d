#include "services/vault/vault_control_planes.h"

#include <spdlog/spdlog.h>

#include "services/kube/config.h"
#include "tenancy/virtual_cluster_ref.h"

namespace septa::vault {
namespace {

Status InStep(const Status& status, const std::string& step) {
  return status.ok() ? status : Status(status.code(), step + ": " + status.message());
}

}  // namespace

Result<core::ControlPlaneState> VaultControlPlanes::Ensure(const std::string& tenant, const std::string& vcluster) {
  auto ca = pki_.EnsureVirtualClusterPki(tenant, vcluster, std::nullopt);
  if (!ca.ok()) return InStep(ca.status(), "the virtual cluster's Vault PKI");
  SEPTA_RETURN_IF_ERROR(InStep(CarryRevocations(tenant, vcluster), "revocations to Vault"));
  auto state = inner_.Ensure(tenant, vcluster);
  if (!state.ok() || workloads_.access == nullptr || !state->serving) return state;
  auto serving_ca = workloads_.serving_ca ? workloads_.serving_ca(tenant, vcluster) : Result<std::string>("");
  if (!serving_ca.ok()) return InStep(serving_ca.status(), "the virtual cluster's serving CA");
  SEPTA_RETURN_IF_ERROR(
      InStep(workloads_.access->Ensure(tenant, vcluster, state->endpoint, *serving_ca), "the workloads' Vault access"));
  if (workloads_.secrets_operator) {
    SEPTA_RETURN_IF_ERROR(InStep(EnsureOperatorObjects(tenant, vcluster), "the Vault Secrets Operator's objects"));
  }
  return state;
}

Status VaultControlPlanes::EnsureOperatorObjects(const std::string& tenant, const std::string& vcluster) {
  auto kubeconfig = inner_.SyncerKubeconfig(tenant, vcluster);
  SEPTA_RETURN_IF_ERROR(kubeconfig);
  auto config = kube::ParseKubeconfig(*kubeconfig);
  SEPTA_RETURN_IF_ERROR(config);
  kube::ClientOptions options;
  options.max_retries = 1;  // the provisioner retries the whole step with backoff
  auto client = kube::Client::Create(*std::move(config), options);
  SEPTA_RETURN_IF_ERROR(client);
  auto mount = workloads_.access->AuthMountOf(tenant, vcluster);
  SEPTA_RETURN_IF_ERROR(mount);
  return EnsureKeptObjects(
      **client, VaultSecretsOperatorObjects(*workloads_.secrets_operator, *mount, workloads_.access->options().role));
}

Status VaultControlPlanes::CarryRevocations(const std::string& tenant, const std::string& vcluster) {
  if (revocations_.issuer == nullptr || !revocations_.revoked_serials) return Status::Ok();
  auto revoked = revocations_.revoked_serials(tenant, vcluster);
  SEPTA_RETURN_IF_ERROR(revoked);
  const std::string key = tenancy::VirtualClusterText(tenant, vcluster);
  std::set<std::string> carried;
  {
    std::lock_guard lock(carried_mu_);
    carried = carried_[key];
  }
  std::set<std::string> now_carried;
  Status result = Status::Ok();
  for (const std::string& serial : *revoked) {
    if (carried.contains(serial)) {
      now_carried.insert(serial);  // expired ones fall out of the set with the list
      continue;
    }
    auto revoked_at = revocations_.issuer->Revoke(tenant, vcluster, serial);
    // Vault answers 400 for a serial its mount never issued (one from before
    // the mount was made again): there is nothing to revoke.
    if (revoked_at.ok() || revoked_at.status().code() == Code::kInvalidArgument) {
      if (!revoked_at.ok()) {
        spdlog::warn("vault: {} is not on {}'s mount: {}", serial, key, revoked_at.status().message());
      }
      now_carried.insert(serial);
    } else if (result.ok()) {
      result = revoked_at.status();  // the rest still go; this one is tried at the next pass
    }
  }
  std::lock_guard lock(carried_mu_);
  carried_[key] = std::move(now_carried);
  return result;
}

Status VaultControlPlanes::Remove(const std::string& tenant, const std::string& vcluster) {
  SEPTA_RETURN_IF_ERROR(inner_.Remove(tenant, vcluster));
  if (workloads_.access != nullptr) {
    SEPTA_RETURN_IF_ERROR(InStep(workloads_.access->Remove(tenant, vcluster), "the workloads' Vault access"));
  }
  SEPTA_RETURN_IF_ERROR(InStep(pki_.RemoveVirtualClusterPki(tenant, vcluster), "the virtual cluster's Vault PKI"));
  std::lock_guard lock(carried_mu_);
  carried_.erase(tenancy::VirtualClusterText(tenant, vcluster));
  return Status::Ok();
}

}  // namespace septa::vault
