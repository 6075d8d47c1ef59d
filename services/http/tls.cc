#include "services/http/tls.h"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <boost/asio/ssl/context.hpp>
#include <cctype>
#include <chrono>

#include "services/base/openssl_ptr.h"
#include "services/http/connection.h"

namespace septa::http {

namespace ssl = boost::asio::ssl;

namespace {

std::string OpenSslError(std::string_view what) {
  std::string out(what);
  unsigned long err = ERR_get_error();
  if (err != 0) {
    char buf[256];
    ERR_error_string_n(err, buf, sizeof buf);
    out += ": ";
    out += buf;
  }
  ERR_clear_error();
  return out;
}

using base::BioPtr;
using base::CertPtr;
using base::KeyPtr;
using base::MemoryBio;

std::string BioToString(BIO* bio) {
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<std::size_t>(n));
}

std::string EntryText(X509_NAME_ENTRY* entry) {
  unsigned char* utf8 = nullptr;
  int n = ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(entry));
  if (n < 0) return {};
  std::string out(reinterpret_cast<char*>(utf8), static_cast<std::size_t>(n));
  OPENSSL_free(utf8);
  return out;
}

bool AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (ext == nullptr) return false;
  bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

std::string LowerHexSerial(X509* cert) {
  BIGNUM* bn = ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), nullptr);
  if (bn == nullptr) return {};
  char* hex = BN_bn2hex(bn);
  BN_free(bn);
  if (hex == nullptr) return {};
  std::string out(hex);
  OPENSSL_free(hex);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// Subject, CN, O entries and serial of `cert` (a reference is taken).
PeerIdentity IdentityOf(X509* cert) {
  PeerIdentity id;
  X509_NAME* name = X509_get_subject_name(cert);
  BioPtr bio(BIO_new(BIO_s_mem()));
  X509_NAME_print_ex(bio.get(), name, 0, XN_FLAG_RFC2253);
  id.subject = BioToString(bio.get());
  for (int i = 0; i < X509_NAME_entry_count(name); ++i) {
    X509_NAME_ENTRY* entry = X509_NAME_get_entry(name, i);
    int nid = OBJ_obj2nid(X509_NAME_ENTRY_get_object(entry));
    if (nid == NID_commonName && id.common_name.empty()) id.common_name = EntryText(entry);
    if (nid == NID_organizationName) id.organizations.push_back(EntryText(entry));
  }
  id.serial = LowerHexSerial(cert);
  X509_up_ref(cert);
  id.certificate = std::shared_ptr<x509_st>(cert, X509_free);
  return id;
}

// The handshake's verdict on a client certificate when the handler verifies
// it later: accept (OpenSSL's error stays recorded, so SSL_get_verify_result
// is not X509_V_OK and ExtractPeerIdentity reports no verified peer).
int AcceptUnverified(int /*preverified*/, X509_STORE_CTX* /*ctx*/) { return 1; }

}  // namespace

Result<std::shared_ptr<ssl::context>> MakeServerTlsContext(const TlsServerConfig& config) {
  try {
    auto ctx = std::make_shared<ssl::context>(ssl::context::tls_server);
    ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                     ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 | ssl::context::single_dh_use);
    ctx->use_certificate_chain(boost::asio::buffer(config.certificate_pem));
    ctx->use_private_key(boost::asio::buffer(config.private_key_pem), ssl::context::pem);
    if (config.accept_any_client_certificate) {
      // An empty trust store: nothing verifies at the handshake, so no
      // unverified certificate can pass for a verified one.
      if (!config.client_ca_pem.empty() || config.require_client_certificate) {
        return InvalidArgument(
            "TLS server configuration: accept_any_client_certificate excludes client_ca_pem and "
            "require_client_certificate");
      }
      SSL_CTX_set_verify(ctx->native_handle(), SSL_VERIFY_PEER, AcceptUnverified);
    } else if (!config.client_ca_pem.empty()) {
      ctx->add_certificate_authority(boost::asio::buffer(config.client_ca_pem));
      // Tell clients which CA to pick a certificate for.
      BioPtr bio = MemoryBio(config.client_ca_pem);
      STACK_OF(X509_NAME)* names = sk_X509_NAME_new_null();
      while (X509* ca = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
        sk_X509_NAME_push(names, X509_NAME_dup(X509_get_subject_name(ca)));
        X509_free(ca);
      }
      ERR_clear_error();
      SSL_CTX_set_client_CA_list(ctx->native_handle(), names);
      ctx->set_verify_mode(ssl::verify_peer |
                           (config.require_client_certificate ? ssl::verify_fail_if_no_peer_cert : 0));
    }
    return ctx;
  } catch (const boost::system::system_error& e) {
    return InvalidArgument(std::string("TLS server configuration: ") + e.what());
  }
}

Result<ClientCertificateVerifier> ClientCertificateVerifier::Create(const std::string& ca_pem) {
  BioPtr bio = MemoryBio(ca_pem);
  CertPtr ca(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!ca) return InvalidArgument(OpenSslError("reading the client CA certificate"));
  std::shared_ptr<x509_store_st> store(X509_STORE_new(), X509_STORE_free);
  // The CA is the trust anchor even when it is an intermediate (the Vault
  // issuer's per-cluster CA), as for Go's x509 and so kube-apiserver's
  // --client-ca-file: its root, shared by other clusters, is never trusted.
  if (!store || X509_STORE_add_cert(store.get(), ca.get()) != 1 ||
      X509_STORE_set_flags(store.get(), X509_V_FLAG_PARTIAL_CHAIN) != 1) {
    return Internal(OpenSslError("making the client CA's trust store"));
  }
  return ClientCertificateVerifier(std::move(store));
}

Result<PeerIdentity> ClientCertificateVerifier::Verify(const std::vector<std::shared_ptr<x509_st>>& chain,
                                                       TimePoint now) const {
  if (chain.empty()) return Unauthenticated("no client certificate");
  std::unique_ptr<X509_STORE_CTX, base::OpenSslDeleter<X509_STORE_CTX, X509_STORE_CTX_free>> ctx(X509_STORE_CTX_new());
  // The stack borrows the certificates: sk_X509_free, not sk_X509_pop_free.
  struct FreeStack {
    void operator()(STACK_OF(X509) * stack) const { sk_X509_free(stack); }
  };
  std::unique_ptr<STACK_OF(X509), FreeStack> untrusted(sk_X509_new_null());
  if (!ctx || !untrusted) return Internal(OpenSslError("allocating a verification context"));
  for (std::size_t i = 1; i < chain.size(); ++i) sk_X509_push(untrusted.get(), chain[i].get());
  if (X509_STORE_CTX_init(ctx.get(), store_.get(), chain[0].get(), untrusted.get()) != 1) {
    return Internal(OpenSslError("initializing a verification context"));
  }
  X509_VERIFY_PARAM_set_time(X509_STORE_CTX_get0_param(ctx.get()), std::chrono::system_clock::to_time_t(now));
  X509_STORE_CTX_set_purpose(ctx.get(), X509_PURPOSE_SSL_CLIENT);
  if (X509_verify_cert(ctx.get()) != 1) {
    std::string why = X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx.get()));
    ERR_clear_error();
    return Unauthenticated("client certificate refused: " + why);
  }
  return IdentityOf(chain[0].get());
}

Result<KeyPairPem> IssueCertificate(const CertificateRequest& request, const KeyPairPem* issuer) {
  KeyPtr key;
  if (request.public_key_pem.empty()) {
    key.reset(EVP_EC_gen("P-256"));
    if (!key) return Internal(OpenSslError("generating a P-256 key"));
  } else {
    BioPtr bio = MemoryBio(request.public_key_pem);
    key.reset(PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr));
    if (!key) return InvalidArgument(OpenSslError("reading the public key to certify"));
  }
  CertPtr cert(X509_new());
  X509_set_version(cert.get(), 2);
  unsigned char serial_bytes[16];
  if (RAND_bytes(serial_bytes, sizeof serial_bytes) != 1) return Internal(OpenSslError("making a serial number"));
  serial_bytes[0] &= 0x7f;  // positive
  BIGNUM* serial = BN_bin2bn(serial_bytes, sizeof serial_bytes, nullptr);
  BN_to_ASN1_INTEGER(serial, X509_get_serialNumber(cert.get()));
  BN_free(serial);
  // Absolute times, not offsets from the process clock: an offset is truncated
  // to whole seconds and added to a floored time(), so each certificate came
  // out up to a second early, and a leaf capped at its CA's expiry two.
  if (ASN1_TIME_set(X509_getm_notBefore(cert.get()), std::chrono::system_clock::to_time_t(request.not_before)) ==
          nullptr ||
      ASN1_TIME_set(X509_getm_notAfter(cert.get()), std::chrono::system_clock::to_time_t(request.not_after)) == nullptr)
    return InvalidArgument("certificate validity out of range");
  X509_set_pubkey(cert.get(), key.get());

  X509_NAME* name = X509_get_subject_name(cert.get());
  for (const auto& o : request.organizations) {
    X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8, reinterpret_cast<const unsigned char*>(o.c_str()), -1, -1, 0);
  }
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>(request.common_name.c_str()), -1, -1, 0);

  CertPtr issuer_cert;
  KeyPtr issuer_key;
  if (issuer != nullptr) {
    BioPtr cbio = MemoryBio(issuer->certificate);
    issuer_cert.reset(PEM_read_bio_X509(cbio.get(), nullptr, nullptr, nullptr));
    BioPtr kbio = MemoryBio(issuer->private_key);
    issuer_key.reset(PEM_read_bio_PrivateKey(kbio.get(), nullptr, nullptr, nullptr));
    if (!issuer_cert || !issuer_key) return InvalidArgument(OpenSslError("reading the issuer's PEM"));
    X509_set_issuer_name(cert.get(), X509_get_subject_name(issuer_cert.get()));
  } else {
    X509_set_issuer_name(cert.get(), name);
  }
  X509* signer_cert = issuer_cert ? issuer_cert.get() : cert.get();
  bool ok = true;
  if (request.is_ca) {
    ok = ok && AddExtension(cert.get(), signer_cert, NID_basic_constraints, "critical,CA:TRUE");
    ok = ok && AddExtension(cert.get(), signer_cert, NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature");
  } else {
    ok = ok && AddExtension(cert.get(), signer_cert, NID_basic_constraints, "critical,CA:FALSE");
    ok = ok && AddExtension(cert.get(), signer_cert, NID_key_usage, "critical,digitalSignature,keyEncipherment");
    std::string usages = request.server_auth ? "serverAuth" : "";
    if (request.client_auth) usages += usages.empty() ? "clientAuth" : ",clientAuth";
    if (!usages.empty()) ok = ok && AddExtension(cert.get(), signer_cert, NID_ext_key_usage, usages);
  }
  ok = ok && AddExtension(cert.get(), signer_cert, NID_subject_key_identifier, "hash");
  if (issuer != nullptr) ok = ok && AddExtension(cert.get(), signer_cert, NID_authority_key_identifier, "keyid:always");
  std::string sans;
  for (const auto& d : request.dns_names) sans += (sans.empty() ? "" : ",") + ("DNS:" + d);
  for (const auto& ip : request.ip_addresses) sans += (sans.empty() ? "" : ",") + ("IP:" + ip);
  if (!sans.empty()) ok = ok && AddExtension(cert.get(), signer_cert, NID_subject_alt_name, sans);
  if (!ok) return InvalidArgument(OpenSslError("certificate extensions"));

  if (!issuer_key && !request.public_key_pem.empty())
    return InvalidArgument("a self-signed certificate needs its own key");
  EVP_PKEY* signing_key = issuer_key ? issuer_key.get() : key.get();
  if (X509_sign(cert.get(), signing_key, EVP_sha256()) == 0) return Internal(OpenSslError("signing the certificate"));

  BioPtr cert_out(BIO_new(BIO_s_mem()));
  BioPtr key_out(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(cert_out.get(), cert.get());
  if (request.public_key_pem.empty()) {
    PEM_write_bio_PrivateKey(key_out.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  }
  return KeyPairPem{BioToString(cert_out.get()), BioToString(key_out.get())};
}

namespace internal {

std::optional<PeerIdentity> ExtractPeerIdentity(SSL* ssl) {
  X509* cert = SSL_get0_peer_certificate(ssl);
  if (cert == nullptr || SSL_get_verify_result(ssl) != X509_V_OK) return std::nullopt;
  return IdentityOf(cert);
}

std::vector<std::shared_ptr<x509_st>> ExtractPeerChain(SSL* ssl) {
  std::vector<std::shared_ptr<x509_st>> chain;
  X509* leaf = SSL_get0_peer_certificate(ssl);
  if (leaf == nullptr) return chain;
  auto hold = [&](X509* cert) {
    X509_up_ref(cert);
    chain.emplace_back(cert, X509_free);
  };
  hold(leaf);
  // On a server the stack holds what the client sent after its leaf.
  STACK_OF(X509)* rest = SSL_get_peer_cert_chain(ssl);
  for (int i = 0; rest != nullptr && i < sk_X509_num(rest); ++i) {
    X509* cert = sk_X509_value(rest, i);
    if (X509_cmp(cert, leaf) != 0) hold(cert);
  }
  return chain;
}

}  // namespace internal
}  // namespace septa::http
