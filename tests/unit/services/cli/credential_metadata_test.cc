// What septactl puts on the wire for a signed-in person: the login's ID
// token as `authorization: Bearer`, the tenant of --in-tenant or
// $SEPTA_TENANT as `septa-tenant` (only when set), seen by a gRPC server
// that records each call's metadata (septad's side is tested with septad).
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "septa/v1/tenant.grpc.pb.h"
#include "services/cli/config_file.h"
#include "services/cli/run.h"
#include "tests/unit/services/cli/fake_provider.h"

namespace septa::cli {
namespace {

using std::chrono::seconds;

class RecordingTenants final : public v1::TenantService::Service {
 public:
  grpc::Status ListTenants(grpc::ServerContext* context, const v1::ListTenantsRequest*,
                           v1::ListTenantsResponse*) override {
    std::map<std::string, std::string> seen;
    for (const auto& [key, value] : context->client_metadata()) {
      seen[std::string(key.data(), key.size())] = std::string(value.data(), value.size());
    }
    std::lock_guard lock(mu_);
    calls_.push_back(std::move(seen));
    return grpc::Status::OK;
  }
  std::vector<std::map<std::string, std::string>> calls() {
    std::lock_guard lock(mu_);
    return calls_;
  }

 private:
  std::mutex mu_;
  std::vector<std::map<std::string, std::string>> calls_;
};

class CredentialMetadata : public testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&tenants_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    address_ = "127.0.0.1:" + std::to_string(port);
    home_ = std::filesystem::path(testing::TempDir()) /
            ("septactl-metadata-" + std::string(testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(home_);
  }
  void TearDown() override {
    server_->Shutdown();
    std::filesystem::remove_all(home_);
  }

  int Septactl(std::vector<std::string> args, std::map<std::string, std::string> variables = {},
               std::optional<std::string> septa_token = std::nullopt) {
    Environment env{.home = home_.string(), .septa_token = std::move(septa_token), .clock = &clock_};
    env.provider_http = &idp_;
    env.variable = [variables](const std::string& name) -> std::optional<std::string> {
      const auto it = variables.find(name);
      return it == variables.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
    args.insert(args.begin(), {"--server", address_});
    std::ostringstream out, err;
    const int code = RunSeptactl(args, env, out, err);
    EXPECT_EQ(code, kExitOk) << err.str();
    return code;
  }

  void SignIn(const std::string& id_token) {
    ConfigFile config;
    config.login = LoginSession{
        .issuer = test::kIssuer, .client_id = test::kClientId, .refresh_token = "rt-1", .id_token = id_token};
    ASSERT_TRUE(WriteConfigFile(DefaultConfigPath(home_.string()), config).ok());
  }

  RecordingTenants tenants_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
  std::filesystem::path home_;
  test::FakeProvider idp_;
  test::JumpClock clock_;
};

TEST_F(CredentialMetadata, TheLoginsIdTokenIsTheBearer) {
  const std::string id_token = test::IdToken(clock_.Now(), seconds(600));
  SignIn(id_token);
  Septactl({"tenant", "list"});
  ASSERT_EQ(tenants_.calls().size(), 1u);
  EXPECT_EQ(tenants_.calls()[0].at("authorization"), "Bearer " + id_token);
  EXPECT_EQ(tenants_.calls()[0].count("septa-tenant"), 0u);  // not set: not sent
}

TEST_F(CredentialMetadata, ADueIdTokenIsRefreshedBeforeTheCall) {
  SignIn(test::IdToken(clock_.Now(), seconds(10)));
  const std::string fresh = test::IdToken(clock_.Now(), seconds(3600), "alice2");
  idp_.token.push_back(test::TokenReply(fresh, "rt-2"));
  Septactl({"tenant", "list"});
  ASSERT_EQ(tenants_.calls().size(), 1u);
  EXPECT_EQ(tenants_.calls()[0].at("authorization"), "Bearer " + fresh);
}

TEST_F(CredentialMetadata, AGivenTokenWinsOverTheLogin) {
  SignIn(test::IdToken(clock_.Now(), seconds(600)));
  Septactl({"tenant", "list"}, {}, "septa_from_env");
  Septactl({"--token", "septa_flag", "tenant", "list"}, {}, "septa_from_env");
  ASSERT_EQ(tenants_.calls().size(), 2u);
  EXPECT_EQ(tenants_.calls()[0].at("authorization"), "Bearer septa_from_env");
  EXPECT_EQ(tenants_.calls()[1].at("authorization"), "Bearer septa_flag");
}

TEST_F(CredentialMetadata, TheTenantFromTheFlagOrTheEnvironment) {
  Septactl({"--token", "t", "tenant", "list"}, {{"SEPTA_TENANT", "acme"}});
  Septactl({"--token", "t", "--in-tenant", "beta", "tenant", "list"}, {{"SEPTA_TENANT", "acme"}});
  ASSERT_EQ(tenants_.calls().size(), 2u);
  EXPECT_EQ(tenants_.calls()[0].at("septa-tenant"), "acme");
  EXPECT_EQ(tenants_.calls()[1].at("septa-tenant"), "beta");
}

}  // namespace
}  // namespace septa::cli
