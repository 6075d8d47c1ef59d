#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <thread>

#include "services/kube/config.h"
#include "tests/support/fake_clock.h"
#include "tests/support/hostile_documents.h"
#include "tests/support/temp_dir.h"

namespace septa::kube {
namespace {

using namespace std::chrono_literals;

constexpr const char* kKubeconfig = R"(
apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: c1
  cluster:
    server: https://10.0.0.1:6443
    certificate-authority-data: aGVsbG8=
    tls-server-name: api.internal
- name: c2
  cluster: {server: https://c2.example:443, insecure-skip-tls-verify: true}
users:
- name: tok
  user: {token: abc}
- name: plugin
  user:
    exec: {command: /bin/echo, args: [x], env: [{name: A, value: b}], apiVersion: client.authentication.k8s.io/v1}
contexts:
- name: dev
  context: {cluster: c1, user: tok, namespace: team}
- name: prod
  context: {cluster: c2, user: plugin}
)";

// A kubeconfig is read within the document bounds (common/documents.h):
// an alias bomb, or an alias inside its own node, is refused as such.
TEST(kubeconfig, AnAliasBombOrCycleIsRefused) {
  auto bomb = ParseKubeconfig(std::string(kKubeconfig) + test::YamlAliasBomb(5));
  ASSERT_FALSE(bomb.ok());
  EXPECT_EQ(bomb.status().code(), Code::kInvalidArgument);
  EXPECT_NE(bomb.status().message().find("kubeconfig: the document expands excessively through aliases"),
            std::string::npos)
      << bomb.status().message();
  auto cycle = ParseKubeconfig(std::string(kKubeconfig) + "extensions: &e [*e]\n");
  ASSERT_FALSE(cycle.ok());
  EXPECT_NE(cycle.status().message().find("an alias refers to a node that contains it"), std::string::npos)
      << cycle.status().message();
}

TEST(kubeconfig, CurrentContext) {
  auto c = ParseKubeconfig(kKubeconfig);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server, "https://10.0.0.1:6443");
  EXPECT_EQ(c->ca_pem, "hello");
  EXPECT_EQ(c->tls_server_name, "api.internal");
  EXPECT_EQ(c->token, "abc");
  EXPECT_EQ(c->ns, "team");
}

// Issue 9: the old decoder skipped every character outside the alphabet and
// handed garbage on as a CA; the shared decoder refuses it by field.
TEST(kubeconfig, DataThatIsNotBase64IsRefusedByField) {
  std::string config = kKubeconfig;
  config.replace(config.find("aGVsbG8="), 8, "aGVs*bG8=");
  auto c = ParseKubeconfig(config);
  EXPECT_EQ(c.status().code(), Code::kInvalidArgument);
  ASSERT_EQ(c.status().violations().size(), 1u) << c.status().ToString();
  EXPECT_EQ(c.status().violations()[0].field, "certificate-authority-data");
}

TEST(kubeconfig, NamedContextWithExecAndInsecure) {
  auto c = ParseKubeconfig(kKubeconfig, "prod");
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(c->insecure_skip_tls_verify);
  ASSERT_TRUE(c->exec.has_value());
  EXPECT_EQ(c->exec->command, "/bin/echo");
  EXPECT_EQ(c->exec->env.at("A"), "b");
  EXPECT_EQ(c->ns, "default");
  EXPECT_EQ(ParseKubeconfig(kKubeconfig, "missing").status().code(), Code::kNotFound);
  EXPECT_EQ(ParseKubeconfig("{{{").status().code(), Code::kInvalidArgument);
  EXPECT_FALSE(ParseKubeconfig("").ok());
}

using test::TempDir;

TEST(kubeCredentials, TokenFileIsReReadWhenItRotates) {
  TempDir dir;
  ClientConfig config;
  config.token_file = dir.Write("token", "first\n");
  FakeClock clock;
  Credentials creds(config, clock);
  EXPECT_EQ(*creds.AuthorizationHeader(), "Bearer first");
  std::this_thread::sleep_for(20ms);  // a distinct modification time
  dir.Write("token", "second\n");
  EXPECT_EQ(*creds.AuthorizationHeader(), "Bearer second");
}

TEST(kubeCredentials, ExecPluginTokenIsCachedUntilItExpires) {
  TempDir dir;
  std::string counter = dir.path() + "/calls";
  std::string plugin =
      dir.Write("plugin.sh",
                "#!/bin/sh\necho x >> " + counter +
                    "\n"
                    "echo '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
                    "\"status\":{\"token\":\"tok-'$(wc -l < " +
                    counter +
                    " | tr -d ' ')'\","
                    "\"expirationTimestamp\":\"2027-01-15T08:00:00Z\"}}'\n",
                true);
  ClientConfig config;
  config.exec = ExecConfig{plugin, {}, {}, "client.authentication.k8s.io/v1"};
  FakeClock clock(std::chrono::system_clock::from_time_t(1'800'000'000));  // 2027-01-15T08:00:00Z
  clock.Set(std::chrono::system_clock::from_time_t(1'800'000'000 - 60));
  Credentials creds(config, clock);
  EXPECT_EQ(*creds.AuthorizationHeader(), "Bearer tok-1");
  EXPECT_EQ(*creds.AuthorizationHeader(), "Bearer tok-1") << "cached";
  clock.Advance(120s);  // past expirationTimestamp
  EXPECT_EQ(*creds.AuthorizationHeader(), "Bearer tok-2");
  config.exec->command = dir.path() + "/missing";
  Credentials broken(config, clock);
  EXPECT_EQ(broken.AuthorizationHeader().status().code(), Code::kUnauthenticated);
}

TEST(kubeInCluster, ReadsTheServiceAccount) {
  TempDir dir;
  dir.Write("token", "sa-token");
  dir.Write("ca.crt", "CA");
  dir.Write("namespace", "septa-system");
  setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
  setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  auto c = InClusterConfig(dir.path());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server, "https://10.96.0.1:443");
  EXPECT_EQ(c->ns, "septa-system");
  EXPECT_EQ(c->ca_pem, "CA");
  FakeClock clock;
  Credentials creds(*c, clock);
  EXPECT_EQ(*creds.AuthorizationHeader(), "Bearer sa-token");
  unsetenv("KUBERNETES_SERVICE_HOST");
  EXPECT_EQ(InClusterConfig(dir.path()).status().code(), Code::kFailedPrecondition);
}

}  // namespace
}  // namespace septa::kube
