// An identity provider in a test: signing keys made with OpenSSL, their
// public JWKs as a provider publishes them, compact tokens signed with
// them, and the forged tokens a verifier must refuse (alg "none", HS256
// with a chosen secret). Header only; link OpenSSL::Crypto and septa_base.
// A failing OpenSSL call throws std::runtime_error, which fails the test.
#pragma once

#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <cstddef>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "services/base/base64.h"
#include "services/base/mac.h"
#include "services/base/openssl_ptr.h"
#include "services/oidc/jws.h"

namespace septa::test {

inline void RequireOpenSsl(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(std::string("test signer: ") + what + " failed");
}

// BASE64URL(header) '.' BASE64URL(claims) '.' BASE64URL(signature), the
// JSON as dump() writes it: for tokens signed or forged by hand.
inline std::string CompactToken(const nlohmann::json& header, const nlohmann::json& claims,
                                std::string_view signature) {
  return base::Base64UrlEncode(header.dump()) + '.' + base::Base64UrlEncode(claims.dump()) + '.' +
         base::Base64UrlEncode(signature);
}

// {"keys": [...]} as a provider's jwks_uri serves it.
inline std::string JwksJson(const std::vector<nlohmann::json>& keys) { return nlohmann::json{{"keys", keys}}.dump(); }

// A token with "alg": "none" and an empty signature (RFC 7519 section 6).
inline std::string UnsignedToken(const nlohmann::json& claims) {
  return CompactToken({{"alg", "none"}, {"typ", "JWT"}}, claims, "");
}

// A token signed with HMAC-SHA256 under `secret`: with a provider's public
// key (PublicKeyPem) as the secret, the key-confusion attack.
inline std::string Hs256Token(const nlohmann::json& claims, std::string_view secret, std::string_view key_id = "") {
  nlohmann::json header{{"alg", "HS256"}, {"typ", "JWT"}};
  if (!key_id.empty()) header["kid"] = key_id;
  const std::string signing_input = base::Base64UrlEncode(header.dump()) + '.' + base::Base64UrlEncode(claims.dump());
  return signing_input + '.' + base::Base64UrlEncode(base::HmacSha256(secret, signing_input));
}

// A fresh key pair of the type `algorithm` signs with: RSA (2048 bits by
// default), EC P-256 or Ed25519.
class TestSigningKey {
 public:
  static TestSigningKey Generate(oidc::JwsAlgorithm algorithm, std::string key_id = "", std::size_t rsa_bits = 2048) {
    EVP_PKEY* key = nullptr;
    switch (algorithm) {
      case oidc::JwsAlgorithm::kRs256: key = EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", rsa_bits); break;
      case oidc::JwsAlgorithm::kEs256: key = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"); break;
      case oidc::JwsAlgorithm::kEdDsa: key = EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519"); break;
    }
    RequireOpenSsl(key != nullptr, "EVP_PKEY_Q_keygen");
    return TestSigningKey(algorithm, std::move(key_id), base::KeyPtr(key));
  }

  oidc::JwsAlgorithm algorithm() const { return algorithm_; }
  const std::string& key_id() const { return key_id_; }

  // The public JWK: "kty" with n and e, or "crv" with x (and y); "use":
  // "sig", "alg", and "kid" when the key has one.
  nlohmann::json PublicJwk() const {
    nlohmann::json jwk{{"use", "sig"}, {"alg", oidc::AlgorithmName(algorithm_)}};
    if (!key_id_.empty()) jwk["kid"] = key_id_;
    switch (algorithm_) {
      case oidc::JwsAlgorithm::kRs256:
        jwk["kty"] = "RSA";
        jwk["n"] = base::Base64UrlEncode(BigNumberParam(OSSL_PKEY_PARAM_RSA_N, 0));
        jwk["e"] = base::Base64UrlEncode(BigNumberParam(OSSL_PKEY_PARAM_RSA_E, 0));
        break;
      case oidc::JwsAlgorithm::kEs256:
        jwk["kty"] = "EC";
        jwk["crv"] = "P-256";
        jwk["x"] = base::Base64UrlEncode(BigNumberParam(OSSL_PKEY_PARAM_EC_PUB_X, 32));
        jwk["y"] = base::Base64UrlEncode(BigNumberParam(OSSL_PKEY_PARAM_EC_PUB_Y, 32));
        break;
      case oidc::JwsAlgorithm::kEdDsa: {
        std::string x(32, '\0');
        std::size_t length = x.size();
        RequireOpenSsl(
            EVP_PKEY_get_raw_public_key(key_.get(), reinterpret_cast<unsigned char*>(x.data()), &length) == 1,
            "EVP_PKEY_get_raw_public_key");
        x.resize(length);
        jwk["kty"] = "OKP";
        jwk["crv"] = "Ed25519";
        jwk["x"] = base::Base64UrlEncode(x);
        break;
      }
    }
    return jwk;
  }

  // The public key as PEM (SubjectPublicKeyInfo), as providers also publish it.
  std::string PublicKeyPem() const {
    const base::BioPtr bio(BIO_new(BIO_s_mem()));
    RequireOpenSsl(bio && PEM_write_bio_PUBKEY(bio.get(), key_.get()) == 1, "PEM_write_bio_PUBKEY");
    return base::BioText(bio.get());
  }

  // The JWS signature of `signing_input`: RSASSA-PKCS1-v1_5 with SHA-256,
  // ECDSA P-256 with SHA-256 as R || S (32 bytes each), or Ed25519.
  std::string SignatureOf(std::string_view signing_input) const {
    using MdContextPtr = std::unique_ptr<EVP_MD_CTX, base::OpenSslDeleter<EVP_MD_CTX, EVP_MD_CTX_free>>;
    const MdContextPtr context(EVP_MD_CTX_new());
    const EVP_MD* digest = algorithm_ == oidc::JwsAlgorithm::kEdDsa ? nullptr : EVP_sha256();
    RequireOpenSsl(context && EVP_DigestSignInit(context.get(), nullptr, digest, nullptr, key_.get()) == 1,
                   "EVP_DigestSignInit");
    const auto* input = reinterpret_cast<const unsigned char*>(signing_input.data());
    std::size_t length = 0;
    RequireOpenSsl(EVP_DigestSign(context.get(), nullptr, &length, input, signing_input.size()) == 1, "EVP_DigestSign");
    std::string signature(length, '\0');
    RequireOpenSsl(EVP_DigestSign(context.get(), reinterpret_cast<unsigned char*>(signature.data()), &length, input,
                                  signing_input.size()) == 1,
                   "EVP_DigestSign");
    signature.resize(length);
    return algorithm_ == oidc::JwsAlgorithm::kEs256 ? RawEcdsaSignature(signature) : signature;
  }

  // A token of `claims` under {"alg", "typ": "JWT", "kid" when the key has one}.
  std::string Sign(const nlohmann::json& claims) const {
    nlohmann::json header{{"alg", oidc::AlgorithmName(algorithm_)}, {"typ", "JWT"}};
    if (!key_id_.empty()) header["kid"] = key_id_;
    return SignWithHeader(header, claims);
  }

  // A token of `claims` under `header` exactly as given (a test adds
  // "crit", names another "alg" or "kid"), signed with this key.
  std::string SignWithHeader(const nlohmann::json& header, const nlohmann::json& claims) const {
    const std::string signing_input = base::Base64UrlEncode(header.dump()) + '.' + base::Base64UrlEncode(claims.dump());
    return signing_input + '.' + base::Base64UrlEncode(SignatureOf(signing_input));
  }

 private:
  TestSigningKey(oidc::JwsAlgorithm algorithm, std::string key_id, base::KeyPtr key)
      : algorithm_(algorithm), key_id_(std::move(key_id)), key_(std::move(key)) {}

  // A big-number parameter of the key, big-endian, left-padded to
  // `padded_length` bytes (0: its own length).
  std::string BigNumberParam(const char* name, int padded_length) const {
    BIGNUM* raw = nullptr;
    RequireOpenSsl(EVP_PKEY_get_bn_param(key_.get(), name, &raw) == 1, "EVP_PKEY_get_bn_param");
    const base::BnPtr number(raw);
    const int length = padded_length > 0 ? padded_length : BN_num_bytes(number.get());
    std::string bytes(static_cast<std::size_t>(length), '\0');
    RequireOpenSsl(BN_bn2binpad(number.get(), reinterpret_cast<unsigned char*>(bytes.data()), length) == length,
                   "BN_bn2binpad");
    return bytes;
  }

  // OpenSSL's DER ECDSA-Sig-Value as JWS's R || S.
  static std::string RawEcdsaSignature(const std::string& der) {
    const auto* in = reinterpret_cast<const unsigned char*>(der.data());
    using SignaturePtr = std::unique_ptr<ECDSA_SIG, base::OpenSslDeleter<ECDSA_SIG, ECDSA_SIG_free>>;
    const SignaturePtr signature(d2i_ECDSA_SIG(nullptr, &in, static_cast<long>(der.size())));
    RequireOpenSsl(signature != nullptr, "d2i_ECDSA_SIG");
    std::string r_and_s(64, '\0');
    auto* out = reinterpret_cast<unsigned char*>(r_and_s.data());
    RequireOpenSsl(BN_bn2binpad(ECDSA_SIG_get0_r(signature.get()), out, 32) == 32 &&
                       BN_bn2binpad(ECDSA_SIG_get0_s(signature.get()), out + 32, 32) == 32,
                   "BN_bn2binpad");
    return r_and_s;
  }

  oidc::JwsAlgorithm algorithm_;
  std::string key_id_;
  base::KeyPtr key_;
};

}  // namespace septa::test
