#include "services/vaultsim/x509.h"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <memory>

#include "services/base/base64.h"
#include "services/base/openssl_ptr.h"

namespace septa::vaultsim {
namespace {

using base::BioPtr;
using base::BioText;
using base::CertPtr;
using base::CrlPtr;
using base::KeyPtr;
using base::MemoryBio;
using base::ReqPtr;

BioPtr NewBio() { return BioPtr(BIO_new(BIO_s_mem())); }

Status OpenSslFailure(Code code, const std::string& what) {
  std::string out = what;
  if (unsigned long err = ERR_get_error(); err != 0) {
    char buf[256];
    ERR_error_string_n(err, buf, sizeof buf);
    out += std::string(": ") + buf;
  }
  ERR_clear_error();
  return Status(code, out);
}

std::string CommonName(X509_NAME* name) {
  int i = X509_NAME_get_index_by_NID(name, NID_commonName, -1);
  if (i < 0) return {};
  unsigned char* utf8 = nullptr;
  int n = ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, i)));
  if (n < 0) return {};
  std::string out(reinterpret_cast<char*>(utf8), static_cast<std::size_t>(n));
  OPENSSL_free(utf8);
  return out;
}

std::string SerialText(const ASN1_INTEGER* serial) {
  std::unique_ptr<BIGNUM, base::OpenSslDeleter<BIGNUM, BN_free>> bn(ASN1_INTEGER_to_BN(serial, nullptr));
  std::string bytes(static_cast<std::size_t>(BN_num_bytes(bn.get())), '\0');
  BN_bn2bin(bn.get(), reinterpret_cast<unsigned char*>(bytes.data()));
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char b : bytes) {
    if (!out.empty()) out += ':';
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

ASN1_INTEGER* SerialInteger(const std::string& text) {
  std::string hex;
  for (char c : text) {
    if (c != ':' && c != '-') hex += c;
  }
  BIGNUM* bn = nullptr;
  if (BN_hex2bn(&bn, hex.c_str()) == 0) return nullptr;
  ASN1_INTEGER* out = BN_to_ASN1_INTEGER(bn, nullptr);
  BN_free(bn);
  return out;
}

}  // namespace

Result<CertificateFacts> ReadCertificate(const std::string& pem) {
  BioPtr bio = MemoryBio(pem);
  CertPtr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!cert) return OpenSslFailure(Code::kInvalidArgument, "certificate is not a PEM X.509 certificate");
  CertificateFacts facts;
  facts.serial = SerialText(X509_get0_serialNumber(cert.get()));
  facts.common_name = CommonName(X509_get_subject_name(cert.get()));
  struct tm tm {};
  ASN1_TIME_to_tm(X509_get0_notAfter(cert.get()), &tm);
  facts.not_after = std::chrono::system_clock::from_time_t(timegm(&tm));
  return facts;
}

Result<std::string> CertificateDer(const std::string& pem) {
  BioPtr bio = MemoryBio(pem);
  CertPtr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!cert) return OpenSslFailure(Code::kInvalidArgument, "certificate is not a PEM X.509 certificate");
  unsigned char* der = nullptr;
  int n = i2d_X509(cert.get(), &der);
  if (n < 0) return OpenSslFailure(Code::kInternal, "encoding the certificate");
  std::string out(reinterpret_cast<char*>(der), static_cast<std::size_t>(n));
  OPENSSL_free(der);
  return out;
}

std::vector<std::string> SplitPem(const std::string& bundle) {
  std::vector<std::string> out;
  static constexpr std::string_view kBegin = "-----BEGIN ";
  static constexpr std::string_view kEndLine = "-----END ";
  std::size_t pos = 0;
  while ((pos = bundle.find(kBegin, pos)) != std::string::npos) {
    std::size_t end = bundle.find(kEndLine, pos);
    if (end == std::string::npos) break;
    std::size_t line_end = bundle.find('\n', end);
    line_end = line_end == std::string::npos ? bundle.size() : line_end;
    std::string block = bundle.substr(pos, line_end - pos);
    while (!block.empty() && (block.back() == '\r' || block.back() == ' ')) block.pop_back();
    out.push_back(block + "\n");
    pos = line_end;
  }
  return out;
}

Result<Csr> MakeCsr(const std::string& common_name) {
  KeyPtr key(EVP_EC_gen("P-256"));
  if (!key) return OpenSslFailure(Code::kInternal, "generating a P-256 key");
  ReqPtr req(X509_REQ_new());
  X509_REQ_set_version(req.get(), 0);
  X509_NAME* name = X509_REQ_get_subject_name(req.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, reinterpret_cast<const unsigned char*>(common_name.c_str()), -1,
                             -1, 0);
  X509_REQ_set_pubkey(req.get(), key.get());
  if (X509_REQ_sign(req.get(), key.get(), EVP_sha256()) == 0) {
    return OpenSslFailure(Code::kInternal, "signing the CSR");
  }
  BioPtr req_out = NewBio(), key_out = NewBio();
  PEM_write_bio_X509_REQ(req_out.get(), req.get());
  PEM_write_bio_PrivateKey(key_out.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  return Csr{BioText(req_out.get()), BioText(key_out.get())};
}

Result<CsrFacts> ReadCsr(const std::string& pem) {
  BioPtr bio = MemoryBio(pem);
  ReqPtr req(PEM_read_bio_X509_REQ(bio.get(), nullptr, nullptr, nullptr));
  if (!req) return OpenSslFailure(Code::kInvalidArgument, "csr is not a PEM certificate request");
  EVP_PKEY* key = X509_REQ_get0_pubkey(req.get());
  if (key == nullptr || X509_REQ_verify(req.get(), key) != 1) {
    return OpenSslFailure(Code::kInvalidArgument, "csr signature does not verify");
  }
  BioPtr out = NewBio();
  PEM_write_bio_PUBKEY(out.get(), key);
  return CsrFacts{CommonName(X509_REQ_get_subject_name(req.get())), BioText(out.get())};
}

Result<std::string> MakeCrl(const http::KeyPairPem& ca, const std::vector<RevokedSerial>& revoked, TimePoint now,
                            TimePoint next_update) {
  BioPtr cbio = MemoryBio(ca.certificate), kbio = MemoryBio(ca.private_key);
  CertPtr cert(PEM_read_bio_X509(cbio.get(), nullptr, nullptr, nullptr));
  KeyPtr key(PEM_read_bio_PrivateKey(kbio.get(), nullptr, nullptr, nullptr));
  if (!cert || !key) return OpenSslFailure(Code::kInternal, "reading the CA for the CRL");
  CrlPtr crl(X509_CRL_new());
  X509_CRL_set_version(crl.get(), 1);
  X509_CRL_set_issuer_name(crl.get(), X509_get_subject_name(cert.get()));
  auto to_time = [](TimePoint t) { return ASN1_TIME_set(nullptr, std::chrono::system_clock::to_time_t(t)); };
  ASN1_TIME* last = to_time(now);
  ASN1_TIME* next = to_time(next_update);
  X509_CRL_set1_lastUpdate(crl.get(), last);
  X509_CRL_set1_nextUpdate(crl.get(), next);
  ASN1_TIME_free(last);
  ASN1_TIME_free(next);
  for (const auto& r : revoked) {
    X509_REVOKED* entry = X509_REVOKED_new();
    ASN1_INTEGER* serial = SerialInteger(r.serial);
    ASN1_TIME* when = to_time(r.revoked_at);
    X509_REVOKED_set_serialNumber(entry, serial);
    X509_REVOKED_set_revocationDate(entry, when);
    ASN1_INTEGER_free(serial);
    ASN1_TIME_free(when);
    X509_CRL_add0_revoked(crl.get(), entry);
  }
  X509_CRL_sort(crl.get());
  if (X509_CRL_sign(crl.get(), key.get(), EVP_sha256()) == 0) return OpenSslFailure(Code::kInternal, "signing the CRL");
  unsigned char* der = nullptr;
  int n = i2d_X509_CRL(crl.get(), &der);
  if (n < 0) return OpenSslFailure(Code::kInternal, "encoding the CRL");
  std::string out(reinterpret_cast<char*>(der), static_cast<std::size_t>(n));
  OPENSSL_free(der);
  return out;
}

std::string CrlPem(const std::string& der) {
  std::string b64 = base::Base64Encode(der);
  std::string out = "-----BEGIN X509 CRL-----\n";
  for (std::size_t i = 0; i < b64.size(); i += 64) out += b64.substr(i, 64) + "\n";
  return out + "-----END X509 CRL-----\n";
}

}  // namespace septa::vaultsim
