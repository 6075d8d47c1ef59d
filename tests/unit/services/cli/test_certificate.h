// Client certificates for the exec credential tests: a P-256 key and a
// self-signed certificate with the validity asked for (tests only).
#pragma once

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <chrono>
#include <string>

#include "common/time_point.h"
#include "services/base/openssl_ptr.h"

namespace septa::test {

struct TestKeyPair {
  std::string certificate_pem;
  std::string private_key_pem;
};

inline TestKeyPair MakeTestCertificate(TimePoint not_before, TimePoint not_after, long serial = 1) {
  base::KeyPtr key(EVP_EC_gen("P-256"));
  base::CertPtr cert(X509_new());
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial);
  ASN1_TIME_set(X509_getm_notBefore(cert.get()), std::chrono::system_clock::to_time_t(not_before));
  ASN1_TIME_set(X509_getm_notAfter(cert.get()), std::chrono::system_clock::to_time_t(not_after));
  X509_set_pubkey(cert.get(), key.get());
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("acme:test"), -1, -1, 0);
  X509_set_issuer_name(cert.get(), name);
  X509_sign(cert.get(), key.get(), EVP_sha256());
  base::BioPtr cert_out(BIO_new(BIO_s_mem()));
  base::BioPtr key_out(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(cert_out.get(), cert.get());
  PEM_write_bio_PrivateKey(key_out.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  return {base::BioText(cert_out.get()), base::BioText(key_out.get())};
}

}  // namespace septa::test
