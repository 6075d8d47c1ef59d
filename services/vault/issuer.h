// The one interface through which Septa issues client certificates for the
// virtual clusters' API servers (../shared/docs/DESIGN.md §5). Two
// implementations: BuiltinCaIssuer (default: each virtual cluster's own CA,
// its key encrypted at rest) and VaultPkiIssuer (vault_pki_issuer.h: each
// virtual cluster's intermediate in a Vault septad configures).
//
// Header only and independent of every other Septa library but common/, so
// the use cases in services/core can hold an Issuer without linking one.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/time_point.h"

namespace septa::vault {

struct ClientCertificateRequest {
  std::string tenant;
  std::string vcluster;
  std::string user;                 // the certificate's CN: Kubernetes' user name
  std::vector<std::string> groups;  // its O entries: Kubernetes' groups
  // The role the groups come from ("admin", "edit", "view"): a Vault PKI
  // role fixes O itself, so the Vault issuer picks its PKI role by it.
  std::string role;
  std::chrono::seconds ttl{0};      // requested lifetime, > 0
  std::chrono::seconds max_ttl{0};  // the tier's cap, > 0; a longer ttl is capped
};

struct ClientCertificate {
  std::string certificate_pem;
  std::string private_key_pem;  // returned once; no issuer keeps it
  std::string ca_certificate_pem;
  std::string serial;  // lower-case hex without separators, as kubectl and openssl print it
  TimePoint not_before;
  TimePoint not_after;
  bool ttl_capped = false;  // the requested ttl was longer than max_ttl
};

class Issuer {
 public:
  virtual ~Issuer() = default;
  // NOT_FOUND when the virtual cluster has no CA (not provisioned yet or gone).
  virtual Result<ClientCertificate> IssueClientCertificate(const ClientCertificateRequest& request) = 0;
};

}  // namespace septa::vault
