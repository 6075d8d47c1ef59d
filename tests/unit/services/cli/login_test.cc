// septactl login, logout and auth token through RunSeptactl with a
// scripted provider and a jumping clock: what is written to the config
// file (mode 0600, atomically), the refusal of a refresh token others can
// read, the refresh when the ID token is due and the rotated refresh token
// written back, which credential wins, and failures that leave the file as
// it was.
#include <sys/stat.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "services/base/file.h"
#include "services/cli/config_file.h"
#include "services/cli/device_flow.h"
#include "services/cli/login.h"
#include "services/cli/run.h"
#include "tests/unit/services/cli/fake_provider.h"

namespace septa::cli {
namespace {

using std::chrono::seconds;
using test::FakeProvider;
using test::IdToken;
using test::JumpClock;
using test::kClientId;
using test::kIssuer;
using test::kTokenEndpoint;
using test::OauthError;
using test::TokenReply;
using testing::HasSubstr;

struct LoginOutcome {
  int exit_code;
  std::string out;
  std::string err;
};

unsigned FileMode(const std::filesystem::path& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? st.st_mode & 07777 : 0;
}

class Login : public testing::Test {
 protected:
  void SetUp() override {
    home_ = std::filesystem::path(testing::TempDir()) /
            ("septactl-login-" + std::string(testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(home_);
    std::filesystem::create_directories(home_);
    config_ = DefaultConfigPath(home_.string());
  }
  void TearDown() override { std::filesystem::remove_all(home_); }

  LoginOutcome Septactl(const std::vector<std::string>& args, std::optional<std::string> septa_token = std::nullopt) {
    Environment env{.home = home_.string(), .septa_token = std::move(septa_token), .clock = &clock_};
    env.provider_http = &idp_;
    env.catch_interrupt = [this] { return interrupt_.get_token(); };
    std::ostringstream out, err;
    const int code = RunSeptactl(args, env, out, err);
    return {code, out.str(), err.str()};
  }

  void WriteConfig(const std::string& text, unsigned mode = 0600) {
    std::filesystem::create_directories(config_.parent_path());
    std::ofstream(config_) << text;
    ::chmod(config_.c_str(), mode);
  }
  std::string ConfigText() const {
    auto text = base::ReadFile(config_);
    return text.ok() ? *text : "";
  }
  ConfigFile Config() const {
    auto config = ParseConfigFile(ConfigText(), "config");
    EXPECT_TRUE(config.ok()) << config.status().ToString();
    return config.ok() ? *config : ConfigFile{};
  }
  // A login whose ID token expires `ttl` from now.
  void SignedIn(std::chrono::seconds ttl, const std::string& extra = "") {
    WriteConfig(extra + "login:\n  issuer: " + kIssuer + "\n  client_id: " + kClientId +
                "\n  refresh_token: rt-1\n  id_token: " + IdToken(clock_.Now(), ttl) + "\n");
  }

  std::filesystem::path home_, config_;
  FakeProvider idp_;
  JumpClock clock_;
  std::stop_source interrupt_;
};

TEST_F(Login, DeviceFlowWritesTheSessionToTheConfigFileMode0600) {
  WriteConfig("server: septa.example.com:9090\n", 0644);
  idp_.token.push_back(OauthError("authorization_pending"));
  idp_.token.push_back(TokenReply(IdToken(clock_.Now() + seconds(10), seconds(3600)), "rt-1"));
  const auto r = Septactl({"login", "--issuer", kIssuer, "--client-id", kClientId});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_THAT(r.err, HasSubstr("Open https://idp.example.test/device and enter code BCDF-GHJK\n"));
  EXPECT_THAT(r.err, HasSubstr("https://idp.example.test/device?user_code=BCDF-GHJK"));
  EXPECT_THAT(r.err, HasSubstr("The code expires in 10m, at "));
  EXPECT_THAT(r.out, HasSubstr("Signed in to https://idp.example.test as alice@acme.test"));
  EXPECT_THAT(idp_.FormsTo(test::kDeviceEndpoint),
              testing::ElementsAre("client_id=septactl&scope=openid+offline_access+profile+email+groups"));
  EXPECT_EQ(FileMode(config_), 0600u);
  const ConfigFile config = Config();
  EXPECT_EQ(config.server, "septa.example.com:9090");  // the rest of the file stays
  ASSERT_TRUE(config.login);
  EXPECT_EQ(config.login->issuer, kIssuer);
  EXPECT_EQ(config.login->client_id, kClientId);
  EXPECT_EQ(config.login->refresh_token, "rt-1");
  EXPECT_EQ(oidc::IdTokenExpiry(config.login->id_token), clock_.Now() + seconds(3600));
  // No temporary file is left behind.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(config_.parent_path()), {}), 2);  // and the .lock
}

TEST_F(Login, AFailedLoginLeavesTheConfigFileAsItWas) {
  const std::string before = "server: septa.example.com:9090\ntoken: septa_abc\n";
  WriteConfig(before);
  idp_.token.push_back(OauthError("access_denied"));
  auto r = Septactl({"login", "--issuer", kIssuer, "--client-id", kClientId});
  EXPECT_EQ(r.exit_code, kExitFailure);
  EXPECT_THAT(r.err, HasSubstr("septactl: PERMISSION_DENIED: the sign-in was denied at the identity provider"));
  EXPECT_EQ(ConfigText(), before);

  idp_ = FakeProvider();
  idp_.down = true;
  r = Septactl({"login", "--issuer", kIssuer, "--client-id", kClientId});
  EXPECT_EQ(r.exit_code, kExitFailure);
  EXPECT_THAT(r.err, HasSubstr("UNAVAILABLE: GET https://idp.example.test/.well-known/openid-configuration"));
  EXPECT_EQ(ConfigText(), before);

  idp_ = FakeProvider();
  interrupt_.request_stop();
  r = Septactl({"login", "--issuer", kIssuer, "--client-id", kClientId});
  EXPECT_EQ(r.exit_code, kExitFailure);
  EXPECT_THAT(r.err, HasSubstr("CANCELLED: interrupted: nothing was signed in"));
  EXPECT_EQ(ConfigText(), before);
}

TEST_F(Login, FlagsAreChecked) {
  auto r = Septactl({"login", "--issuer", "http://idp.example.test", "--client-id", kClientId});
  EXPECT_EQ(r.exit_code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("--issuer must be https (http only on a loopback host)"));
  r = Septactl({"login", "--issuer", kIssuer, "--client-id", kClientId, "--scope", "profile email"});
  EXPECT_EQ(r.exit_code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("--scope must include openid"));
  r = Septactl({"login", "--issuer", kIssuer});
  EXPECT_EQ(r.exit_code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("--client-id is required"));
  EXPECT_EQ(idp_.gets, 0);
}

TEST_F(Login, ARefreshTokenOthersCanReadIsRefusedLikeSsh) {
  SignedIn(seconds(3600));
  ::chmod(config_.c_str(), 0640);
  const auto r = Septactl({"--server", "127.0.0.1:1", "tenant", "list"});
  EXPECT_EQ(r.exit_code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("config file " + config_.string() + " holds a refresh token but its mode is 0640"));
  EXPECT_THAT(r.err, HasSubstr("run chmod 600 " + config_.string()));
  EXPECT_EQ(Septactl({"auth", "token"}).exit_code, kExitUsage);
  // A token alone in a readable file is as before.
  WriteConfig("token: septa_abc\n", 0644);
  EXPECT_TRUE(LoadConfigFile(config_, true).ok());
}

TEST_F(Login, AValidIdTokenIsSentAsItIs) {
  SignedIn(seconds(31));
  const auto r = Septactl({"auth", "token"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_EQ(r.out, Config().login->id_token + "\n");
  EXPECT_EQ(idp_.gets, 0);
  EXPECT_TRUE(idp_.posts.empty());
}

TEST_F(Login, AnIdTokenWithin30SecondsOfExpiryIsRefreshedAndTheRotatedRefreshTokenWrittenBack) {
  SignedIn(seconds(30), "server: septa.example.com:9090\n");
  const std::string fresh = IdToken(clock_.Now(), seconds(3600));
  idp_.token.push_back(TokenReply(fresh, "rt-2"));
  const auto r = Septactl({"auth", "token"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_EQ(r.out, fresh + "\n");
  EXPECT_THAT(idp_.FormsTo(kTokenEndpoint),
              testing::ElementsAre("grant_type=refresh_token&refresh_token=rt-1&client_id=septactl"));
  const ConfigFile config = Config();
  EXPECT_EQ(config.login->refresh_token, "rt-2");
  EXPECT_EQ(config.login->id_token, fresh);
  EXPECT_EQ(config.server, "septa.example.com:9090");
  EXPECT_EQ(FileMode(config_), 0600u);
  // Now valid: no second refresh.
  EXPECT_EQ(Septactl({"auth", "token"}).out, fresh + "\n");
  EXPECT_EQ(idp_.FormsTo(kTokenEndpoint).size(), 1u);
}

TEST_F(Login, AnotherProcessesRefreshIsUsedNotRepeated) {
  SignedIn(seconds(-10));
  const LoginSession stale = *Config().login;
  SignedIn(seconds(600));  // what the other septactl wrote meanwhile
  auto bearer = LoginBearer(config_, stale, idp_, clock_);
  ASSERT_TRUE(bearer.ok()) << bearer.status().ToString();
  EXPECT_EQ(*bearer, Config().login->id_token);
  EXPECT_TRUE(idp_.posts.empty());
}

TEST_F(Login, ARefusedRefreshTokenAsksForANewLoginAndLeavesTheFile) {
  SignedIn(seconds(-10));
  const std::string before = ConfigText();
  idp_.token.push_back(OauthError("invalid_grant"));
  auto r = Septactl({"--server", "127.0.0.1:1", "tenant", "list"});
  EXPECT_EQ(r.exit_code, kExitFailure);
  EXPECT_THAT(r.err, HasSubstr("UNAUTHENTICATED: the sign-in at https://idp.example.test has expired or was revoked"));
  EXPECT_THAT(r.err, HasSubstr("run septactl login again"));
  EXPECT_EQ(ConfigText(), before);
  idp_.down = true;
  r = Septactl({"auth", "token"});
  EXPECT_EQ(r.exit_code, kExitFailure);
  EXPECT_THAT(r.err, HasSubstr("UNAVAILABLE: could not refresh the ID token at https://idp.example.test"));
}

TEST_F(Login, AnyTokenWinsOverTheLogin) {
  SignedIn(seconds(-10), "token: septa_abc\n");  // due for a refresh the provider cannot give
  idp_.down = true;
  auto r = Septactl({"--server", "127.0.0.1:1", "--timeout", "2s", "tenant", "list"});
  EXPECT_EQ(r.exit_code, kExitFailure);
  EXPECT_THAT(r.err, HasSubstr("127.0.0.1:1"));  // it went for septad, with the token
  SignedIn(seconds(-10));
  r = Septactl({"--server", "127.0.0.1:1", "--timeout", "2s", "tenant", "list"}, "septa_env");
  EXPECT_THAT(r.err, HasSubstr("127.0.0.1:1"));
  r = Septactl({"--server", "127.0.0.1:1", "--timeout", "2s", "--token", "t", "tenant", "list"});
  EXPECT_THAT(r.err, HasSubstr("127.0.0.1:1"));
  EXPECT_EQ(idp_.gets, 0);
  EXPECT_TRUE(idp_.posts.empty());
}

TEST_F(Login, LogoutRevokesAndRemovesTheLogin) {
  SignedIn(seconds(600), "server: septa.example.com:9090\n");
  idp_.revocation.push_back(oidc::ProviderReply{200, ""});
  const auto r = Septactl({"logout"});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Revoked the refresh token at https://idp.example.test."));
  EXPECT_THAT(idp_.FormsTo(test::kRevocationEndpoint),
              testing::ElementsAre("token=rt-1&token_type_hint=refresh_token&client_id=septactl"));
  const ConfigFile config = Config();
  EXPECT_FALSE(config.login);
  EXPECT_EQ(config.server, "septa.example.com:9090");
  EXPECT_THAT(Septactl({"logout"}).out, HasSubstr("Not signed in"));
  const auto token = Septactl({"auth", "token"});
  EXPECT_EQ(token.exit_code, kExitFailure);
  EXPECT_THAT(token.err, HasSubstr("not signed in"));
}

TEST_F(Login, LogoutWhenTheProviderCannotRevokeSaysSoAndStillRemovesTheLogin) {
  SignedIn(seconds(600));
  idp_.down = true;
  auto r = Septactl({"logout"});
  EXPECT_EQ(r.exit_code, kExitOk);
  EXPECT_THAT(r.err, HasSubstr("warning: the refresh token could not be revoked at https://idp.example.test"));
  EXPECT_THAT(r.err, HasSubstr("it stays valid at the provider until it expires"));
  EXPECT_FALSE(Config().login);

  idp_ = FakeProvider();
  idp_.discovery.erase("revocation_endpoint");
  SignedIn(seconds(600));
  r = Septactl({"logout"});
  EXPECT_EQ(r.exit_code, kExitOk);
  EXPECT_THAT(r.err, HasSubstr("the provider has no revocation_endpoint"));
  EXPECT_FALSE(Config().login);
}

TEST_F(Login, InTenantMustBeANameFromTheFlagOrTheEnvironment) {
  auto r = Septactl({"--in-tenant", "a b", "--token", "t", "tenant", "list"});
  EXPECT_EQ(r.exit_code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("--in-tenant: give a tenant's name"));
}

TEST(LoginConfig, TheLoginBlockRoundTripsAndUnknownKeysAreRefused) {
  ConfigFile config;
  config.server = "h:1";
  config.tls = true;
  config.login = LoginSession{.issuer = "https://idp", .client_id = "c", .refresh_token = "r: #x", .id_token = "e.y.z"};
  auto back = ParseConfigFile(RenderConfigFile(config), "c.yaml");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->server, "h:1");
  EXPECT_EQ(back->tls, true);
  ASSERT_TRUE(back->login);
  EXPECT_EQ(back->login->refresh_token, "r: #x");
  EXPECT_EQ(back->login->id_token, "e.y.z");
  EXPECT_EQ(ParseConfigFile("login:\n  issuer: i\n  client_id: c\n  secret: s\n", "c.yaml").status().message(),
            "c.yaml: unknown key \"login.secret\" (known keys: issuer, client_id, refresh_token, id_token)");
  EXPECT_EQ(ParseConfigFile("login: yes\n", "c.yaml").status().message(),
            "c.yaml: \"login\" must be a mapping of issuer, client_id, refresh_token, id_token");
  EXPECT_THAT(ParseConfigFile("login:\n  issuer: i\n", "c.yaml").status().message(),
              HasSubstr("\"login\" needs issuer and client_id"));
  EXPECT_EQ(ParseConfigFile(RenderConfigFile(ConfigFile{}), "c.yaml")->login, std::nullopt);
}

}  // namespace
}  // namespace septa::cli

namespace septa::cli {
namespace {

TEST_F(Login, TheFirstLoginMakesTheFileAndItsDirectory) {
  ASSERT_FALSE(std::filesystem::exists(config_.parent_path()));
  idp_.token.push_back(TokenReply(IdToken(clock_.Now() + seconds(5), seconds(3600)), "rt-1"));
  const auto r = Septactl({"login", "--issuer", kIssuer, "--client-id", kClientId});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_EQ(FileMode(config_), 0600u);
  EXPECT_EQ(FileMode(config_.parent_path()), 0700u);
  EXPECT_EQ(Config().login->refresh_token, "rt-1");
}

TEST_F(Login, AConfigFileThatIsASymlinkStaysOne) {
  const std::filesystem::path real = home_ / "dotfiles" / "septa.yaml";
  std::filesystem::create_directories(real.parent_path());
  std::ofstream(real) << "server: h:1\n";
  std::filesystem::create_directories(config_.parent_path());
  std::filesystem::create_symlink(real, config_);
  idp_.token.push_back(TokenReply(IdToken(clock_.Now() + seconds(5), seconds(3600)), "rt-1"));
  const auto r = Septactl({"login", "--issuer", kIssuer, "--client-id", kClientId});
  ASSERT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_TRUE(std::filesystem::is_symlink(config_));
  EXPECT_EQ(FileMode(real), 0600u);
  EXPECT_EQ(Config().login->refresh_token, "rt-1");
  EXPECT_EQ(Config().server, "h:1");
}

}  // namespace
}  // namespace septa::cli

namespace septa::cli {
namespace {

TEST_F(Login, LogoutWithoutAConfigFileIsNotSignedInAndMakesNothing) {
  const auto r = Septactl({"logout"});
  EXPECT_EQ(r.exit_code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Not signed in"));
  EXPECT_FALSE(std::filesystem::exists(config_.parent_path()));
}

}  // namespace
}  // namespace septa::cli
