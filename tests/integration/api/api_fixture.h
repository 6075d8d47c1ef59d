// A whole septad (SeptadApp) per test, on ephemeral ports, against a fresh
// database of the test run's PostgreSQL, with tokens for every kind of
// principal the authorization rules distinguish.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>
#include <nlohmann/json.hpp>

#include <filesystem>

#include "services/app/septad_app.h"
#include "tests/integration/api/http_client.h"
#include "tests/support/test_database.h"

namespace septa::test {

class ApiTest : public ::testing::Test {
 protected:
  static constexpr std::uint64_t kBodyLimit = 4096;

  void SetUp() override {
    auto db = TestDatabase::Create();
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    db_ = *std::move(db);
    std::string dir = (std::filesystem::temp_directory_path() / "septa-api-XXXXXX").string();
    ASSERT_NE(::mkdtemp(dir.data()), nullptr);
    data_dir_ = dir;
    config::Config config;
    config.data_dir = data_dir_;
    config.database_url = db_->url();
    config.http_addr = "127.0.0.1:0";
    config.grpc_addr = "127.0.0.1:0";
    config.http_body_limit = kBodyLimit;
    config.worker_threads = 4;
    config.shutdown_grace = std::chrono::seconds(2);
    Configure(config);
    auto app = app::SeptadApp::Start(config);
    ASSERT_TRUE(app.ok()) << app.status().ToString();
    app_ = *std::move(app);
    ASSERT_TRUE(app_->new_admin_token().has_value());
    admin_ = *app_->new_admin_token();
    http_ = std::make_unique<HttpClient>(app_->http_port());
  }

  void TearDown() override {
    http_.reset();
    app_.reset();
    db_.reset();
    if (!data_dir_.empty()) std::filesystem::remove_all(data_dir_);
  }

  // Suites that need another configuration override this.
  virtual void Configure(config::Config&) {}

  static std::map<std::string, std::string> Bearer(const std::string& token) {
    return {{"Authorization", "Bearer " + token}};
  }

  HttpResult Call(const std::string& token, const std::string& method, const std::string& target,
                  const std::string& body = "", std::map<std::string, std::string> headers = {}) {
    if (!token.empty()) headers["Authorization"] = "Bearer " + token;
    return http_->Send(method, target, body, headers);
  }

  nlohmann::json CreateTenant(const std::string& name, const std::string& tier = "shared") {
    auto r = Call(admin_, "POST", "/v1/tenants", nlohmann::json{{"name", name}, {"trust_tier", tier}}.dump());
    EXPECT_EQ(r.status, 201) << r.body;
    return nlohmann::json::parse(r.body);
  }

  std::string CreateToken(const std::string& principal, const std::string& role) {
    auto r = Call(admin_, "POST", "/v1/tokens", nlohmann::json{{"principal", principal}, {"role", role}}.dump());
    EXPECT_EQ(r.status, 201) << r.body;
    return nlohmann::json::parse(r.body).at("token").get<std::string>();
  }

  std::unique_ptr<TestDatabase> db_;
  std::string data_dir_;
  std::unique_ptr<app::SeptadApp> app_;
  std::string admin_;
  std::unique_ptr<HttpClient> http_;
};

}  // namespace septa::test
