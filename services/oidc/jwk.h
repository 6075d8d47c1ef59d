// The public signing keys of a JSON Web Key Set (RFC 7517), as an identity
// provider publishes them at its jwks_uri, held as OpenSSL keys: RSA
// ("kty": "RSA", n and e; at least 2048 bits), EC P-256 ("kty": "EC",
// "crv": "P-256", x and y, the point checked to be on the curve) and
// Ed25519 ("kty": "OKP", "crv": "Ed25519", x), each as OpenSSL's check of
// a public key accepts it. Keys for encryption
// ("use": "enc"), private parts ("d", "p", ...) and other types or curves are
// skipped, never an error: providers publish such keys beside their
// signing keys.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "services/oidc/jws.h"

namespace septa::oidc {

// More keys than this make a key set refused: providers publish a handful
// (current, next, previous); a set of thousands would make every lookup and
// every refetch an attacker's lever.
inline constexpr std::size_t kMaxKeys = 100;

class Jwk {
 public:
  ~Jwk();
  Jwk(Jwk&&) noexcept;
  Jwk& operator=(Jwk&&) noexcept;

  const std::string& key_id() const { return key_id_; }  // "kid"; empty when absent
  // The algorithm this key verifies: from its type (RSA -> RS256, P-256 ->
  // ES256, Ed25519 -> EdDSA). A key whose own "alg" names another is skipped.
  JwsAlgorithm algorithm() const { return algorithm_; }

 private:
  friend class KeySet;
  friend Status VerifySignature(const Jws& jws, const Jwk& key);
  struct Key;
  Jwk(std::string key_id, JwsAlgorithm algorithm, std::unique_ptr<Key> key);

  std::string key_id_;
  JwsAlgorithm algorithm_;
  std::unique_ptr<Key> key_;  // the EVP_PKEY
};

class KeySet {
 public:
  // kInvalidArgument when `jwks_json` is not a JSON object with a "keys"
  // array (bounded as common/documents.h), or holds more than kMaxKeys keys.
  // Unusable keys are skipped and counted.
  static Result<KeySet> Parse(std::string_view jwks_json);

  // The key that may verify `jws`: the one whose kid is the token's (and
  // whose algorithm is the token's); without a kid in the token, the only
  // key of the token's algorithm (none when there are several). nullptr
  // when there is none: the caller may fetch the set again (a rotation).
  const Jwk* Find(const Jws& jws) const;

  std::size_t size() const { return keys_.size(); }
  std::size_t skipped() const { return skipped_; }

 private:
  std::vector<Jwk> keys_;
  std::size_t skipped_ = 0;
};

// Ok when `jws.signature` is `key`'s signature of `jws.signing_input` under
// `jws.algorithm`; kUnauthenticated otherwise (also when the key is of
// another algorithm). ES256's signature is the JWS form (R || S, 32 bytes
// each), not DER.
Status VerifySignature(const Jws& jws, const Jwk& key);

}  // namespace septa::oidc
