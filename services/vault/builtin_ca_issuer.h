// The default Issuer: each virtual cluster's own CA (ECDSA P-256, made with
// its control plane and stored with it in core::VirtualObjectStore, the key
// wrapped at rest by SealedVirtualObjectStore) signs the client
// certificates. Certificates: CN = user, one O per group, a 128-bit serial
// (top bit clear) from the injected RandomSource, validity from the injected
// clock's now to now + min(ttl, max_ttl), key usage digitalSignature,
// extended key usage clientAuth, no subject alternative names. The new
// private key (P-256) is returned and forgotten.
#pragma once

#include <map>
#include <memory>
#include <mutex>

#include "common/clock.h"
#include "services/base/openssl_ptr.h"
#include "services/core/virtual_object_store.h"
#include "services/vault/issuer.h"

namespace septa::vault {

class BuiltinCaIssuer final : public Issuer {
 public:
  // How many virtual clusters' decoded CAs are kept; past it the cache
  // starts again empty.
  static constexpr std::size_t kCachedCas = 4096;

  // `store` must hand out CA keys in clear: the sealed store in septad.
  BuiltinCaIssuer(core::VirtualObjectStore& store, const Clock& clock, RandomSource& random)
      : store_(store), clock_(clock), random_(random) {}

  // Thread-safe.
  Result<ClientCertificate> IssueClientCertificate(const ClientCertificateRequest& request) override;

 private:
  // A virtual cluster's CA as stored (PEM) and decoded. OpenSSL 3 decodes a
  // private key PEM through its provider decoders, which cost more than the
  // signature itself, so each CA is decoded once and then shared: signing
  // and reading through one EVP_PKEY and X509 from many threads is what an
  // SSL_CTX's key and certificate see on every TLS server.
  struct DecodedCa {
    std::string certificate_pem, private_key_pem;
    base::CertPtr certificate;
    base::KeyPtr private_key;
  };
  // The cached decoding of `stored` if it is still the stored CA (a virtual
  // cluster deleted and created again has another), else a new one.
  Result<std::shared_ptr<const DecodedCa>> Decoded(const core::VirtualClusterKey& key,
                                                   const core::StoredControlPlane& stored);

  core::VirtualObjectStore& store_;
  const Clock& clock_;
  RandomSource& random_;
  std::mutex mu_;
  std::map<core::VirtualClusterKey, std::shared_ptr<const DecodedCa>> decoded_;  // guarded by mu_
};

}  // namespace septa::vault
