// Per-tenant Vault access for workloads (docs/ARCHITECTURE.md "Credentials",
// ../shared/docs/DESIGN.md §5): a pod in a tenant's virtual cluster logs in
// to Vault with its own service account token and gets the tenant's paths
// only, without the tenant touching Vault's configuration. Per virtual
// cluster Septa keeps in Vault:
// - a Kubernetes auth method, VirtualClusterAuthMount(), whose
//   kubernetes_host is the virtual cluster's API endpoint and whose CA is
//   the one serving it. No token_reviewer_jwt: each login's own JWT asks
//   for its TokenReview (the virtual cluster binds its service accounts to
//   system:auth-delegator), so no long-lived reviewer token exists to leak
//   or rotate; disable_local_ca_jwt, so a Vault running in a host pod never
//   reviews with the host's token instead;
// - on it one role (`role`, "workloads") bound to every service account of
//   every namespace of that cluster, with the policy below and `token_ttl`;
// - a policy, WorkloadPolicyName(), rendered from `policy_template` with
//   {tenant} and {vcluster} replaced: by default read access to
//   secret/data/tenants/<tenant>/* (KV v2). The admin widens it (dynamic
//   database or cloud credentials) by configuring the template.
// One auth method per virtual cluster because Vault's Kubernetes auth
// checks tokens against one API server per mount. Ensure reads each piece
// and writes only what is missing or different; Remove disables the auth
// method first (Vault then revokes every token it issued), then deletes the
// policy, so a run stopped anywhere is finished by the next.
#pragma once

#include <chrono>
#include <string>

#include "common/status.h"
#include "services/core/host_namespaces.h"
#include "services/vault/vault_client.h"

namespace septa::vault {

inline constexpr std::string_view kDefaultWorkloadPolicy =
    "path \"secret/data/tenants/{tenant}/*\" { capabilities = [\"read\"] }\n"
    "path \"secret/metadata/tenants/{tenant}/*\" { capabilities = [\"read\", \"list\"] }\n";

struct VaultWorkloadAccessOptions {
  std::string role = "workloads";
  std::chrono::seconds token_ttl{3600};
  std::string policy_template{kDefaultWorkloadPolicy};
};

// "<host namespace>-kubernetes" of the host namespace stored with the
// virtual cluster (tenancy/host/names.h), one path segment.
std::string VirtualClusterAuthMount(std::string_view host_namespace);
// "<host namespace>-workloads".
std::string WorkloadPolicyName(std::string_view host_namespace);
// The template with every {tenant} and {vcluster} replaced; INVALID_ARGUMENT
// naming `field` for another {placeholder} or an empty template.
Result<std::string> RenderWorkloadPolicy(const std::string& policy_template, const std::string& tenant,
                                         const std::string& vcluster, const std::string& field = "policy_template");

class VaultWorkloadAccess {
 public:
  // `host_namespace_of`: each virtual cluster's stored host namespace, which its mount and policy are named after.
  VaultWorkloadAccess(VaultClient& client, VaultWorkloadAccessOptions options, core::HostNamespaceOf host_namespace_of)
      : client_(client), options_(std::move(options)), host_namespace_of_(std::move(host_namespace_of)) {}

  // VirtualClusterAuthMount of the virtual cluster's stored host namespace.
  Result<std::string> AuthMountOf(const std::string& tenant, const std::string& vcluster) const;

  // The policy, the auth method, its config and its role for the virtual
  // cluster served at `kubernetes_host` with the CA `kubernetes_ca_pem`.
  Status Ensure(const std::string& tenant, const std::string& vcluster, const std::string& kubernetes_host,
                const std::string& kubernetes_ca_pem);
  // Ok when already gone.
  Status Remove(const std::string& tenant, const std::string& vcluster);

  const VaultWorkloadAccessOptions& options() const { return options_; }

 private:
  Status EnsurePolicy(const std::string& name, const std::string& hcl);
  Status EnsureConfig(const std::string& mount, const std::string& kubernetes_host,
                      const std::string& kubernetes_ca_pem);
  Status EnsureRole(const std::string& mount, const std::string& policy);

  VaultClient& client_;
  VaultWorkloadAccessOptions options_;
  core::HostNamespaceOf host_namespace_of_;
};

}  // namespace septa::vault
