// The X.509 pieces of vaultsim's PKI engine that services/http/tls.h's
// IssueCertificate (which builds and signs every certificate) does not do:
// CSRs, reading certificates back, and CRLs.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "common/time_point.h"
#include "services/http/tls.h"

namespace septa::vaultsim {

struct CertificateFacts {
  std::string serial;  // Vault's form: lowercase hex pairs joined by ':'
  std::string common_name;
  TimePoint not_after;
};

Result<CertificateFacts> ReadCertificate(const std::string& pem);
Result<std::string> CertificateDer(const std::string& pem);

// The PEM blocks of a bundle, in order.
std::vector<std::string> SplitPem(const std::string& bundle);

struct Csr {
  std::string pem;
  std::string private_key_pem;
};
// A new P-256 key and a CSR for it with this CN.
Result<Csr> MakeCsr(const std::string& common_name);

struct CsrFacts {
  std::string common_name;
  std::string public_key_pem;
};
Result<CsrFacts> ReadCsr(const std::string& pem);

struct RevokedSerial {
  std::string serial;  // Vault's form
  TimePoint revoked_at;
};
// A CRL (DER) signed by `ca`, valid from `now` until `next_update`.
Result<std::string> MakeCrl(const http::KeyPairPem& ca, const std::vector<RevokedSerial>& revoked, TimePoint now,
                            TimePoint next_update);
std::string CrlPem(const std::string& der);

}  // namespace septa::vaultsim
