// RunSeptactl up to the wire: help, usage errors, config file, missing
// token, and a server that is not there. Calls that reach septad are in
// tests/integration/cli/septactl_test.cc.
#include "services/cli/run.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace septa::cli {
namespace {

// Nothing listens on port 1 (privileged, unassigned in practice).
constexpr char kNoServer[] = "127.0.0.1:1";

struct Outcome {
  int exit_code;
  std::string out;
  std::string err;
};

Outcome Septactl(const std::vector<std::string>& args, const Environment& env = {}) {
  std::ostringstream out, err;
  const int code = RunSeptactl(args, env, out, err);
  return {code, out.str(), err.str()};
}

class ConfigHome : public testing::Test {
 protected:
  void SetUp() override {
    home_ = std::filesystem::path(testing::TempDir()) /
            ("septactl-home-" + std::string(testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::create_directories(home_ / ".config" / "septa");
  }
  void TearDown() override { std::filesystem::remove_all(home_); }

  void WriteConfig(const std::string& text) { std::ofstream(home_ / ".config" / "septa" / "config.yaml") << text; }
  Environment Env() const { return {home_.string(), std::nullopt}; }

  std::filesystem::path home_;
};

TEST(Run, HelpGoesToStdoutAndSucceeds) {
  const auto r = Septactl({"tenant", "--help"});
  EXPECT_EQ(r.exit_code, kExitOk);
  EXPECT_NE(r.out.find("create"), std::string::npos);
  EXPECT_EQ(r.err, "");
}

TEST(Run, UsageErrorIsOneLineAndExitTwo) {
  const auto r = Septactl({"tenant", "create", "acme"});
  EXPECT_EQ(r.exit_code, kExitUsage);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("septactl: INVALID_ARGUMENT: --tier is required", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
}

TEST(Run, MissingTokenIsUnauthenticatedBeforeAnyCall) {
  const auto r = Septactl({"--server", kNoServer, "tier", "list"});
  EXPECT_EQ(r.exit_code, kExitFailure);
  EXPECT_EQ(r.err,
            "septactl: UNAUTHENTICATED: no token: run septactl login, pass --token or --oidc-token-env, set "
            "SEPTA_TOKEN, or put token: in the config file\n");
}

TEST(Run, AnOidcTokenVariableThatIsNotSetIsNamedBeforeAnyCall) {
  const auto r = Septactl({"--server", kNoServer, "--oidc-token-env", "CI_TOKEN", "tier", "list"});
  EXPECT_EQ(r.exit_code, kExitFailure);
  EXPECT_EQ(r.err, "septactl: INVALID_ARGUMENT: --oidc-token-env: $CI_TOKEN is not set or empty\n");
}

TEST(Run, NoServerListeningIsOneLineNamingTheServer) {
  const auto r = Septactl({"--server", kNoServer, "--token", "t", "tenant", "list"});
  EXPECT_EQ(r.exit_code, kExitFailure);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("septactl: UNAVAILABLE: cannot reach septad at 127.0.0.1:1: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
}

TEST_F(ConfigHome, ServerAndTokenComeFromTheConfigFile) {
  WriteConfig(std::string("server: ") + kNoServer + "\ntoken: from-file\n");
  const auto r = Septactl({"tier", "list"}, Env());
  EXPECT_EQ(r.exit_code, kExitFailure);
  EXPECT_EQ(r.err.rfind("septactl: UNAVAILABLE: cannot reach septad at 127.0.0.1:1: ", 0), 0u) << r.err;
}

TEST_F(ConfigHome, FlagsWinOverTheConfigFile) {
  WriteConfig("server: config-host:9\n");
  const auto r = Septactl({"--server", kNoServer, "--token", "t", "tier", "list"}, Env());
  EXPECT_EQ(r.err.rfind("septactl: UNAVAILABLE: cannot reach septad at 127.0.0.1:1: ", 0), 0u) << r.err;
}

TEST_F(ConfigHome, UnknownConfigKeyIsAUsageError) {
  WriteConfig("server: h:1\nsever: typo\n");
  const auto r = Septactl({"tier", "list"}, Env());
  EXPECT_EQ(r.exit_code, kExitUsage);
  EXPECT_EQ(r.err, "septactl: INVALID_ARGUMENT: " + (home_ / ".config/septa/config.yaml").string() +
                       ": unknown key \"sever\" (known keys: server, token, ca_file, tls, login)\n");
}

TEST_F(ConfigHome, AnUnreadableCaFileIsAUsageErrorNamingTheFlag) {
  const std::string missing = (home_ / "no-ca.pem").string();
  const auto r = Septactl({"--server", kNoServer, "--token", "t", "--ca-file", missing, "tier", "list"}, Env());
  EXPECT_EQ(r.exit_code, kExitUsage);
  EXPECT_EQ(r.err, "septactl: INVALID_ARGUMENT: --ca-file: cannot read " + missing + ": No such file or directory\n");
  WriteConfig("ca_file: " + missing + "\n");
  const auto from_file = Septactl({"--server", kNoServer, "--token", "t", "tier", "list"}, Env());
  EXPECT_EQ(from_file.exit_code, kExitUsage);
  EXPECT_EQ(from_file.err, "septactl: INVALID_ARGUMENT: " + (home_ / ".config/septa/config.yaml").string() +
                               ": ca_file: cannot read " + missing + ": No such file or directory\n");
}

TEST_F(ConfigHome, ANamedConfigFileMustExist) {
  const auto r = Septactl({"--config", (home_ / "nope.yaml").string(), "tier", "list"}, Env());
  EXPECT_EQ(r.exit_code, kExitUsage);
  EXPECT_EQ(r.err, "septactl: INVALID_ARGUMENT: config file " + (home_ / "nope.yaml").string() + " does not exist\n");
}

// diff and apply: the documents are read before anything is sent, and a
// failure is exit 2 (1 is "differences").
Outcome SeptactlWithStdin(const std::vector<std::string>& args, const std::string& stdin_text) {
  std::istringstream in(stdin_text);
  Environment env;
  env.in = &in;
  return Septactl(args, env);
}

constexpr char kTenantDocument[] =
    "apiVersion: septa.dev/v1\nkind: Tenant\nmetadata: {name: acme}\nspec: {trustTier: gold}\n";

TEST(Run, DiffWithBadDocumentsSendsNothingAndSaysEveryProblem) {
  const auto r = SeptactlWithStdin({"--server", kNoServer, "--token", "t", "diff", "-f", "-", "--set", "prod"},
                                   "apiVersion: septa.dev/v1\nkind: Tenant\nmetadata: {name: a}\nspec: {foo: 1}\n"
                                   "---\napiVersion: v2\nkind: Tenant\n");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "septactl: INVALID_ARGUMENT: <stdin> document 1: spec.foo: unknown field\n"
            "septactl: INVALID_ARGUMENT: <stdin> document 2: apiVersion: must be septa.dev/v1, not \"v2\"\n");
}

TEST(Run, DiffAndApplyFailuresAreExitTwoNotOne) {
  const auto no_server =
      SeptactlWithStdin({"--server", kNoServer, "--token", "t", "diff", "-f", "-", "--set", "prod"}, kTenantDocument);
  EXPECT_EQ(no_server.exit_code, 2);
  EXPECT_EQ(no_server.err.rfind("septactl: UNAVAILABLE: cannot reach septad at 127.0.0.1:1: ", 0), 0u) << no_server.err;
  const auto no_token =
      SeptactlWithStdin({"--server", kNoServer, "apply", "-f", "-", "--set", "prod"}, kTenantDocument);
  EXPECT_EQ(no_token.exit_code, 2);
  EXPECT_EQ(no_token.err.rfind("septactl: UNAUTHENTICATED: no token", 0), 0u) << no_token.err;
  const auto usage = Septactl({"apply", "--set", "prod"});
  EXPECT_EQ(usage.exit_code, 2);
}

}  // namespace
}  // namespace septa::cli
