#include "services/oidc/jwk.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "services/base/base64.h"
#include "tests/unit/services/oidc/test_signer.h"

namespace septa::oidc {
namespace {

using nlohmann::json;
using test::JwksJson;
using test::TestSigningKey;
using ::testing::HasSubstr;

const json kSignedClaims{{"iss", "https://issuer.example"}, {"sub", "alice"}, {"aud", "septa"}, {"exp", 1'900'000'000}};

// Two keys of each algorithm ("rsa-0", "rsa-1", "ec-0", ...), made once per
// test binary (RSA key generation takes a while), at which * 3 + the
// algorithm's enumerator.
const TestSigningKey& Key(JwsAlgorithm algorithm, int which = 0) {
  static const std::vector<TestSigningKey> keys = [] {
    std::vector<TestSigningKey> made;
    for (int i = 0; i < 2; ++i) {
      made.push_back(TestSigningKey::Generate(JwsAlgorithm::kRs256, "rsa-" + std::to_string(i)));
      made.push_back(TestSigningKey::Generate(JwsAlgorithm::kEs256, "ec-" + std::to_string(i)));
      made.push_back(TestSigningKey::Generate(JwsAlgorithm::kEdDsa, "ed-" + std::to_string(i)));
    }
    return made;
  }();
  return keys[static_cast<std::size_t>(which * 3 + static_cast<int>(algorithm))];
}

constexpr JwsAlgorithm kAlgorithms[] = {JwsAlgorithm::kRs256, JwsAlgorithm::kEs256, JwsAlgorithm::kEdDsa};

KeySet ParseKeySet(const std::vector<json>& keys) {
  Result<KeySet> set = KeySet::Parse(JwksJson(keys));
  EXPECT_TRUE(set.ok()) << set.status().ToString();
  return set.ok() ? *std::move(set) : KeySet();
}

Jws ParseToken(std::string_view token) {
  Result<Jws> jws = ParseJws(token);
  EXPECT_TRUE(jws.ok()) << jws.status().ToString();
  return jws.ok() ? *std::move(jws) : Jws();
}

// 1 when a key set keeps `jwk`, 0 when it skips (and counts) it.
std::size_t KeptOf(const json& jwk) {
  const KeySet set = ParseKeySet({jwk});
  EXPECT_EQ(set.size() + set.skipped(), 1u);
  return set.size();
}

std::string Base64UrlField(const json& jwk, const char* name) {
  return *base::Base64UrlDecode(jwk.at(name).get<std::string>());
}

TEST(KeySet, ValidTokensVerify) {
  for (JwsAlgorithm algorithm : kAlgorithms) {
    SCOPED_TRACE(AlgorithmName(algorithm));
    const KeySet set = ParseKeySet({Key(algorithm).PublicJwk()});
    ASSERT_EQ(set.size(), 1u);
    const Jws jws = ParseToken(Key(algorithm).Sign(kSignedClaims));
    const Jwk* key = set.Find(jws);
    ASSERT_NE(key, nullptr);
    EXPECT_EQ(key->algorithm(), algorithm);
    EXPECT_TRUE(VerifySignature(jws, *key).ok()) << VerifySignature(jws, *key).ToString();
  }
}

TEST(KeySet, TamperedPayloadFails) {
  json other_claims = kSignedClaims;
  other_claims["sub"] = "mallory";
  const std::string other_payload = base::Base64UrlEncode(other_claims.dump());
  for (JwsAlgorithm algorithm : kAlgorithms) {
    SCOPED_TRACE(AlgorithmName(algorithm));
    const KeySet set = ParseKeySet({Key(algorithm).PublicJwk()});
    std::string token = Key(algorithm).Sign(kSignedClaims);
    const std::size_t payload_start = token.find('.') + 1;
    token.replace(payload_start, token.rfind('.') - payload_start, other_payload);
    const Jws jws = ParseToken(token);
    ASSERT_EQ(jws.claims["sub"], "mallory");
    ASSERT_NE(set.Find(jws), nullptr);
    const Status verified = VerifySignature(jws, *set.Find(jws));
    EXPECT_EQ(verified.code(), Code::kUnauthenticated);
    EXPECT_EQ(verified.message(), "token signature does not verify with key \"" + Key(algorithm).key_id() + "\" (" +
                                      std::string(AlgorithmName(algorithm)) + ")");
  }
}

TEST(KeySet, SignatureByAnotherKeyOfTheSameTypeFails) {
  for (JwsAlgorithm algorithm : kAlgorithms) {
    SCOPED_TRACE(AlgorithmName(algorithm));
    json impostor = Key(algorithm, 1).PublicJwk();
    impostor["kid"] = Key(algorithm, 0).key_id();  // the impostor's key, published under the kid of key 0
    const KeySet set = ParseKeySet({Key(algorithm, 0).PublicJwk()});
    const Jws jws = ParseToken(
        Key(algorithm, 1)
            .SignWithHeader({{"alg", AlgorithmName(algorithm)}, {"kid", Key(algorithm, 0).key_id()}}, kSignedClaims));
    const Jwk* key = set.Find(jws);
    ASSERT_NE(key, nullptr);
    EXPECT_EQ(VerifySignature(jws, *key).code(), Code::kUnauthenticated);
    // The impostor's own public key verifies it: the signature itself is sound.
    const KeySet impostor_set = ParseKeySet({impostor});
    ASSERT_NE(impostor_set.Find(jws), nullptr);
    EXPECT_TRUE(VerifySignature(jws, *impostor_set.Find(jws)).ok());
  }
}

TEST(KeySet, FindChoosesTheKeyOfTheTokensKid) {
  const KeySet set = ParseKeySet({Key(JwsAlgorithm::kRs256, 0).PublicJwk(), Key(JwsAlgorithm::kRs256, 1).PublicJwk()});
  ASSERT_EQ(set.size(), 2u);
  for (int which : {0, 1}) {
    const Jws jws = ParseToken(Key(JwsAlgorithm::kRs256, which).Sign(kSignedClaims));
    const Jwk* key = set.Find(jws);
    ASSERT_NE(key, nullptr);
    EXPECT_EQ(key->key_id(), Key(JwsAlgorithm::kRs256, which).key_id());
    EXPECT_TRUE(VerifySignature(jws, *key).ok());
  }
}

TEST(KeySet, FindReturnsNullForAnUnknownKid) {
  const KeySet set = ParseKeySet({Key(JwsAlgorithm::kRs256, 0).PublicJwk()});
  const Jws jws =
      ParseToken(Key(JwsAlgorithm::kRs256, 0).SignWithHeader({{"alg", "RS256"}, {"kid", "rotated"}}, kSignedClaims));
  EXPECT_EQ(set.Find(jws), nullptr);
}

TEST(KeySet, WithoutKidFindsTheOnlyKeyOfTheAlgorithm) {
  const json rs256_only{{"alg", "RS256"}};
  const KeySet one = ParseKeySet({Key(JwsAlgorithm::kRs256, 0).PublicJwk(), Key(JwsAlgorithm::kEs256, 0).PublicJwk(),
                                  Key(JwsAlgorithm::kEs256, 1).PublicJwk()});
  const Jws jws = ParseToken(Key(JwsAlgorithm::kRs256, 0).SignWithHeader(rs256_only, kSignedClaims));
  const Jwk* key = one.Find(jws);
  ASSERT_NE(key, nullptr);
  EXPECT_EQ(key->key_id(), "rsa-0");
  EXPECT_TRUE(VerifySignature(jws, *key).ok());

  // Two keys of the algorithm: which one signed is unknown.
  const KeySet two = ParseKeySet({Key(JwsAlgorithm::kRs256, 0).PublicJwk(), Key(JwsAlgorithm::kRs256, 1).PublicJwk()});
  EXPECT_EQ(two.Find(jws), nullptr);
}

TEST(KeySet, KeysWithoutKidAreFoundForTokensWithoutKid) {
  json jwk = Key(JwsAlgorithm::kEdDsa).PublicJwk();
  jwk.erase("kid");
  const KeySet set = ParseKeySet({jwk});
  const Jws jws = ParseToken(Key(JwsAlgorithm::kEdDsa).SignWithHeader({{"alg", "EdDSA"}}, kSignedClaims));
  const Jwk* key = set.Find(jws);
  ASSERT_NE(key, nullptr);
  EXPECT_EQ(key->key_id(), "");
  EXPECT_TRUE(VerifySignature(jws, *key).ok());
  // A token naming a kid does not take a key without one.
  EXPECT_EQ(set.Find(ParseToken(Key(JwsAlgorithm::kEdDsa).Sign(kSignedClaims))), nullptr);
}

// An RS256 token whose kid names an EC key: the types differ, so the EC
// key neither is found nor verifies it.
TEST(KeySet, KeyOfAnotherTypeUnderTheTokensKidFails) {
  json ec = Key(JwsAlgorithm::kEs256).PublicJwk();
  ec["kid"] = "shared";
  const KeySet set = ParseKeySet({ec});
  const Jws jws =
      ParseToken(Key(JwsAlgorithm::kRs256).SignWithHeader({{"alg", "RS256"}, {"kid", "shared"}}, kSignedClaims));
  EXPECT_EQ(set.Find(jws), nullptr);
  const Jws ec_jws =
      ParseToken(Key(JwsAlgorithm::kEs256).SignWithHeader({{"alg", "ES256"}, {"kid", "shared"}}, kSignedClaims));
  const Jwk* ec_key = set.Find(ec_jws);
  ASSERT_NE(ec_key, nullptr);
  const Status verified = VerifySignature(jws, *ec_key);
  EXPECT_EQ(verified.code(), Code::kUnauthenticated);
  EXPECT_EQ(verified.message(), "token algorithm RS256 does not match key \"shared\" (ES256)");
}

TEST(KeySet, Es256SignatureMustBeRAndS) {
  const KeySet set = ParseKeySet({Key(JwsAlgorithm::kEs256).PublicJwk()});
  Jws jws = ParseToken(Key(JwsAlgorithm::kEs256).Sign(kSignedClaims));
  ASSERT_EQ(jws.signature.size(), 64u);
  const Jwk* key = set.Find(jws);
  ASSERT_NE(key, nullptr);
  jws.signature.push_back('\0');
  EXPECT_EQ(VerifySignature(jws, *key).message(), "ES256 token signature is 65 bytes, not 64 (R || S)");
}

TEST(KeySet, SkipsAKeyWhoseOwnAlgIsAnother) {
  for (const char* alg : {"RS512", "PS256", "ES256", "none", ""}) {
    json jwk = Key(JwsAlgorithm::kRs256).PublicJwk();
    jwk["alg"] = alg;
    EXPECT_EQ(KeptOf(jwk), 0u) << alg;
  }
  json ec = Key(JwsAlgorithm::kEs256).PublicJwk();
  ec["alg"] = "ES384";
  EXPECT_EQ(KeptOf(ec), 0u);
  json without_alg = Key(JwsAlgorithm::kEs256).PublicJwk();
  without_alg.erase("alg");
  EXPECT_EQ(KeptOf(without_alg), 1u);
}

TEST(KeySet, SkipsEncryptionKeys) {
  json jwk = Key(JwsAlgorithm::kRs256).PublicJwk();
  jwk["use"] = "enc";
  EXPECT_EQ(KeptOf(jwk), 0u);
  jwk["use"] = 1;
  EXPECT_EQ(KeptOf(jwk), 0u);
  jwk.erase("use");
  EXPECT_EQ(KeptOf(jwk), 1u);
}

TEST(KeySet, SkipsRsaKeysBelow2048Bits) {
  const TestSigningKey weak = TestSigningKey::Generate(JwsAlgorithm::kRs256, "weak", 1024);
  const KeySet set = ParseKeySet({weak.PublicJwk(), Key(JwsAlgorithm::kRs256).PublicJwk()});
  EXPECT_EQ(set.size(), 1u);
  EXPECT_EQ(set.skipped(), 1u);
  EXPECT_EQ(set.Find(ParseToken(weak.Sign(kSignedClaims))), nullptr);
}

TEST(KeySet, SkipsAnEcPointNotOnTheCurve) {
  json jwk = Key(JwsAlgorithm::kEs256).PublicJwk();
  std::string y = Base64UrlField(jwk, "y");
  y.back() = static_cast<char>(y.back() ^ 1);
  jwk["y"] = base::Base64UrlEncode(y);
  EXPECT_EQ(KeptOf(jwk), 0u);
}

TEST(KeySet, SkipsCoordinatesOfTheWrongLength) {
  json ec = Key(JwsAlgorithm::kEs256).PublicJwk();
  ec["x"] = base::Base64UrlEncode(Base64UrlField(ec, "x").substr(1));
  EXPECT_EQ(KeptOf(ec), 0u);
  json ec_padded = Key(JwsAlgorithm::kEs256).PublicJwk();
  ec_padded["y"] = base::Base64UrlEncode('\0' + Base64UrlField(ec_padded, "y"));
  EXPECT_EQ(KeptOf(ec_padded), 0u);
  json ed = Key(JwsAlgorithm::kEdDsa).PublicJwk();
  ed["x"] = base::Base64UrlEncode(Base64UrlField(ed, "x").substr(1));
  EXPECT_EQ(KeptOf(ed), 0u);
}

TEST(KeySet, SkipsOtherTypesCurvesAndMalformedKeys) {
  json p384 = Key(JwsAlgorithm::kEs256).PublicJwk();
  p384["crv"] = "P-384";
  json x25519 = Key(JwsAlgorithm::kEdDsa).PublicJwk();
  x25519["crv"] = "X25519";
  x25519.erase("alg");
  json no_e = Key(JwsAlgorithm::kRs256).PublicJwk();
  no_e.erase("e");
  json padded_n = Key(JwsAlgorithm::kRs256).PublicJwk();
  padded_n["n"] = padded_n["n"].get<std::string>() + "=";
  json kid_number = Key(JwsAlgorithm::kRs256).PublicJwk();
  kid_number["kid"] = 7;
  json even_exponent = Key(JwsAlgorithm::kRs256).PublicJwk();
  even_exponent["e"] = base::Base64UrlEncode(std::string("\x01\x00\x00", 3));
  for (const json& jwk : {p384, x25519, no_e, padded_n, kid_number, even_exponent, json{{"kty", "oct"}, {"k", "c2Vj"}},
                          json{{"kty", "RSA"}}, json("RSA"), json::array()}) {
    EXPECT_EQ(KeptOf(jwk), 0u) << jwk.dump();
  }
}

TEST(KeySet, SkipsKeysWithPrivateParts) {
  for (const char* member : {"d", "p", "q", "dp", "dq", "qi"}) {
    json jwk = Key(JwsAlgorithm::kRs256).PublicJwk();
    jwk[member] = "AQAB";
    EXPECT_EQ(KeptOf(jwk), 0u) << member;
  }
  json ed = Key(JwsAlgorithm::kEdDsa).PublicJwk();
  ed["d"] = ed["x"];
  EXPECT_EQ(KeptOf(ed), 0u);
}

TEST(KeySet, HoldsAtMost100Keys) {
  const std::vector<json> hundred(kMaxKeys, Key(JwsAlgorithm::kEdDsa).PublicJwk());
  const Result<KeySet> full = KeySet::Parse(JwksJson(hundred));
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  EXPECT_EQ(full->size(), 100u);

  std::vector<json> too_many = hundred;
  too_many.push_back(json::object());
  const Result<KeySet> refused = KeySet::Parse(JwksJson(too_many));
  EXPECT_EQ(refused.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(refused.status().message(), "key set holds 101 keys, more than 100");
}

TEST(KeySet, RefusesWhatIsNotAKeySet) {
  const auto refusal = [](std::string_view jwks) {
    const Result<KeySet> set = KeySet::Parse(jwks);
    EXPECT_EQ(set.status().code(), Code::kInvalidArgument) << jwks;
    return set.status().message();
  };
  EXPECT_EQ(refusal("[]"), "key set is not a JSON object");
  EXPECT_EQ(refusal(R"("keys")"), "key set is not a JSON object");
  EXPECT_EQ(refusal("{}"), "key set has no \"keys\" array");
  EXPECT_EQ(refusal(R"({"keys":{}})"), "key set has no \"keys\" array");
  EXPECT_EQ(refusal(R"({"keys":"k"})"), "key set has no \"keys\" array");
  EXPECT_THAT(refusal(R"({"keys":[)"), HasSubstr("key set is not JSON: \"malformed JSON"));
  EXPECT_THAT(refusal(""), HasSubstr("key set is not JSON"));

  const Result<KeySet> empty = KeySet::Parse(R"({"keys":[]})");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->size(), 0u);
}

}  // namespace
}  // namespace septa::oidc
