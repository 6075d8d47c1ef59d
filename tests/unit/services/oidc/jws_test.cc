#include "services/oidc/jws.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "services/base/base64.h"
#include "tests/unit/services/oidc/test_signer.h"

namespace septa::oidc {
namespace {

using nlohmann::json;
using test::CompactToken;
using test::TestSigningKey;
using ::testing::HasSubstr;
using ::testing::Not;

const json kTokenClaims{{"iss", "https://issuer.example"}, {"sub", "alice"}, {"aud", "septa"}, {"exp", 1'900'000'000}};

const TestSigningKey& RsaKey() {
  static const TestSigningKey key = TestSigningKey::Generate(JwsAlgorithm::kRs256, "rsa-1");
  return key;
}

// The message ParseJws refuses `token` with ("" when it parses).
std::string JwsRefusal(std::string_view token) {
  const Result<Jws> parsed = ParseJws(token);
  if (parsed.ok()) return "";
  EXPECT_EQ(parsed.status().code(), Code::kUnauthenticated);
  return parsed.status().message();
}

TEST(ParseJws, ReadsHeaderClaimsAndSignature) {
  const std::string token = RsaKey().Sign(kTokenClaims);
  const Result<Jws> jws = ParseJws(token);
  ASSERT_TRUE(jws.ok()) << jws.status().ToString();
  EXPECT_EQ(jws->algorithm, JwsAlgorithm::kRs256);
  EXPECT_EQ(jws->key_id, "rsa-1");
  EXPECT_EQ(jws->type, "JWT");
  EXPECT_EQ(jws->claims, kTokenClaims);
  EXPECT_EQ(jws->signing_input, token.substr(0, token.rfind('.')));
  EXPECT_EQ(jws->signature.size(), 256u);  // RSA 2048
}

TEST(ParseJws, KidAndTypAreOptional) {
  const Result<Jws> jws = ParseJws(RsaKey().SignWithHeader({{"alg", "RS256"}}, kTokenClaims));
  ASSERT_TRUE(jws.ok()) << jws.status().ToString();
  EXPECT_EQ(jws->key_id, "");
  EXPECT_EQ(jws->type, "");
}

TEST(ParseJws, RefusesAlgNoneWithEmptySignature) {
  const std::string token = test::UnsignedToken(kTokenClaims);
  ASSERT_EQ(token.back(), '.');
  EXPECT_EQ(JwsRefusal(token), "token algorithm \"none\" is not accepted (RS256, ES256, EdDSA)");
}

// The key-confusion attack: HS256 "signed" with the provider's public key,
// which any client can fetch, as the HMAC secret.
TEST(ParseJws, RefusesHs256SignedWithThePublicKeyPem) {
  const std::string token = test::Hs256Token(kTokenClaims, RsaKey().PublicKeyPem(), "rsa-1");
  EXPECT_EQ(JwsRefusal(token), "token algorithm \"HS256\" is not accepted (RS256, ES256, EdDSA)");
}

TEST(ParseJws, RefusesEveryOtherAlgorithm) {
  for (const char* alg : {"HS384", "HS512", "RS384", "RS512", "PS256", "ES384", "ES512", "ES256K", "Ed25519", "rs256",
                          "NONE", "None", ""}) {
    EXPECT_THAT(JwsRefusal(CompactToken({{"alg", alg}}, kTokenClaims, "sig")), HasSubstr("is not accepted")) << alg;
  }
  EXPECT_EQ(JwsRefusal(CompactToken({{"alg", 256}}, kTokenClaims, "sig")), "token header's \"alg\" is not a string");
  EXPECT_EQ(JwsRefusal(CompactToken({{"typ", "JWT"}}, kTokenClaims, "sig")), "token header has no \"alg\"");
}

TEST(ParseJws, RefusesCritHeader) {
  const std::string token = RsaKey().SignWithHeader({{"alg", "RS256"}, {"crit", {"exp"}}, {"exp", 1}}, kTokenClaims);
  EXPECT_THAT(JwsRefusal(token), HasSubstr("\"crit\""));
}

TEST(ParseJws, RefusesKidOrTypNotAString) {
  EXPECT_EQ(JwsRefusal(RsaKey().SignWithHeader({{"alg", "RS256"}, {"kid", 1}}, kTokenClaims)),
            "token header's \"kid\" is not a string");
  EXPECT_EQ(JwsRefusal(RsaKey().SignWithHeader({{"alg", "RS256"}, {"typ", json::array()}}, kTokenClaims)),
            "token header's \"typ\" is not a string");
}

TEST(ParseJws, RefusesTokensOverTheSizeLimitUnread) {
  json claims = kTokenClaims;
  claims["groups"] = std::string(kMaxTokenBytes, 'g');
  const std::string token = RsaKey().Sign(claims);
  ASSERT_GT(token.size(), kMaxTokenBytes);
  EXPECT_EQ(JwsRefusal(token), "token is " + std::to_string(token.size()) + " bytes, more than 65536");
  // Just under the limit: parsed.
  claims["groups"] = std::string(kMaxTokenBytes / 2, 'g');
  EXPECT_EQ(JwsRefusal(RsaKey().Sign(claims)), "");
}

TEST(ParseJws, RefusesWhatIsNotThreeParts) {
  const std::string token = RsaKey().Sign(kTokenClaims);
  const std::string two_parts = token.substr(0, token.rfind('.'));
  for (const std::string& bad :
       {std::string(), std::string("."), std::string("abc"), two_parts, token + ".", token + ".c2ln", "." + token}) {
    EXPECT_THAT(JwsRefusal(bad), HasSubstr("not three base64url parts")) << bad;
  }
}

TEST(ParseJws, RefusesPaddedOrNonUrlBase64) {
  const std::string header = base::Base64UrlEncode(R"({"alg":"RS256"})");  // 15 bytes: "=" would pad it
  const std::string payload = base::Base64UrlEncode(kTokenClaims.dump());
  ASSERT_EQ(JwsRefusal(header + "." + payload + ".c2ln"), "");
  EXPECT_EQ(JwsRefusal(header + "=." + payload + ".c2ln"), "token header is not unpadded base64url");
  EXPECT_EQ(JwsRefusal(header + "." + payload + "=.c2ln"), "token payload is not unpadded base64url");
  EXPECT_EQ(JwsRefusal(header + "." + payload + ".c2lnbg=="), "token signature is not unpadded base64url");
  EXPECT_EQ(JwsRefusal(header + "." + payload + ".c2l+"), "token signature is not unpadded base64url");
  EXPECT_EQ(JwsRefusal(header + "." + payload + ".c2l/"), "token signature is not unpadded base64url");
  EXPECT_EQ(JwsRefusal(header + "." + payload + ".c2l*"), "token signature is not unpadded base64url");
  EXPECT_EQ(JwsRefusal(header + "." + payload + ".c"), "token signature is not unpadded base64url");  // 1 mod 4
  EXPECT_EQ(JwsRefusal("e yJ." + payload + ".c2ln"), "token header is not unpadded base64url");
}

TEST(ParseJws, RefusesHeaderOrPayloadThatIsNotAJsonObject) {
  const std::string header = base::Base64UrlEncode(R"({"alg":"RS256"})");
  const std::string payload = base::Base64UrlEncode(kTokenClaims.dump());
  EXPECT_EQ(JwsRefusal(base::Base64UrlEncode(R"(["RS256"])") + "." + payload + ".c2ln"),
            "token header is not a JSON object");
  EXPECT_EQ(JwsRefusal(base::Base64UrlEncode(R"("RS256")") + "." + payload + ".c2ln"),
            "token header is not a JSON object");
  EXPECT_EQ(JwsRefusal(header + "." + base::Base64UrlEncode(R"([{"sub":"alice"}])") + ".c2ln"),
            "token payload is not a JSON object");
  EXPECT_THAT(JwsRefusal(header + "." + base::Base64UrlEncode(R"({"sub":)") + ".c2ln"),
              HasSubstr("token payload is not JSON: \"malformed JSON"));
  EXPECT_THAT(JwsRefusal(base::Base64UrlEncode("") + "." + payload + ".c2ln"), HasSubstr("token header is not JSON"));
}

TEST(ParseJws, RefusesAnEmptySignature) {
  const std::string token = RsaKey().Sign(kTokenClaims);
  EXPECT_EQ(JwsRefusal(token.substr(0, token.rfind('.') + 1)), "token has no signature");
}

// What the log shows of a token is a short escaped excerpt: a forged
// token neither floods septad's log nor writes a line of its own into it.
TEST(ParseJws, MessagesQuoteOnlyAShortEscapedExcerpt) {
  const std::string long_alg = JwsRefusal(CompactToken({{"alg", std::string(10'000, 'A')}}, kTokenClaims, "sig"));
  EXPECT_LT(long_alg.size(), 160u) << long_alg;
  EXPECT_THAT(long_alg, HasSubstr("AAA\"... (10000 bytes) is not accepted"));

  const std::string control =
      JwsRefusal(CompactToken({{"alg", "HS256\n2026-01-01 INFO forged \"line\""}}, kTokenClaims, "s"));
  EXPECT_THAT(control, Not(HasSubstr("\n")));
  EXPECT_THAT(control, HasSubstr(R"("HS256\n2026-01-01 INFO forged \"line\"")"));

  // A number beyond a double: the parser's message quotes it, the log an excerpt.
  const std::string big_number = base::Base64UrlEncode(R"({"alg":"RS256"})") + "." +
                                 base::Base64UrlEncode(R"({"x":1)" + std::string(5'000, '0') + "}") + ".c2ln";
  const std::string number = JwsRefusal(big_number);
  EXPECT_THAT(number, HasSubstr("token payload is not JSON"));
  EXPECT_LT(number.size(), 160u) << number;
}

}  // namespace
}  // namespace septa::oidc
