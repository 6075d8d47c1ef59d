// TLS helpers for septa_http users: a server context from PEM strings, and a
// small certificate issuer (ECDSA P-256) for development CAs and tests.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "services/http/server.h"

namespace boost::asio::ssl {
class context;
}
struct x509_store_st;  // OpenSSL's X509_STORE

namespace septa::http {

struct TlsServerConfig {
  std::string certificate_pem;  // leaf first, then intermediates
  std::string private_key_pem;
  // CAs trusted for client certificates; empty: none are asked for.
  std::string client_ca_pem{};
  // With client_ca_pem: refuse the handshake when the client sends none
  // (otherwise a client may still authenticate another way, e.g. a token).
  bool require_client_certificate = false;
  // Instead of client_ca_pem: ask every client for a certificate and accept
  // any at the handshake, unverified; ConnectionInfo::peer_chain hands it to
  // the handler, which verifies it (ClientCertificateVerifier) once it knows
  // which CA applies: a listener in front of many CAs, routing by path.
  // ConnectionInfo::peer then stays empty, as nothing was verified.
  bool accept_any_client_certificate = false;
};

Result<std::shared_ptr<boost::asio::ssl::context>> MakeServerTlsContext(const TlsServerConfig& config);

struct CertificateRequest {
  std::string common_name;
  std::vector<std::string> organizations;
  std::vector<std::string> dns_names;
  std::vector<std::string> ip_addresses;
  TimePoint not_before;
  TimePoint not_after;
  bool is_ca = false;
  // The public key to certify (PEM), e.g. taken from a CSR; empty: a new
  // P-256 key is made and returned with the certificate.
  std::string public_key_pem{};
  // Extended key usages of a leaf (not a CA) certificate.
  bool server_auth = true;
  bool client_auth = true;
};

struct KeyPairPem {
  std::string certificate;
  std::string private_key;  // empty when the request brought its public key
};

// Verifies client certificates against one CA, at a time the caller gives
// (its injected clock, never the process clock): for a server that accepts
// any certificate at the handshake (accept_any_client_certificate). The CA
// (the first certificate of `ca_pem`) is the trust anchor even when it is
// not self-signed: a chain ending at an intermediate is accepted, and that
// intermediate's issuer is not trusted by it.
class ClientCertificateVerifier {
 public:
  // kInvalidArgument when `ca_pem` holds no certificate.
  static Result<ClientCertificateVerifier> Create(const std::string& ca_pem);
  // The identity of `chain` (leaf first, as ConnectionInfo::peer_chain) if
  // its leaf chains to the CA, every certificate is valid at `now` and the
  // leaf may authenticate a TLS client (extended key usage clientAuth, when
  // it names any); else kUnauthenticated saying why (for logs, not clients).
  Result<PeerIdentity> Verify(const std::vector<std::shared_ptr<x509_st>>& chain, TimePoint now) const;

 private:
  explicit ClientCertificateVerifier(std::shared_ptr<x509_store_st> store) : store_(std::move(store)) {}
  std::shared_ptr<x509_store_st> store_;  // only the CA; thread-safe for verification
};

// Issues a certificate signed by `issuer`, or self-signed when it is null.
Result<KeyPairPem> IssueCertificate(const CertificateRequest& request, const KeyPairPem* issuer);

}  // namespace septa::http
