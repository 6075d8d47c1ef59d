// The default Issuer: each virtual cluster's own CA (ECDSA P-256, made with
// its control plane and stored with it in core::VirtualObjectStore, the key
// wrapped at rest by SealedVirtualObjectStore) signs the client
// certificates. Certificates: CN = user, one O per group, a 128-bit serial
// (top bit clear) from the injected RandomSource, validity from the injected
// clock's now to now + min(ttl, max_ttl), key usage digitalSignature,
// extended key usage clientAuth, no subject alternative names. The new
// private key (P-256) is returned and forgotten.
#pragma once

#include "common/clock.h"
#include "services/core/virtual_object_store.h"
#include "services/vault/issuer.h"

namespace septa::vault {

class BuiltinCaIssuer final : public Issuer {
 public:
  // `store` must hand out CA keys in clear: the sealed store in septad.
  BuiltinCaIssuer(core::VirtualObjectStore& store, const Clock& clock, RandomSource& random)
      : store_(store), clock_(clock), random_(random) {}

  Result<ClientCertificate> IssueClientCertificate(const ClientCertificateRequest& request) override;

 private:
  core::VirtualObjectStore& store_;
  const Clock& clock_;
  RandomSource& random_;
};

}  // namespace septa::vault
