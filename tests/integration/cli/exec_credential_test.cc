// kubeconfig --exec and the exec plugin (`vcluster credential`) against a
// real septad (in-process, real gRPC socket, fresh database) with the
// plugin's clock injected: the certificate the kubeconfig issued is the
// plugin's first, reused until its renewal point, then renewed by septad;
// septactl's token from $SEPTA_TOKEN; a revoked one refused.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "services/app/septad_app.h"
#include "services/cli/run.h"
#include "tests/integration/cli/ready_vcluster.h"
#include "tests/support/fake_clock.h"
#include "tests/support/test_database.h"

namespace septa::cli {
namespace {

struct PluginRun {
  int exit_code = 0;
  std::string out{}, err{};
};

class ExecPluginAgainstSeptad : public testing::Test {
 protected:
  void SetUp() override {
    auto db = test::TestDatabase::Create();
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = std::move(*db);
    home_ = std::filesystem::path(testing::TempDir()) / ("septactl-exec-" + db_->name());
    std::filesystem::create_directories(home_);
    config::Config config;
    config.database_url = db_->url();
    config.data_dir = (home_ / "data").string();
    config.http_addr = "127.0.0.1:0";
    config.grpc_addr = "127.0.0.1:0";
    config.shutdown_grace = std::chrono::milliseconds(500);
    config.provisioner = false;  // the virtual cluster is made READY below
    auto app = app::SeptadApp::Start(config);
    ASSERT_TRUE(app.ok()) << app.status().ToString();
    app_ = std::move(*app);
    ASSERT_TRUE(app_->new_admin_token().has_value());
    admin_token_ = *app_->new_admin_token();
    server_ = "127.0.0.1:" + std::to_string(app_->grpc_port());
    env_.home = home_.string();
    env_.clock = &clock_;
    env_.variable = [this](const std::string& name) -> std::optional<std::string> {
      if (name == "XDG_CACHE_HOME") return (home_ / "xdg").string();
      return std::nullopt;
    };
    MakeReady();
  }

  void TearDown() override {
    app_.reset();
    std::filesystem::remove_all(home_);
  }

  // Tenant acme (isolated: certificates up to 8 h) with virtual cluster
  // train READY on a simulated control plane.
  void MakeReady() {
    ASSERT_EQ(Run({"tenant", "create", "acme", "--tier", "isolated"}, admin_token_).exit_code, 0);
    ASSERT_EQ(Run({"vcluster", "create", "acme", "train", "--mig", "3g.40gb=1"}, admin_token_).exit_code, 0);
    auto endpoint = test::MakeVclusterReady(*app_, db_->url(), "acme", "train");
    ASSERT_TRUE(endpoint.ok()) << endpoint.status().ToString();
    endpoint_ = *endpoint;
  }

  // septactl --server <septad> with `token` as $SEPTA_TOKEN (none: unset).
  PluginRun Run(std::vector<std::string> args, const std::optional<std::string>& token) {
    args.insert(args.begin(), {"--server", server_});
    Environment env = env_;
    env.septa_token = token;
    std::ostringstream out, err;
    const int code = RunSeptactl(args, env, out, err);
    return {code, out.str(), err.str()};
  }

  // The serials of acme/train's certificates, as septad lists them.
  std::vector<std::string> Serials() {
    const PluginRun listed = Run({"-o", "json", "vcluster", "credentials", "acme", "train"}, admin_token_);
    EXPECT_EQ(listed.exit_code, 0) << listed.err;
    std::vector<std::string> serials;
    if (listed.exit_code != 0) return serials;
    const nlohmann::json credentials = nlohmann::json::parse(listed.out)["credentials"];
    for (const auto& c : credentials) serials.push_back(c["serial"]);
    return serials;
  }

  std::unique_ptr<test::TestDatabase> db_;
  std::filesystem::path home_;
  std::unique_ptr<app::SeptadApp> app_;
  std::string admin_token_, server_, endpoint_;
  FakeClock clock_{std::chrono::system_clock::now()};
  Environment env_;
};

const std::vector<std::string> kPlugin = {"vcluster", "credential", "train", "--tenant", "acme",
                                          "--role",   "edit",       "--ttl", "1h"};

TEST_F(ExecPluginAgainstSeptad, KubeconfigThenCachedThenRenewed) {
  const PluginRun made = Run({"vcluster", "kubeconfig", "train", "--tenant", "acme", "--role", "edit", "--ttl", "1h",
                              "--exec", "--exec-command", "/usr/local/bin/septactl"},
                             admin_token_);
  ASSERT_EQ(made.exit_code, 0) << made.err;
  EXPECT_EQ(made.err, "");
  const YAML::Node kubeconfig = YAML::Load(made.out);
  EXPECT_EQ(kubeconfig["clusters"][0]["cluster"]["server"].as<std::string>(), endpoint_);
  const YAML::Node exec = kubeconfig["users"][0]["user"]["exec"];
  std::vector<std::string> args{"--server", server_};
  args.insert(args.end(), kPlugin.begin(), kPlugin.end());
  EXPECT_EQ(exec["args"].as<std::vector<std::string>>(), args);
  EXPECT_EQ(made.out.find(admin_token_), std::string::npos);
  const std::vector<std::string> first = Serials();
  ASSERT_EQ(first.size(), 1u);

  // kubectl's first run: the kubeconfig's certificate, from the cache.
  const PluginRun cached = Run(kPlugin, admin_token_);
  ASSERT_EQ(cached.exit_code, 0) << cached.err;
  const nlohmann::json credential = nlohmann::json::parse(cached.out);
  EXPECT_EQ(credential["apiVersion"], "client.authentication.k8s.io/v1");
  EXPECT_EQ(credential["kind"], "ExecCredential");
  EXPECT_EQ(Serials(), first);

  // 55 minutes on, within the 6-minute margin of an hour's certificate: septad issues another.
  clock_.Advance(std::chrono::minutes(55));
  const PluginRun renewed = Run(kPlugin, admin_token_);
  ASSERT_EQ(renewed.exit_code, 0) << renewed.err;
  EXPECT_NE(nlohmann::json::parse(renewed.out)["status"]["clientCertificateData"],
            credential["status"]["clientCertificateData"]);
  EXPECT_EQ(Serials().size(), 2u);
  // The renewed certificate is the cached one now (septad's clock issued it
  // at the real time: the plugin's clock goes back to that).
  clock_.Set(std::chrono::system_clock::now());
  const PluginRun reused = Run(kPlugin, admin_token_);
  ASSERT_EQ(reused.exit_code, 0) << reused.err;
  EXPECT_EQ(nlohmann::json::parse(reused.out)["status"]["clientCertificateData"],
            nlohmann::json::parse(renewed.out)["status"]["clientCertificateData"]);
  EXPECT_EQ(Serials().size(), 2u);
}

TEST_F(ExecPluginAgainstSeptad, ARevokedTokenCannotRenew) {
  const PluginRun created = Run(
      {"-o", "json", "token", "create", "--principal", "tenant:acme", "--role", "owner", "--ttl", "1h"}, admin_token_);
  ASSERT_EQ(created.exit_code, 0) << created.err;
  const nlohmann::json token = nlohmann::json::parse(created.out);
  ASSERT_EQ(Run(kPlugin, token["token"].get<std::string>()).exit_code, 0);
  ASSERT_EQ(Run({"token", "revoke", token["id"].get<std::string>()}, admin_token_).exit_code, 0);
  // Fresh, the cached certificate is served without septad; due, the revoked token cannot renew it.
  EXPECT_EQ(Run(kPlugin, token["token"].get<std::string>()).exit_code, 0);
  clock_.Advance(std::chrono::minutes(56));
  const PluginRun refused = Run(kPlugin, token["token"].get<std::string>());
  EXPECT_EQ(refused.exit_code, kExitFailure);
  EXPECT_EQ(refused.out, "");
  EXPECT_EQ(refused.err.rfind("septactl: UNAUTHENTICATED: ", 0), 0u) << refused.err;
  EXPECT_NE(refused.err.find("needs a valid Septa token to renew its certificate"), std::string::npos) << refused.err;
  EXPECT_EQ(Serials().size(), 1u);
}

}  // namespace
}  // namespace septa::cli
