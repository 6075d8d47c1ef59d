// common/ip_address.h against inet_pton(3), whose forms it promises:
// handpicked literals and non-literals, then every string of a small
// alphabet that a random walk reaches.
#include "common/ip_address.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <random>
#include <string>

namespace septa {
namespace {

bool InetPton(const std::string& text, int family) {
  in6_addr parsed;  // large enough for either family
  return ::inet_pton(family, text.c_str(), &parsed) == 1;
}

TEST(IpAddress, LiteralsOfEitherFamily) {
  for (const std::string ip :
       {"127.0.0.2", "10.0.0.7", "0.0.0.0", "255.255.255.255", "::1", "::", "fd00::7", "::ffff:10.0.0.1",
        "1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7::", "::2:3:4:5:6:7:8", "1:2:3:4:5:6:1.2.3.4", "FE80::ABCD"}) {
    EXPECT_TRUE(IsIpAddress(ip)) << ip;
  }
}

TEST(IpAddress, NamesPortsBracketsZonesAndMalformedGroupsAreNot) {
  for (const std::string text : {"",
                                 "localhost",
                                 "septa.example.com",
                                 "cafe",
                                 "10.0.0.7:6444",
                                 "[::1]",
                                 "fe80::1%eth0",
                                 "10.0.0",
                                 "256.0.0.1",
                                 "10.0.0.1 ",
                                 "010.0.0.1",
                                 "1.2.3.4.5",
                                 "::::",
                                 "a:b",
                                 ":::",
                                 "1::2::3",
                                 "1:2:3:4:5:6:7:8:9",
                                 "1:2:3:4:5:6:7:8::",
                                 ":1::",
                                 "1:",
                                 "12345::",
                                 "1.2.3.4::",
                                 "::1.2.3",
                                 "g::1"}) {
    EXPECT_FALSE(IsIpAddress(text)) << text;
  }
}

TEST(IpAddress, AgreesWithInetPton) {
  const std::string alphabet = "0123456789af:.";
  std::mt19937 random(42);
  std::uniform_int_distribution<std::size_t> length(0, 18);
  std::uniform_int_distribution<std::size_t> letter(0, alphabet.size() - 1);
  int literals = 0;
  for (int i = 0; i < 200000; ++i) {
    std::string text;
    for (std::size_t n = length(random); n > 0; --n) text += alphabet[letter(random)];
    ASSERT_EQ(IsIpv4Address(text), InetPton(text, AF_INET)) << '"' << text << '"';
    ASSERT_EQ(IsIpv6Address(text), InetPton(text, AF_INET6)) << '"' << text << '"';
    literals += IsIpAddress(text);
  }
  EXPECT_GT(literals, 100);  // the walk reached literals, not only garbage
}

}  // namespace
}  // namespace septa
