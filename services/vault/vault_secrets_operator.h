// The Vault Secrets Operator's objects in each virtual cluster (DESIGN.md
// §5, ../shared/docs/PROTOCOL-FACTS.md "In-cluster consumers"), so that a
// tenant who runs the operator in its virtual cluster gets Vault secrets
// with a `VaultStaticSecret` or `VaultDynamicSecret` and nothing else: no
// Vault address, auth mount or role to know.
//
// In the operator's namespace (`namespace_`, the chart's usual
// vault-secrets-operator-system) Septa keeps the operator's defaults, which
// it uses for every secret that names no `vaultAuthRef`:
// - `VaultConnection` `default`: `spec.address` the Vault as pods reach it,
//   and with a CA, `caCertSecretRef` to the Secret `vault-ca` (`ca.crt`);
// - `VaultAuth` `default`: `method: kubernetes` at the virtual cluster's
//   auth method (vault_workload_access.h), role `workloads`, the secret's
//   namespace's `default` service account, every namespace allowed; no
//   token audiences, so the token is for the virtual API server, which is
//   what lets it review itself.
// The CustomResourceDefinitions of the two kinds are created when missing,
// never changed: the operator's own chart may have installed richer ones.
// The objects are created when missing and written back when their spec
// (the Secret's data) differs, so a tenant's edit is undone at the next
// reconcile and a pass over converged objects writes nothing.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "services/kube/client.h"

namespace septa::vault {

struct VaultSecretsOperatorOptions {
  std::string vault_address;  // as the virtual cluster's pods reach it
  std::string vault_ca_pem;   // empty: the operator's system trust
  std::string operator_namespace = "vault-secrets-operator-system";
};

// One object Septa keeps in a virtual cluster, and its API resource.
struct KeptObject {
  kube::Resource resource;
  nlohmann::json object;
  bool create_only = false;  // a CRD: created when missing, never changed
};

// What Septa keeps in a virtual cluster whose workloads log in at Vault's
// auth method `auth_mount` (VaultWorkloadAccess::AuthMountOf), in creation
// order (definitions, namespace, CA Secret, connection, auth).
std::vector<KeptObject> VaultSecretsOperatorObjects(const VaultSecretsOperatorOptions& options,
                                                    const std::string& auth_mount, const std::string& workload_role);

// Creates what is missing and writes back what differs, through `client`
// on the virtual cluster's API.
Status EnsureKeptObjects(kube::Client& client, const std::vector<KeptObject>& objects);

}  // namespace septa::vault
