#include "services/core/kubeconfig.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "services/base/base64.h"

namespace septa::core {
namespace {

// Read back as kubectl would: a YAML parser, then the fields it looks at.
struct Read {
  std::string cluster, server, ca, user, user_ref, certificate, key, token, context, context_cluster, ns, current;
};

Read Parse(const std::string& text) {
  YAML::Node doc = YAML::Load(text);
  Read r;
  EXPECT_EQ(doc["apiVersion"].as<std::string>(), "v1");
  EXPECT_EQ(doc["kind"].as<std::string>(), "Config");
  EXPECT_EQ(doc["clusters"].size(), 1u);
  EXPECT_EQ(doc["users"].size(), 1u);
  EXPECT_EQ(doc["contexts"].size(), 1u);
  r.cluster = doc["clusters"][0]["name"].as<std::string>();
  r.server = doc["clusters"][0]["cluster"]["server"].as<std::string>();
  r.ca = base::Base64Decode(doc["clusters"][0]["cluster"]["certificate-authority-data"].as<std::string>()).value();
  r.user = doc["users"][0]["name"].as<std::string>();
  const YAML::Node user = doc["users"][0]["user"];
  if (user["client-certificate-data"]) {
    r.certificate = base::Base64Decode(user["client-certificate-data"].as<std::string>()).value();
    r.key = base::Base64Decode(user["client-key-data"].as<std::string>()).value();
  }
  if (user["token"]) r.token = user["token"].as<std::string>();
  r.context = doc["contexts"][0]["name"].as<std::string>();
  r.context_cluster = doc["contexts"][0]["context"]["cluster"].as<std::string>();
  r.user_ref = doc["contexts"][0]["context"]["user"].as<std::string>();
  r.ns = doc["contexts"][0]["context"]["namespace"].as<std::string>();
  r.current = doc["current-context"].as<std::string>();
  return r;
}

TEST(KubeconfigTest, AClientCertificateKubeconfigReadsBackFieldByField) {
  const std::string text = RenderKubeconfig({.name = "acme-train",
                                             .server = "https://10.0.0.1:6444/vc/acme/train",
                                             .server_ca = "-----BEGIN CERTIFICATE-----\nCA\n",
                                             .user = "acme:tok1",
                                             .credential = KubeconfigClientCertificate{"CERT\n", "KEY\n"}});
  const Read r = Parse(text);
  EXPECT_EQ(r.cluster, "acme-train");
  EXPECT_EQ(r.server, "https://10.0.0.1:6444/vc/acme/train");
  EXPECT_EQ(r.ca, "-----BEGIN CERTIFICATE-----\nCA\n");
  EXPECT_EQ(r.user, "acme:tok1@acme-train");
  EXPECT_EQ(r.certificate, "CERT\n");
  EXPECT_EQ(r.key, "KEY\n");
  EXPECT_EQ(r.token, "");
  EXPECT_EQ(r.context, "acme-train");
  EXPECT_EQ(r.context_cluster, "acme-train");
  EXPECT_EQ(r.user_ref, "acme:tok1@acme-train");
  EXPECT_EQ(r.ns, "default");
  EXPECT_EQ(r.current, "acme-train");
  EXPECT_EQ(text.find('"'), std::string::npos) << "ordinary names stay plain:\n" << text;
}

TEST(KubeconfigTest, ABearerTokenKubeconfigCarriesTheTokenOnly) {
  const Read r = Parse(RenderKubeconfig({.name = "acme-train",
                                         .server = "https://127.0.0.1:6444",
                                         .server_ca = "CA",
                                         .user = "septa-admin",
                                         .credential = KubeconfigBearerToken{"-Zx_9tok"}}));
  EXPECT_EQ(r.token, "-Zx_9tok") << "a leading '-' would be a sequence entry unquoted";
  EXPECT_EQ(r.certificate, "");
  EXPECT_EQ(r.key, "");
  EXPECT_EQ(r.user, "septa-admin@acme-train");
}

TEST(KubeconfigTest, StringsYamlWouldReadOtherwiseAreQuoted) {
  for (const std::string odd :
       {"yes",         "No",       "null",      "on",         "0123",   "1.5",   "a: b",     "#x",         "x #y",
        "ends:",       "*alias",   "&anchor",   "!tag",       "[list]", "{map}", "'single'", "\"double\"", "tab\there",
        "line\nbreak", "bell\x07", "ünïcode",   "%directive", "@at",    "`tick", "|",        ">",          "",
        "- item",      "? key",    "trailing ", " leading"}) {
    const Read r = Parse(RenderKubeconfig(
        {.name = odd, .server = odd, .server_ca = "CA", .user = odd, .credential = KubeconfigBearerToken{odd}}));
    EXPECT_EQ(r.cluster, odd);
    EXPECT_EQ(r.server, odd);
    EXPECT_EQ(r.token, odd);
    EXPECT_EQ(r.user, odd + "@" + odd);
    EXPECT_EQ(r.user_ref, odd + "@" + odd);
    EXPECT_EQ(r.current, odd);
  }
}

TEST(KubeconfigTest, WordsAYaml11ParserResolvesAreQuotedSoTheyStayStrings) {
  // kubectl's parser (YAML 1.1) reads plain yes/on/null/0123 as a boolean,
  // null or number; the non-specific tag "!" is yaml-cpp's mark of a quoted scalar.
  for (const std::string word : {"yes", "No", "ON", "off", "y", "null", "0123", "1.5", "1e3"}) {
    YAML::Node doc = YAML::Load(RenderKubeconfig(
        {.name = word, .server = word, .server_ca = "CA", .user = "u", .credential = KubeconfigBearerToken{word}}));
    EXPECT_EQ(doc["current-context"].Tag(), "!") << word;
    EXPECT_EQ(doc["clusters"][0]["cluster"]["server"].Tag(), "!") << word;
    EXPECT_EQ(doc["users"][0]["user"]["token"].Tag(), "!") << word;
  }
  YAML::Node plain = YAML::Load(RenderKubeconfig(
      {.name = "yesterday", .server = "s", .server_ca = "CA", .user = "u", .credential = KubeconfigBearerToken{"t"}}));
  EXPECT_EQ(plain["current-context"].Tag(), "?") << "a word that merely starts like one stays plain";
}

TEST(KubeconfigTest, AnEmptyCaIsAnEmptyStringNotNull) {
  YAML::Node doc = YAML::Load(RenderKubeconfig(
      {.name = "a", .server = "https://a", .server_ca = "", .user = "u", .credential = KubeconfigBearerToken{"t"}}));
  const YAML::Node ca = doc["clusters"][0]["cluster"]["certificate-authority-data"];
  ASSERT_TRUE(ca.IsScalar());
  EXPECT_EQ(ca.as<std::string>(), "");
}

}  // namespace
}  // namespace septa::core
