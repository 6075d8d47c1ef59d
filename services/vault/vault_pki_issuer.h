// The Vault Issuer: client certificates from the virtual cluster's own
// intermediate mount (vault_pki.h), `POST <mount>/issue/<role>` with the
// credential's role (admin/edit/view: the PKI role fixes the O), CN = the
// user, the common name kept out of the SANs. Before the first issue of a
// mount in this process, and whenever the tier's cap it is called with
// differs from the one last written, it ensures the mount's roles with
// max_ttl = that cap: Vault then caps a longer ttl itself and says so in a
// warning, which becomes ttl_capped. Vault's times are the certificate's
// (Vault back-dates notBefore by 30 s); the serial is Vault's, in the form
// issuer.h gives. Sealed, standby and rate-limited Vaults are UNAVAILABLE
// after the client's retries; no token or key is ever in a message.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <string>

#include "services/vault/issuer.h"
#include "services/vault/vault_pki.h"

namespace septa::vault {

class VaultPkiIssuer final : public Issuer {
 public:
  explicit VaultPkiIssuer(VaultPki& pki) : pki_(pki) {}

  // NOT_FOUND when the virtual cluster has no mount or CA in Vault.
  Result<ClientCertificate> IssueClientCertificate(const ClientCertificateRequest& request) override;
  // Revokes the certificate `serial` (lower-case hex, as issued) on the
  // virtual cluster's mount, so Vault's CRL lists it; the revocation time.
  // (The virtual API servers read revocations from vcluster_credentials.)
  Result<TimePoint> Revoke(const std::string& tenant, const std::string& vcluster, const std::string& serial);

 private:
  VaultPki& pki_;
  std::mutex mu_;
  std::map<std::string, std::chrono::seconds> roles_max_ttl_;  // by mount: as this process last ensured them
};

// Vault's serial ("39:dd:2e:...", or with '-') in issuer.h's form, and back.
std::string SerialFromVault(const std::string& vault_serial);
std::string SerialToVault(const std::string& serial);

}  // namespace septa::vault
