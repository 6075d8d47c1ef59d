#include "services/oidc/jwk.h"

#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/rsa.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>

#include "common/documents.h"
#include "common/text.h"
#include "services/base/base64.h"
#include "services/base/openssl_ptr.h"

namespace septa::oidc {

using nlohmann::json;

struct Jwk::Key {
  base::KeyPtr pkey;
};

Jwk::Jwk(std::string key_id, JwsAlgorithm algorithm, std::unique_ptr<Key> key)
    : key_id_(std::move(key_id)), algorithm_(algorithm), key_(std::move(key)) {}
Jwk::~Jwk() = default;
Jwk::Jwk(Jwk&&) noexcept = default;
Jwk& Jwk::operator=(Jwk&&) noexcept = default;

namespace {

template <class T, void (*Free)(T*)>
using OpenSslPtr = std::unique_ptr<T, base::OpenSslDeleter<T, Free>>;
using ParamBuildPtr = OpenSslPtr<OSSL_PARAM_BLD, OSSL_PARAM_BLD_free>;
using ParamsPtr = OpenSslPtr<OSSL_PARAM, OSSL_PARAM_free>;
using KeyContextPtr = OpenSslPtr<EVP_PKEY_CTX, EVP_PKEY_CTX_free>;
using DigestContextPtr = OpenSslPtr<EVP_MD_CTX, EVP_MD_CTX_free>;
using EcdsaSignaturePtr = OpenSslPtr<ECDSA_SIG, ECDSA_SIG_free>;

constexpr int kMinRsaBits = 2048;
constexpr std::size_t kP256CoordinateBytes = 32;
constexpr std::size_t kEd25519KeyBytes = 32;

// A JWK member that holds base64url bytes; nullopt when absent, not a
// string or not base64url.
std::optional<std::string> JwkBytes(const json& jwk, const char* name) {
  const auto found = jwk.find(name);
  if (found == jwk.end() || !found->is_string()) return std::nullopt;
  return base::Base64UrlDecode(found->get_ref<const std::string&>());
}

// A JWK string member equal to `expected`.
bool JwkStringIs(const json& jwk, const char* name, std::string_view expected) {
  const auto found = jwk.find(name);
  return found != jwk.end() && found->is_string() && found->get_ref<const std::string&>() == expected;
}

// The public key the parameters describe, if OpenSSL's own check of a
// public key accepts it (RSA: n odd, composite, free of small factors and
// at most 16384 bits, e odd and above 1; EC: the point on the curve, not
// at infinity and of the group's order).
base::KeyPtr PublicKeyFromParams(const char* key_type, OSSL_PARAM* params) {
  const KeyContextPtr import_context(EVP_PKEY_CTX_new_from_name(nullptr, key_type, nullptr));
  EVP_PKEY* raw = nullptr;
  if (!import_context || EVP_PKEY_fromdata_init(import_context.get()) != 1 ||
      EVP_PKEY_fromdata(import_context.get(), &raw, EVP_PKEY_PUBLIC_KEY, params) != 1) {
    return nullptr;
  }
  base::KeyPtr key(raw);
  const KeyContextPtr check_context(EVP_PKEY_CTX_new_from_pkey(nullptr, key.get(), nullptr));
  if (!check_context || EVP_PKEY_public_check(check_context.get()) != 1) return nullptr;
  return key;
}

base::KeyPtr RsaPublicKey(const json& jwk) {
  const std::optional<std::string> modulus = JwkBytes(jwk, "n");
  const std::optional<std::string> exponent = JwkBytes(jwk, "e");
  if (!modulus || !exponent || modulus->empty() || exponent->empty()) return nullptr;
  const base::BnPtr n(
      BN_bin2bn(reinterpret_cast<const unsigned char*>(modulus->data()), static_cast<int>(modulus->size()), nullptr));
  const base::BnPtr e(
      BN_bin2bn(reinterpret_cast<const unsigned char*>(exponent->data()), static_cast<int>(exponent->size()), nullptr));
  if (!n || !e || BN_num_bits(n.get()) < kMinRsaBits) return nullptr;
  const ParamBuildPtr build(OSSL_PARAM_BLD_new());
  if (!build || OSSL_PARAM_BLD_push_BN(build.get(), OSSL_PKEY_PARAM_RSA_N, n.get()) != 1 ||
      OSSL_PARAM_BLD_push_BN(build.get(), OSSL_PKEY_PARAM_RSA_E, e.get()) != 1) {
    return nullptr;
  }
  const ParamsPtr params(OSSL_PARAM_BLD_to_param(build.get()));
  return params ? PublicKeyFromParams("RSA", params.get()) : nullptr;
}

base::KeyPtr P256PublicKey(const json& jwk) {
  if (!JwkStringIs(jwk, "crv", "P-256")) return nullptr;
  const std::optional<std::string> x = JwkBytes(jwk, "x");
  const std::optional<std::string> y = JwkBytes(jwk, "y");
  // RFC 7518 section 6.2.1.2: each coordinate in the full length of the field.
  if (!x || !y || x->size() != kP256CoordinateBytes || y->size() != kP256CoordinateBytes) return nullptr;
  const std::string uncompressed_point = '\x04' + *x + *y;  // SEC 1 section 2.3.3
  const ParamBuildPtr build(OSSL_PARAM_BLD_new());
  if (!build || OSSL_PARAM_BLD_push_utf8_string(build.get(), OSSL_PKEY_PARAM_GROUP_NAME, SN_X9_62_prime256v1, 0) != 1 ||
      OSSL_PARAM_BLD_push_octet_string(build.get(), OSSL_PKEY_PARAM_PUB_KEY, uncompressed_point.data(),
                                       uncompressed_point.size()) != 1) {
    return nullptr;
  }
  const ParamsPtr params(OSSL_PARAM_BLD_to_param(build.get()));
  return params ? PublicKeyFromParams("EC", params.get()) : nullptr;
}

base::KeyPtr Ed25519PublicKey(const json& jwk) {
  if (!JwkStringIs(jwk, "crv", "Ed25519")) return nullptr;
  const std::optional<std::string> x = JwkBytes(jwk, "x");
  if (!x || x->size() != kEd25519KeyBytes) return nullptr;
  return base::KeyPtr(EVP_PKEY_new_raw_public_key(EVP_PKEY_ED25519, nullptr,
                                                  reinterpret_cast<const unsigned char*>(x->data()), x->size()));
}

struct SigningKey {
  std::string key_id;
  JwsAlgorithm algorithm;
  base::KeyPtr key;
};

// The signing key `jwk` describes, or nullopt when it is to be skipped.
std::optional<SigningKey> ReadSigningKey(const json& jwk) {
  if (!jwk.is_object()) return std::nullopt;
  if (jwk.contains("use") && !JwkStringIs(jwk, "use", "sig")) return std::nullopt;
  // A published private key is the provider's mistake; it is never held.
  for (const char* private_member : {"d", "p", "q", "dp", "dq", "qi", "oth", "k"}) {
    if (jwk.contains(private_member)) return std::nullopt;
  }
  std::string key_id;
  if (const auto kid = jwk.find("kid"); kid != jwk.end()) {
    if (!kid->is_string()) return std::nullopt;
    key_id = kid->get<std::string>();
  }
  JwsAlgorithm algorithm;
  base::KeyPtr key;
  if (JwkStringIs(jwk, "kty", "RSA")) {
    algorithm = JwsAlgorithm::kRs256;
    key = RsaPublicKey(jwk);
  } else if (JwkStringIs(jwk, "kty", "EC")) {
    algorithm = JwsAlgorithm::kEs256;
    key = P256PublicKey(jwk);
  } else if (JwkStringIs(jwk, "kty", "OKP")) {
    algorithm = JwsAlgorithm::kEdDsa;
    key = Ed25519PublicKey(jwk);
  } else {
    return std::nullopt;
  }
  if (jwk.contains("alg") && !JwkStringIs(jwk, "alg", AlgorithmName(algorithm))) return std::nullopt;
  if (!key) return std::nullopt;
  return SigningKey{.key_id = std::move(key_id), .algorithm = algorithm, .key = std::move(key)};
}

// R || S (32 bytes each, big-endian) as the DER ECDSA-Sig-Value OpenSSL
// verifies; nullopt when it is not 64 bytes.
std::optional<std::string> EcdsaDerSignature(std::string_view r_and_s) {
  if (r_and_s.size() != 2 * kP256CoordinateBytes) return std::nullopt;
  const auto* bytes = reinterpret_cast<const unsigned char*>(r_and_s.data());
  base::BnPtr r(BN_bin2bn(bytes, kP256CoordinateBytes, nullptr));
  base::BnPtr s(BN_bin2bn(bytes + kP256CoordinateBytes, kP256CoordinateBytes, nullptr));
  const EcdsaSignaturePtr signature(ECDSA_SIG_new());
  if (!r || !s || !signature || ECDSA_SIG_set0(signature.get(), r.get(), s.get()) != 1) return std::nullopt;
  r.release();  // owned by `signature` now
  s.release();
  const int length = i2d_ECDSA_SIG(signature.get(), nullptr);
  if (length <= 0) return std::nullopt;
  std::string der(static_cast<std::size_t>(length), '\0');
  auto* out = reinterpret_cast<unsigned char*>(der.data());
  if (i2d_ECDSA_SIG(signature.get(), &out) != length) return std::nullopt;
  return der;
}

// Whether `signature` is `key`'s over `input`. OpenSSL's error queue is
// emptied either way, so that a refused token leaves nothing behind for
// the next caller on this thread (a TLS handshake) to misread.
bool SignatureVerifies(EVP_PKEY* key, JwsAlgorithm algorithm, std::string_view input, std::string_view signature) {
  const DigestContextPtr context(EVP_MD_CTX_new());
  EVP_PKEY_CTX* key_context = nullptr;
  // EdDSA hashes inside the algorithm (PureEdDSA): no digest is named.
  const EVP_MD* digest = algorithm == JwsAlgorithm::kEdDsa ? nullptr : EVP_sha256();
  bool verified = context && EVP_DigestVerifyInit(context.get(), &key_context, digest, nullptr, key) == 1;
  if (verified && algorithm == JwsAlgorithm::kRs256) {
    verified = EVP_PKEY_CTX_set_rsa_padding(key_context, RSA_PKCS1_PADDING) == 1;
  }
  verified = verified &&
             EVP_DigestVerify(context.get(), reinterpret_cast<const unsigned char*>(signature.data()), signature.size(),
                              reinterpret_cast<const unsigned char*>(input.data()), input.size()) == 1;
  ERR_clear_error();
  return verified;
}

}  // namespace

Result<KeySet> KeySet::Parse(std::string_view jwks_json) {
  Result<json> parsed = ParseJson(jwks_json);
  if (!parsed.ok()) return InvalidArgument("key set is not JSON: " + QuotedExcerpt(parsed.status().message()));
  if (!parsed->is_object()) return InvalidArgument("key set is not a JSON object");
  const auto keys = parsed->find("keys");
  if (keys == parsed->end() || !keys->is_array()) return InvalidArgument("key set has no \"keys\" array");
  if (keys->size() > kMaxKeys) {
    return InvalidArgument("key set holds " + std::to_string(keys->size()) + " keys, more than " +
                           std::to_string(kMaxKeys));
  }
  KeySet set;
  for (const json& entry : *keys) {
    std::optional<SigningKey> key = ReadSigningKey(entry);
    if (key) {
      set.keys_.push_back(Jwk(std::move(key->key_id), key->algorithm,
                              std::make_unique<Jwk::Key>(Jwk::Key{.pkey = std::move(key->key)})));
    } else {
      ++set.skipped_;
    }
  }
  ERR_clear_error();  // what OpenSSL recorded about the keys it refused
  return set;
}

const Jwk* KeySet::Find(const Jws& jws) const {
  const Jwk* only = nullptr;
  for (const Jwk& key : keys_) {
    if (key.algorithm() != jws.algorithm) continue;
    if (!jws.key_id.empty()) {
      if (key.key_id() == jws.key_id) return &key;
    } else if (only != nullptr) {
      return nullptr;  // several keys of the algorithm: which one signed is unknown
    } else {
      only = &key;
    }
  }
  return only;
}

Status VerifySignature(const Jws& jws, const Jwk& key) {
  const std::string key_name = key.key_id().empty() ? std::string("without a kid") : QuotedExcerpt(key.key_id());
  if (key.algorithm() != jws.algorithm) {
    return Unauthenticated("token algorithm " + std::string(AlgorithmName(jws.algorithm)) + " does not match key " +
                           key_name + " (" + std::string(AlgorithmName(key.algorithm())) + ")");
  }
  std::string signature = jws.signature;
  if (jws.algorithm == JwsAlgorithm::kEs256) {
    std::optional<std::string> der = EcdsaDerSignature(jws.signature);
    if (!der) {
      return Unauthenticated("ES256 token signature is " + std::to_string(jws.signature.size()) +
                             " bytes, not 64 (R || S)");
    }
    signature = *std::move(der);
  }
  if (!SignatureVerifies(key.key_->pkey.get(), jws.algorithm, jws.signing_input, signature)) {
    return Unauthenticated("token signature does not verify with key " + key_name + " (" +
                           std::string(AlgorithmName(jws.algorithm)) + ")");
  }
  return Status::Ok();
}

}  // namespace septa::oidc
