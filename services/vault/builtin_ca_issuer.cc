#include "services/vault/builtin_ca_issuer.h"

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <cctype>
#include <memory>

#include "services/base/openssl_ptr.h"
#include "tenancy/virtual_cluster_ref.h"

namespace septa::vault {
namespace {

constexpr std::size_t kSerialBytes = 16;

using base::BioPtr;
using base::BioText;
using base::BnPtr;
using base::CertPtr;
using base::KeyPtr;

bool AddExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr) return false;
  const bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

bool AddName(X509_NAME* name, const char* field, const std::string& value) {
  return X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8, reinterpret_cast<const unsigned char*>(value.c_str()),
                                    -1, -1, 0) == 1;
}

std::string LowerHex(const BIGNUM* bn) {
  char* hex = BN_bn2hex(bn);
  std::string out(hex);
  OPENSSL_free(hex);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

Status OpenSslFailure(const std::string& what) {
  ERR_clear_error();
  return Internal("the built-in CA failed " + what);
}

}  // namespace

Result<std::shared_ptr<const BuiltinCaIssuer::DecodedCa>> BuiltinCaIssuer::Decoded(
    const core::VirtualClusterKey& key, const core::StoredControlPlane& stored) {
  {
    std::lock_guard lock(mu_);
    auto it = decoded_.find(key);
    if (it != decoded_.end() && it->second->certificate_pem == stored.ca_certificate &&
        it->second->private_key_pem == stored.ca_private_key) {
      return it->second;
    }
  }
  auto ca = std::make_shared<DecodedCa>();
  ca->certificate_pem = stored.ca_certificate;
  ca->private_key_pem = stored.ca_private_key;
  BioPtr cert_bio = base::MemoryBio(ca->certificate_pem);
  BioPtr key_bio = base::MemoryBio(ca->private_key_pem);
  ca->certificate.reset(PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr));
  ca->private_key.reset(PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr));
  if (!ca->certificate || !ca->private_key) return OpenSslFailure("reading the virtual cluster's CA");
  std::lock_guard lock(mu_);
  if (decoded_.size() >= kCachedCas) decoded_.clear();
  decoded_[key] = ca;
  return std::shared_ptr<const DecodedCa>(std::move(ca));
}

Result<ClientCertificate> BuiltinCaIssuer::IssueClientCertificate(const ClientCertificateRequest& request) {
  if (request.ttl.count() <= 0) return InvalidField("ttl", "must be positive");
  if (request.max_ttl.count() <= 0) return InvalidField("max_ttl", "must be positive");
  const core::VirtualClusterKey cluster{request.tenant, request.vcluster};
  auto stored = store_.GetControlPlane(cluster);
  SEPTA_RETURN_IF_ERROR(stored);
  if (!*stored) {
    return NotFound("virtual cluster " + tenancy::VirtualClusterText(request.tenant, request.vcluster) +
                    " has no control plane yet");
  }
  auto ca = Decoded(cluster, **stored);
  SEPTA_RETURN_IF_ERROR(ca);
  X509* ca_cert = (*ca)->certificate.get();
  EVP_PKEY* ca_key = (*ca)->private_key.get();

  ClientCertificate out;
  out.ttl_capped = request.ttl > request.max_ttl;
  const std::chrono::seconds lifetime = std::min(request.ttl, request.max_ttl);
  out.not_before = std::chrono::time_point_cast<std::chrono::seconds>(clock_.Now());
  out.not_after = out.not_before + lifetime;

  std::uint8_t serial_bytes[kSerialBytes];
  SEPTA_RETURN_IF_ERROR(random_.Fill(serial_bytes));
  serial_bytes[0] &= 0x7f;  // a positive INTEGER
  serial_bytes[0] |= 0x40;  // ... of exactly 127 bits, so its hex has a fixed length
  BnPtr serial(BN_bin2bn(serial_bytes, sizeof serial_bytes, nullptr));

  KeyPtr key(EVP_EC_gen("P-256"));
  CertPtr cert(X509_new());
  if (!key || !cert || !serial) return OpenSslFailure("making a key");
  X509_NAME* subject = X509_get_subject_name(cert.get());
  bool ok = X509_set_version(cert.get(), 2) == 1 &&
            BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert.get())) != nullptr &&
            ASN1_TIME_set(X509_getm_notBefore(cert.get()), std::chrono::system_clock::to_time_t(out.not_before)) &&
            ASN1_TIME_set(X509_getm_notAfter(cert.get()), std::chrono::system_clock::to_time_t(out.not_after)) &&
            X509_set_pubkey(cert.get(), key.get()) == 1;
  for (const auto& group : request.groups) ok = ok && AddName(subject, "O", group);
  ok = ok && AddName(subject, "CN", request.user) &&
       X509_set_issuer_name(cert.get(), X509_get_subject_name(ca_cert)) == 1 &&
       AddExtension(cert.get(), ca_cert, NID_basic_constraints, "critical,CA:FALSE") &&
       AddExtension(cert.get(), ca_cert, NID_key_usage, "critical,digitalSignature") &&
       AddExtension(cert.get(), ca_cert, NID_ext_key_usage, "clientAuth") &&
       AddExtension(cert.get(), ca_cert, NID_authority_key_identifier, "keyid:always") &&
       X509_sign(cert.get(), ca_key, EVP_sha256()) != 0;
  if (!ok) return OpenSslFailure("signing a client certificate");

  BioPtr cert_out(BIO_new(BIO_s_mem()));
  BioPtr key_out(BIO_new(BIO_s_mem()));
  if (PEM_write_bio_X509(cert_out.get(), cert.get()) != 1 ||
      PEM_write_bio_PrivateKey(key_out.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    return OpenSslFailure("writing PEM");
  }
  out.certificate_pem = BioText(cert_out.get());
  out.private_key_pem = BioText(key_out.get());
  out.ca_certificate_pem = (*stored)->ca_certificate;
  out.serial = LowerHex(serial.get());
  return out;
}

}  // namespace septa::vault
