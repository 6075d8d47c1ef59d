#include "services/cli/config_file.h"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/support/hostile_documents.h"

namespace septa::cli {
namespace {

TEST(ConfigFile, ReadsServerAndToken) {
  auto config = ParseConfigFile("server: septa.example.com:9090\ntoken: septa_abc\n", "c.yaml");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->server, "septa.example.com:9090");
  EXPECT_EQ(config->token, "septa_abc");
}

TEST(ConfigFile, ReadsTlsSettings) {
  auto config = ParseConfigFile("ca_file: /etc/septa/ca.pem\ntls: true\n", "c.yaml");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->ca_file, "/etc/septa/ca.pem");
  EXPECT_EQ(config->tls, true);
  EXPECT_EQ(ParseConfigFile("tls: false\n", "c.yaml")->tls, false);
  EXPECT_EQ(ParseConfigFile("tls: yes please\n", "c.yaml").status().message(), "c.yaml: \"tls\" must be true or false");
}

TEST(ConfigFile, EveryKeyIsOptional) {
  auto config = ParseConfigFile("server: h:1\n", "c.yaml");
  ASSERT_TRUE(config.ok());
  EXPECT_EQ(config->server, "h:1");
  EXPECT_FALSE(config->token.has_value());
  auto empty = ParseConfigFile("", "c.yaml");
  ASSERT_TRUE(empty.ok());
  EXPECT_FALSE(empty->server.has_value());
}

TEST(ConfigFile, UnknownKeyIsNamed) {
  auto config = ParseConfigFile("server: h:1\ntokn: x\n", "/home/ada/.config/septa/config.yaml");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(
      config.status().message(),
      "/home/ada/.config/septa/config.yaml: unknown key \"tokn\" (known keys: server, token, ca_file, tls, login)");
}

TEST(ConfigFile, MalformedYamlNamesThePosition) {
  auto config = ParseConfigFile("server: [h:1\n", "c.yaml");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().message().rfind("c.yaml: malformed YAML at line ", 0), 0u) << config.status().message();
}

TEST(ConfigFile, RefusesNonMappingsAndNonScalars) {
  EXPECT_EQ(ParseConfigFile("- a\n", "c.yaml").status().message(),
            "c.yaml: must be a mapping of server, token, ca_file, tls and login");
  EXPECT_EQ(ParseConfigFile("token: [a, b]\n", "c.yaml").status().message(), "c.yaml: \"token\" must be a string");
}

TEST(ConfigFile, MissingDefaultFileIsEmptyButANamedOneMustExist) {
  const auto missing = std::filesystem::path(testing::TempDir()) / "no-such-septa-config.yaml";
  auto implicit = LoadConfigFile(missing, false);
  ASSERT_TRUE(implicit.ok());
  EXPECT_FALSE(implicit->server.has_value());
  auto named = LoadConfigFile(missing, true);
  ASSERT_FALSE(named.ok());
  EXPECT_EQ(named.status().message(), "config file " + missing.string() + " does not exist");
}

TEST(ConfigFile, LoadsAFile) {
  const auto path = std::filesystem::path(testing::TempDir()) / "septactl-config-test.yaml";
  std::ofstream(path) << "token: t0k\n";
  auto config = LoadConfigFile(path, true);
  std::filesystem::remove(path);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->token, "t0k");
}

TEST(ConfigFile, DefaultPathIsUnderHome) {
  EXPECT_EQ(DefaultConfigPath("/home/ada"), std::filesystem::path("/home/ada/.config/septa/config.yaml"));
}

// Read within the document bounds (common/documents.h).
TEST(ConfigFile, AnAliasBombIsRefused) {
  auto config = ParseConfigFile(test::YamlAliasBomb(5), "c.yaml");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().message().rfind("c.yaml: the document expands excessively through aliases", 0), 0u)
      << config.status().message();
}

}  // namespace
}  // namespace septa::cli
