#include "common/http_url.h"

#include <gtest/gtest.h>

namespace septa {
namespace {

TEST(HttpUrl, SplitsOriginAuthorityAndTarget) {
  const auto keycloak = ParseHttpUrl("https://idp.example.com:8443/realms/acme");
  ASSERT_TRUE(keycloak);
  EXPECT_TRUE(keycloak->https);
  EXPECT_EQ(keycloak->origin, "https://idp.example.com:8443");
  EXPECT_EQ(keycloak->authority, "idp.example.com:8443");
  EXPECT_EQ(keycloak->target, "/realms/acme");
  const auto bare = ParseHttpUrl("http://127.0.0.1:5556");
  ASSERT_TRUE(bare);
  EXPECT_FALSE(bare->https);
  EXPECT_EQ(bare->target, "/");
  const auto no_host = ParseHttpUrl("https:///jwks");
  ASSERT_TRUE(no_host);
  EXPECT_EQ(no_host->authority, "");
  EXPECT_FALSE(ParseHttpUrl("ftp://idp.example.com/"));
  EXPECT_FALSE(ParseHttpUrl("idp.example.com"));
}

TEST(HttpUrl, PlainHttpIsForLoopbackHostsOnly) {
  for (const char* loopback : {"127.0.0.1", "127.0.0.1:5556", "localhost:80", "[::1]", "[::1]:8080"}) {
    EXPECT_TRUE(IsLoopbackAuthority(loopback)) << loopback;
  }
  for (const char* other : {"idp.example.com", "127.0.0.2", "localhost.example.com", "[::2]:80", ""}) {
    EXPECT_FALSE(IsLoopbackAuthority(other)) << other;
  }
}

}  // namespace
}  // namespace septa
