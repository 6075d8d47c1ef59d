// Septa's own configuration of a Vault for client certificates
// (docs/ARCHITECTURE.md "Credentials", the Vault issuer). Layout:
// - one root mount (`root_mount`, "septa-pki") holding Septa's root CA;
// - per virtual cluster one PKI mount, VirtualClusterPkiMount() of its
//   stored host namespace: an
//   intermediate CA signed by the root, the CA the virtual cluster's API
//   server trusts (it alone: another virtual cluster's intermediate has the
//   same root, so trusting the root would let its certificates in);
// - on that mount one role per credential role (tenancy::kVclusterRoles:
//   admin, edit, view), whose `organization` is the role's group, max_ttl
//   the tenant's tier cap, allow_any_name, enforce_hostnames off (the CN is
//   a Kubernetes user name), client_flag on, server_flag off, EC P-256;
// - per tenant a policy, TenantPolicyName(), over its virtual clusters'
//   mounts (read the CA and CRL, issue), for a tenant's own tooling; Septa
//   binds it to nothing, and never to workloads (vault_workload_access.h:
//   a pod issuing an admin kubeconfig of its own cluster would escalate).
// Every Ensure step reads what exists and writes only what is missing or
// different, so running it again after any failure finishes the job; a
// run that stopped between generating and installing an intermediate
// leaves a pending key that the next run replaces.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "common/status.h"
#include "services/core/host_namespaces.h"
#include "services/vault/vault_client.h"

namespace septa::vault {

struct VaultPkiOptions {
  std::string root_mount = "septa-pki";
  std::chrono::seconds root_ttl{10 * 8760 * 3600};         // 10 years
  std::chrono::seconds intermediate_ttl{5 * 8760 * 3600};  // 5 years: never shorter than a tier cap
};

// The PKI mount of the virtual cluster whose host namespace is
// `host_namespace` (the one stored with it: unique, at most 63 characters,
// tenancy/host/names.h) with "-pki", one path segment.
std::string VirtualClusterPkiMount(std::string_view host_namespace);
// "septa-tenant-<tenant>".
std::string TenantPolicyName(const std::string& tenant);
// The first certificate of a PEM bundle (with its END line), empty when there is none.
std::string FirstPemCertificate(const std::string& pem);

class VaultPki {
 public:
  // `host_namespace_of`: each virtual cluster's stored host namespace, which its mount is named after.
  VaultPki(VaultClient& client, VaultPkiOptions options, core::HostNamespaceOf host_namespace_of)
      : client_(client), options_(std::move(options)), host_namespace_of_(std::move(host_namespace_of)) {}

  // VirtualClusterPkiMount of the virtual cluster's stored host namespace.
  Result<std::string> MountOf(const std::string& tenant, const std::string& vcluster) const;

  // The steps of EnsureVirtualClusterPki, in order; each checks what exists.
  Status EnsureRoot();
  // The mount and its intermediate CA (after EnsureRoot); returns the
  // intermediate's certificate alone.
  Result<std::string> EnsureVirtualClusterCa(const std::string& tenant, const std::string& vcluster);
  // The admin/edit/view roles with `max_ttl`, written where missing or different.
  Status EnsureRoles(const std::string& tenant, const std::string& vcluster, std::chrono::seconds max_ttl);
  // The tenant's policy, with this virtual cluster's mount in it.
  Status EnsureTenantPolicy(const std::string& tenant, const std::string& vcluster);

  // Every step; the roles only when `max_ttl` is given (the issuer writes
  // them with the tier's cap it is called with). Returns the intermediate.
  Result<std::string> EnsureVirtualClusterPki(const std::string& tenant, const std::string& vcluster,
                                              std::optional<std::chrono::seconds> max_ttl);
  // Removes the virtual cluster's mount (its CA, roles and certificates)
  // and its stanza of the tenant's policy (the policy when it was the last);
  // Ok when already gone.
  Status RemoveVirtualClusterPki(const std::string& tenant, const std::string& vcluster);

  // The intermediate CA certificate of the virtual cluster; NOT_FOUND
  // before EnsureVirtualClusterCa made it.
  Result<std::string> ClientCaPem(const std::string& tenant, const std::string& vcluster);

  VaultClient& client() { return client_; }

 private:
  VaultClient& client_;
  VaultPkiOptions options_;
  core::HostNamespaceOf host_namespace_of_;
};

}  // namespace septa::vault
