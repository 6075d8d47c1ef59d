#include "services/base/ip_address.h"

#include <gtest/gtest.h>

namespace septa::base {
namespace {

TEST(IpAddress, LiteralsOfEitherFamily) {
  for (const std::string ip : {"127.0.0.2", "10.0.0.7", "::1", "fd00::7", "::ffff:10.0.0.1"}) {
    EXPECT_TRUE(IsIpAddress(ip)) << ip;
  }
}

TEST(IpAddress, NamesPortsBracketsAndZonesAreNot) {
  for (const std::string text : {"", "localhost", "septa.example.com", "cafe", "10.0.0.7:6444", "[::1]", "fe80::1%eth0",
                                 "10.0.0", "256.0.0.1", "10.0.0.1 "}) {
    EXPECT_FALSE(IsIpAddress(text)) << text;
  }
}

}  // namespace
}  // namespace septa::base
