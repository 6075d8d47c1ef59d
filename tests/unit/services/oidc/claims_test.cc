#include "services/oidc/claims.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "common/time_point.h"

namespace septa::oidc {
namespace {

using nlohmann::json;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const TimePoint kNow = *ParseRfc3339("2026-11-30T10:05:00Z");

std::int64_t EpochSeconds(TimePoint t) { return std::chrono::duration_cast<seconds>(t.time_since_epoch()).count(); }

ClaimChecks Checks() {
  return ClaimChecks{.issuer = "https://issuer.example", .audience = "septa", .now = kNow, .nonce = std::nullopt};
}

json ValidClaims() {
  return {{"iss", "https://issuer.example"},
          {"sub", "248289761001"},
          {"aud", "septa"},
          {"exp", EpochSeconds(kNow + std::chrono::minutes(10))},
          {"iat", EpochSeconds(kNow)},
          {"nbf", EpochSeconds(kNow)}};
}

// The message CheckClaims refuses `claims` with ("" when they pass).
std::string ClaimsRefusal(const json& claims, const ClaimChecks& checks = Checks()) {
  const Status status = CheckClaims(claims, checks);
  if (status.ok()) return "";
  EXPECT_EQ(status.code(), Code::kUnauthenticated);
  return status.message();
}

json With(const char* claim, json value) {
  json claims = ValidClaims();
  claims[claim] = std::move(value);
  return claims;
}

json Without(const char* claim) {
  json claims = ValidClaims();
  claims.erase(claim);
  return claims;
}

TEST(CheckClaims, AcceptsValidClaims) {
  EXPECT_EQ(ClaimsRefusal(ValidClaims()), "");
  EXPECT_EQ(ClaimsRefusal(Without("nbf")), "");  // nbf and iat are optional
  EXPECT_EQ(ClaimsRefusal(Without("iat")), "");
}

TEST(CheckClaims, RefusesAnExpiredToken) {
  EXPECT_EQ(ClaimsRefusal(With("exp", EpochSeconds(*ParseRfc3339("2026-11-30T10:00:00Z")))),
            "token expired at 2026-11-30T10:00:00Z (now 2026-11-30T10:05:00Z, leeway 60s)");
}

TEST(CheckClaims, ExpiryWithinTheLeewayPasses) {
  EXPECT_EQ(ClaimsRefusal(With("exp", EpochSeconds(kNow - seconds(59)))), "");
  // At now - leeway exactly, expired.
  EXPECT_THAT(ClaimsRefusal(With("exp", EpochSeconds(kNow - seconds(60)))), HasSubstr("token expired at"));
  ClaimChecks strict = Checks();
  strict.leeway = seconds(0);
  EXPECT_THAT(ClaimsRefusal(With("exp", EpochSeconds(kNow)), strict), HasSubstr("token expired at"));
  EXPECT_EQ(ClaimsRefusal(With("exp", EpochSeconds(kNow) + 1), strict), "");
}

TEST(CheckClaims, RefusesNotBeforeInTheFuture) {
  EXPECT_EQ(ClaimsRefusal(With("nbf", EpochSeconds(kNow + seconds(120)))),
            "token is not valid before 2026-11-30T10:07:00Z (now 2026-11-30T10:05:00Z, leeway 60s)");
  EXPECT_EQ(ClaimsRefusal(With("nbf", EpochSeconds(kNow + seconds(60)))), "");
}

TEST(CheckClaims, RefusesIssuedInTheFuture) {
  EXPECT_EQ(ClaimsRefusal(With("iat", EpochSeconds(kNow + seconds(61)))),
            "token issued in the future, at 2026-11-30T10:06:01Z (now 2026-11-30T10:05:00Z, leeway 60s)");
  EXPECT_EQ(ClaimsRefusal(With("iat", EpochSeconds(kNow + seconds(60)))), "");
}

TEST(CheckClaims, RefusesAnotherIssuer) {
  EXPECT_EQ(ClaimsRefusal(With("iss", "https://evil.example")),
            R"("iss" is "https://evil.example", not "https://issuer.example")");
  EXPECT_THAT(ClaimsRefusal(With("iss", "https://issuer.example/")), HasSubstr("\"iss\" is"));  // exact match only
  EXPECT_EQ(ClaimsRefusal(Without("iss")), R"("iss" is missing)");
  EXPECT_EQ(ClaimsRefusal(With("iss", json::array({"https://issuer.example"}))), R"("iss" is not a string)");
}

TEST(CheckClaims, AudienceIsAStringOrAnArrayContainingIt) {
  EXPECT_EQ(ClaimsRefusal(With("aud", "septa")), "");
  EXPECT_EQ(ClaimsRefusal(With("aud", {"kubernetes", "septa"})), "");
  EXPECT_EQ(ClaimsRefusal(With("aud", "kubernetes")), R"("aud" does not contain "septa")");
  EXPECT_EQ(ClaimsRefusal(With("aud", {"kubernetes", "septa-dev"})), R"("aud" does not contain "septa")");
  EXPECT_EQ(ClaimsRefusal(With("aud", json::array())), R"("aud" does not contain "septa")");
  EXPECT_EQ(ClaimsRefusal(Without("aud")), R"("aud" is missing)");
  EXPECT_EQ(ClaimsRefusal(With("aud", {"septa", 7})), R"("aud" is not a string or an array of strings)");
  EXPECT_EQ(ClaimsRefusal(With("aud", json{{"septa", true}})), R"("aud" is not a string or an array of strings)");
}

TEST(CheckClaims, NonceMustMatchWhenExpected) {
  ClaimChecks sign_in = Checks();
  sign_in.nonce = "n-0S6_WzA2Mj";
  EXPECT_EQ(ClaimsRefusal(With("nonce", "n-0S6_WzA2Mj"), sign_in), "");
  EXPECT_EQ(ClaimsRefusal(ValidClaims(), sign_in), R"("nonce" is missing)");
  EXPECT_EQ(ClaimsRefusal(With("nonce", "n-0S6_WzA2Mk"), sign_in), R"("nonce" is not the one this sign-in sent)");
  EXPECT_EQ(ClaimsRefusal(With("nonce", 1), sign_in), R"("nonce" is not the one this sign-in sent)");
  EXPECT_EQ(ClaimsRefusal(With("nonce", "anything")), "");  // not a sign-in: not checked
}

TEST(CheckClaims, ExpiryIsARequiredNumber) {
  EXPECT_EQ(ClaimsRefusal(Without("exp")), R"("exp" is missing)");
  EXPECT_EQ(ClaimsRefusal(With("exp", std::to_string(EpochSeconds(kNow) + 600))), R"("exp" is not a number)");
  EXPECT_EQ(ClaimsRefusal(With("exp", true)), R"("exp" is not a number)");
  EXPECT_EQ(ClaimsRefusal(With("exp", nullptr)), R"("exp" is not a number)");
}

TEST(CheckClaims, FractionalDatesAreRead) {
  const double exp = static_cast<double>(EpochSeconds(kNow)) + 600.25;
  ASSERT_EQ(ClaimsRefusal(With("exp", exp)), "");
  EXPECT_EQ(ExpireTime(With("exp", exp)), kNow + seconds(600) + std::chrono::milliseconds(250));
  EXPECT_THAT(ClaimsRefusal(With("exp", static_cast<double>(EpochSeconds(kNow)) - 60.5)), HasSubstr("token expired"));
  EXPECT_THAT(ClaimsRefusal(With("nbf", static_cast<double>(EpochSeconds(kNow)) + 60.5)),
              HasSubstr("not valid before"));
}

// TimePoint holds the years 1678 to 2261: dates outside are refused, not
// converted with an overflow.
TEST(CheckClaims, RefusesDatesOutOfRange) {
  const std::string out_of_range = R"("exp" is out of range (a date between the years 1678 and 2261))";
  EXPECT_EQ(ClaimsRefusal(With("exp", 1e300)), out_of_range);
  EXPECT_EQ(ClaimsRefusal(With("exp", -1e300)), out_of_range);
  EXPECT_EQ(ClaimsRefusal(With("exp", 1e10)), out_of_range);  // the year 2286
  EXPECT_EQ(ClaimsRefusal(With("exp", std::numeric_limits<std::int64_t>::max())), out_of_range);
  EXPECT_EQ(ClaimsRefusal(With("exp", std::numeric_limits<std::int64_t>::min())), out_of_range);
  EXPECT_EQ(ClaimsRefusal(With("exp", std::numeric_limits<std::uint64_t>::max())), out_of_range);
  EXPECT_EQ(ClaimsRefusal(With("exp", std::numeric_limits<double>::infinity())), out_of_range);
  EXPECT_EQ(ClaimsRefusal(With("exp", std::numeric_limits<double>::quiet_NaN())), out_of_range);
  EXPECT_EQ(ClaimsRefusal(With("nbf", 1e300)), R"("nbf" is out of range (a date between the years 1678 and 2261))");
  EXPECT_EQ(ClaimsRefusal(With("iat", -1e19)), R"("iat" is out of range (a date between the years 1678 and 2261))");
  // In range at both ends: 1678 is long expired, 2261 far ahead.
  EXPECT_THAT(ClaimsRefusal(With("exp", -9'000'000'000)), HasSubstr("token expired at 1684-"));
  EXPECT_EQ(ClaimsRefusal(With("exp", 9'000'000'000)), "");
}

TEST(CheckClaims, RefusesClaimsThatAreNotAnObject) {
  EXPECT_EQ(ClaimsRefusal(json::array()), "token claims are not a JSON object");
}

TEST(ExpireTime, IsTheExpiryClaim) {
  EXPECT_EQ(ExpireTime(ValidClaims()), kNow + std::chrono::minutes(10));
  EXPECT_EQ(ExpireTime(Without("exp")), TimePoint::min());  // unchecked: already expired
}

// The message ExtractIdentity refuses `claims` with ("" when it passes).
std::string IdentityRefusal(const json& claims, std::string_view groups_claim = "groups") {
  const Result<Identity> identity = ExtractIdentity(claims, "preferred_username", groups_claim);
  if (identity.ok()) return "";
  EXPECT_EQ(identity.status().code(), Code::kUnauthenticated);
  return identity.status().message();
}

json IdentityClaims(json groups) {
  json claims = ValidClaims();
  claims["preferred_username"] = "alice";
  claims["groups"] = std::move(groups);
  return claims;
}

TEST(ExtractIdentity, ReadsSubjectUsernameAndGroups) {
  const Result<Identity> identity =
      ExtractIdentity(IdentityClaims({"ml-team", "admins"}), "preferred_username", "groups");
  ASSERT_TRUE(identity.ok()) << identity.status().ToString();
  EXPECT_EQ(identity->subject, "248289761001");
  EXPECT_EQ(identity->username, "alice");
  EXPECT_THAT(identity->groups, ElementsAre("admins", "ml-team"));
}

TEST(ExtractIdentity, SubjectIsOptional) {
  json claims = IdentityClaims({"admins"});
  claims.erase("sub");
  const Result<Identity> identity = ExtractIdentity(claims, "preferred_username", "groups");
  ASSERT_TRUE(identity.ok()) << identity.status().ToString();
  EXPECT_EQ(identity->subject, "");
  claims["sub"] = 42;
  EXPECT_EQ(IdentityRefusal(claims), R"("sub" is not a string)");
  claims["sub"] = std::string(kMaxNameBytes + 1, 's');
  EXPECT_EQ(IdentityRefusal(claims), R"("sub": must be at most 256 bytes, got 257)");
}

TEST(ExtractIdentity, RefusesAMissingOrUnusableUsername) {
  json claims = IdentityClaims({"admins"});
  claims.erase("preferred_username");
  EXPECT_EQ(IdentityRefusal(claims), R"(username claim "preferred_username" is missing)");
  claims["preferred_username"] = json::array({"alice"});
  EXPECT_EQ(IdentityRefusal(claims), R"(username claim "preferred_username" is not a string)");
  claims["preferred_username"] = "";
  EXPECT_EQ(IdentityRefusal(claims), R"(username claim "preferred_username" is empty)");
  claims["preferred_username"] = std::string(kMaxNameBytes, 'a');
  EXPECT_EQ(IdentityRefusal(claims), "");
  claims["preferred_username"] = std::string(kMaxNameBytes + 1, 'a');
  EXPECT_EQ(IdentityRefusal(claims), R"(username claim "preferred_username": must be at most 256 bytes, got 257)");
  claims["preferred_username"] = "alice\x1b[2J";
  EXPECT_EQ(IdentityRefusal(claims), R"(username claim "preferred_username": must not contain control or bidi )"
                                     R"(formatting characters (found \u001b at byte 5))");
  claims["preferred_username"] = "alice\u202e";
  EXPECT_THAT(IdentityRefusal(claims), HasSubstr("must not contain control or bidi formatting characters"));
}

TEST(ExtractIdentity, GroupsMayBeASingleString) {
  const Result<Identity> identity = ExtractIdentity(IdentityClaims("admins"), "preferred_username", "groups");
  ASSERT_TRUE(identity.ok()) << identity.status().ToString();
  EXPECT_THAT(identity->groups, ElementsAre("admins"));
  EXPECT_EQ(IdentityRefusal(IdentityClaims("")), R"(groups claim "groups" is empty)");
}

TEST(ExtractIdentity, GroupsAreSortedWithoutDuplicates) {
  const Result<Identity> identity =
      ExtractIdentity(IdentityClaims({"b", "a", "c", "a", "b"}), "preferred_username", "groups");
  ASSERT_TRUE(identity.ok()) << identity.status().ToString();
  EXPECT_THAT(identity->groups, ElementsAre("a", "b", "c"));
}

TEST(ExtractIdentity, GroupsAreOptional) {
  json claims = IdentityClaims("admins");
  claims.erase("groups");
  const Result<Identity> identity = ExtractIdentity(claims, "preferred_username", "groups");
  ASSERT_TRUE(identity.ok()) << identity.status().ToString();
  EXPECT_TRUE(identity->groups.empty());
  // No groups claim configured: even a malformed one is not read.
  const Result<Identity> unread = ExtractIdentity(IdentityClaims(7), "preferred_username", "");
  ASSERT_TRUE(unread.ok()) << unread.status().ToString();
  EXPECT_TRUE(unread->groups.empty());
}

std::vector<std::string> NumberedGroups(std::size_t count) {
  std::vector<std::string> groups;
  for (std::size_t i = 0; i < count; ++i) groups.push_back("group-" + std::to_string(i));
  return groups;
}

// More groups than kMaxGroups refuse the token: a cut list would grant by
// the groups that are left.
TEST(ExtractIdentity, AtMost1000Groups) {
  const Result<Identity> identity =
      ExtractIdentity(IdentityClaims(NumberedGroups(kMaxGroups)), "preferred_username", "groups");
  ASSERT_TRUE(identity.ok()) << identity.status().ToString();
  EXPECT_EQ(identity->groups.size(), kMaxGroups);
  EXPECT_EQ(IdentityRefusal(IdentityClaims(NumberedGroups(kMaxGroups + 1))),
            R"(groups claim "groups" holds 1001 groups, more than 1000)");
  EXPECT_EQ(IdentityRefusal(IdentityClaims(NumberedGroups(10'000))),
            R"(groups claim "groups" holds 10000 groups, more than 1000)");
}

TEST(ExtractIdentity, RefusesUnusableGroups) {
  EXPECT_EQ(IdentityRefusal(IdentityClaims({"admins", 7})), R"(groups claim "groups"[1] is not a string)");
  EXPECT_EQ(IdentityRefusal(IdentityClaims({"admins", json::array({"x"})})),
            R"(groups claim "groups"[1] is not a string)");
  EXPECT_EQ(IdentityRefusal(IdentityClaims({"admins", ""})), R"(groups claim "groups"[1] is empty)");
  EXPECT_EQ(IdentityRefusal(IdentityClaims({std::string(kMaxNameBytes + 1, 'g')})),
            R"(groups claim "groups"[0]: must be at most 256 bytes, got 257)");
  EXPECT_EQ(IdentityRefusal(IdentityClaims({"admins", "ops\nroot"})),
            R"(groups claim "groups"[1]: must not contain control or bidi formatting characters (found \n at byte 3))");
  EXPECT_EQ(IdentityRefusal(IdentityClaims({"admins", R"(ops\nroot)"})), "");  // a backslash and an n
  EXPECT_EQ(IdentityRefusal(IdentityClaims(json{{"admins", true}})),
            R"(groups claim "groups" is not a string or an array of strings)");
  EXPECT_EQ(IdentityRefusal(IdentityClaims(nullptr)),
            R"(groups claim "groups" is not a string or an array of strings)");
}

}  // namespace
}  // namespace septa::oidc
