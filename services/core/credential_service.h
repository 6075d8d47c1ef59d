// Tenant credentials of the virtual clusters, shared by REST and gRPC:
// kubeconfigs with a client certificate from vault::Issuer (docs/ARCHITECTURE.md
// "Credentials"), their list and their revocation. The certificate is issued
// before the transaction that records it (a row of vcluster_credentials and
// the audit record); if that transaction fails nothing is returned, and the
// private key is never stored or logged.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "services/core/auth.h"
#include "services/core/store.h"
#include "services/vault/issuer.h"

namespace septa::core {

struct KubeconfigRequest {
  std::string ttl;   // Go-style duration ("90s", "1h30m"); empty: the tier's cap
  std::string role;  // "admin", "edit" or "view": required
};

struct IssuedKubeconfig {
  std::string kubeconfig;  // YAML
  VclusterCredential credential;
  bool ttl_capped = false;  // the asked ttl was longer than the tier's cap
};

struct CredentialListing {
  int page_size = 0;  // 1-500; 0: 50
  std::string page_token;
  // >0: only live credentials expiring within this many seconds.
  std::int64_t expiring_within_seconds = 0;
};

struct CredentialPage {
  std::vector<VclusterCredential> credentials;
  std::string next_page_token;  // empty on the last page
};

class CredentialService {
 public:
  // The CA certificate (PEM) that the virtual cluster's API server presents,
  // which the kubeconfig trusts (simulated control planes: their listener's CA).
  using ServerCa = std::function<Result<std::string>(const std::string& tenant, const std::string& vcluster)>;

  CredentialService(Store& store, const Clock& clock, vault::Issuer& issuer, ServerCa server_ca)
      : store_(store), clock_(clock), issuer_(issuer), server_ca_(std::move(server_ca)) {}

  // Owners any role, viewers only "view" (PERMISSION_DENIED naming `role`),
  // admins any; other tenants NOT_FOUND. The virtual cluster must be READY
  // with an endpoint (else FAILED_PRECONDITION naming its state). A ttl above
  // the tenant's tier's credential_ttl_max_seconds is capped, not refused.
  Result<IssuedKubeconfig> IssueKubeconfig(const RequestContext& ctx, const std::string& tenant,
                                           const std::string& vcluster, const KubeconfigRequest& request);
  // The tenant's principals (viewers too) and admins; ordered by
  // (vcluster, serial). vcluster "-" lists every virtual cluster's.
  Result<CredentialPage> List(const RequestContext& ctx, const std::string& tenant, const std::string& vcluster,
                              const CredentialListing& listing);
  // The tenant's owners and admins. Revoking again is OK and keeps the first
  // revocation time (nothing more is written or audited).
  Result<VclusterCredential> Revoke(const RequestContext& ctx, const std::string& tenant, const std::string& vcluster,
                                    const std::string& serial);
  // Septa's own view, no caller's rights: the serials of the virtual
  // cluster's revoked credentials that have not expired yet, which an
  // issuer keeping a revocation list must hold (the Vault issuer's CRL).
  Result<std::vector<std::string>> RevokedUnexpiredSerials(const std::string& tenant, const std::string& vcluster);

 private:
  Store& store_;
  const Clock& clock_;
  vault::Issuer& issuer_;
  ServerCa server_ca_;
};

// The longest ttl a kubeconfig may ask for (before the tier's cap): one year.
inline constexpr std::chrono::hours kMaxCredentialTtl{8760};

// The certificate's CN (Kubernetes' user name) for a principal:
// "<tenant>:<token id>" for a tenant's token, "admin:<token id>" for an
// admin's, so that what the user does inside the virtual cluster names the
// API token that asked for it.
std::string CredentialUser(const Principal& principal);

}  // namespace septa::core
