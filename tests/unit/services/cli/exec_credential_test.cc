// kubeconfig --exec and the exec plugin `vcluster credential`: the command
// line, the ExecCredential kubectl reads, the exec kubeconfig, and the two
// commands against a fake IssueKubeconfig (cached, renewed, refused).
#include "services/cli/exec_credential.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "services/base/base64.h"
#include "services/core/kubeconfig.h"
#include "tests/support/fake_clock.h"
#include "tests/support/temp_dir.h"
#include "tests/unit/services/cli/test_certificate.h"

namespace septa::cli {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

Result<Command> ExecCommandOf(const std::vector<std::string>& args) {
  auto parsed = ParseCommandLine(args);
  SEPTA_RETURN_IF_ERROR(parsed);
  if (!std::holds_alternative<Invocation>(*parsed)) return Internal("help");
  return std::get<Invocation>(*parsed).command;
}

ClientCertificate ExecTestCertificate(TimePoint from, seconds lifetime) {
  const test::TestKeyPair pair = test::MakeTestCertificate(from, from + lifetime);
  auto read = ReadClientCertificate(pair.certificate_pem, pair.private_key_pem);
  EXPECT_TRUE(read.ok());
  return read.ok() ? *read : ClientCertificate{};
}

// A kubeconfig as septad issues it.
std::string IssuedKubeconfig(const ClientCertificate& certificate) {
  return core::RenderKubeconfig(
      {.name = "acme-train",
       .server = "https://127.0.0.1:6444/vclusters/acme/train",
       .server_ca = "-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n",
       .user = "acme:tok1",
       .credential = core::KubeconfigClientCertificate{certificate.certificate_pem, certificate.private_key_pem}});
}

TEST(ExecCommandLine, KubeconfigExecAndItsCommand) {
  auto plain = ExecCommandOf({"vcluster", "kubeconfig", "acme", "train", "--role", "edit"});
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(std::holds_alternative<VclusterKubeconfig>(*plain));  // the static kubeconfig stays the default

  auto exec = ExecCommandOf(
      {"vcluster", "kubeconfig", "train", "--tenant", "acme", "--role", "view", "--ttl", "15m", "--exec"});
  ASSERT_TRUE(exec.ok()) << exec.status().ToString();
  const auto& e = std::get<VclusterExecKubeconfig>(*exec);
  EXPECT_EQ(e.kubeconfig.tenant, "acme");
  EXPECT_EQ(e.kubeconfig.name, "train");
  EXPECT_EQ(e.kubeconfig.role, "view");
  EXPECT_EQ(e.kubeconfig.ttl, "15m");
  EXPECT_EQ(e.exec_command, "");

  auto command = ExecCommandOf(
      {"vcluster", "kubeconfig", "acme", "train", "--role", "edit", "--exec", "--exec-command", "/opt/bin/septactl"});
  ASSERT_TRUE(command.ok());
  EXPECT_EQ(std::get<VclusterExecKubeconfig>(*command).exec_command, "/opt/bin/septactl");

  auto without = ExecCommandOf({"vcluster", "kubeconfig", "acme", "train", "--role", "edit", "--exec-command", "x"});
  EXPECT_EQ(without.status().message(), "--exec-command needs --exec");
}

TEST(ExecCommandLine, Credential) {
  auto parsed = ExecCommandOf(
      {"--server", "h:9", "vcluster", "credential", "train", "--tenant", "acme", "--role", "edit", "--ttl", "2m"});
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const auto& c = std::get<VclusterExecCredential>(*parsed);
  EXPECT_EQ(c.tenant, "acme");
  EXPECT_EQ(c.name, "train");
  EXPECT_EQ(c.role, "edit");
  EXPECT_EQ(c.ttl, "2m");
  EXPECT_TRUE(std::holds_alternative<VclusterExecCredential>(
      *ExecCommandOf({"vcluster", "credential", "acme", "train", "--role", "view"})));
  EXPECT_FALSE(ExecCommandOf({"vcluster", "credential", "acme", "train"}).ok());  // --role is required
}

TEST(ExecCredentialOutput, TheShapeKubectlReads) {
  const TimePoint t0 = TimePoint(seconds(1'800'000'000));
  const ClientCertificate certificate = ExecTestCertificate(t0, hours(1));
  const std::string text = ExecCredentialJson(kExecCredentialApiVersion, certificate, t0 + minutes(54));
  ASSERT_EQ(text.back(), '\n');
  const nlohmann::json credential = nlohmann::json::parse(text);
  EXPECT_EQ(credential, (nlohmann::json{{"apiVersion", "client.authentication.k8s.io/v1"},
                                        {"kind", "ExecCredential"},
                                        {"status",
                                         {{"expirationTimestamp", "2027-01-15T08:54:00Z"},
                                          {"clientCertificateData", certificate.certificate_pem},
                                          {"clientKeyData", certificate.private_key_pem}}}}));
  EXPECT_EQ(credential["status"]["clientCertificateData"].get<std::string>().rfind("-----BEGIN CERTIFICATE-----", 0),
            0u);
  EXPECT_EQ(credential["status"]["clientKeyData"].get<std::string>().rfind("-----BEGIN PRIVATE KEY-----", 0), 0u);
  // The time as RFC 3339 in UTC, whole seconds: metav1.Time's form.
  EXPECT_EQ(ParseRfc3339(credential["status"]["expirationTimestamp"].get<std::string>()), t0 + minutes(54));
}

TEST(ExecCredentialOutput, ApiVersionAsKubectlAsked) {
  EXPECT_EQ(ExecCredentialApiVersion(std::nullopt), "client.authentication.k8s.io/v1");
  EXPECT_EQ(
      ExecCredentialApiVersion(std::string(
          R"({"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","spec":{"interactive":false}})")),
      "client.authentication.k8s.io/v1");
  EXPECT_EQ(ExecCredentialApiVersion(std::string(
                R"({"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1beta1","spec":{}})")),
            "client.authentication.k8s.io/v1beta1");
  EXPECT_EQ(ExecCredentialApiVersion(std::string(R"({"apiVersion":"client.authentication.k8s.io/v2"})")),
            "client.authentication.k8s.io/v1");
  EXPECT_EQ(ExecCredentialApiVersion(std::string("{not json")), "client.authentication.k8s.io/v1");
  EXPECT_EQ(ExecCredentialApiVersion(std::string("")), "client.authentication.k8s.io/v1");
}

TEST(ExecCredentialOutput, ExpirationIsTheRenewalPointWhileAhead) {
  const TimePoint t0 = TimePoint(seconds(1'800'000'000));
  const ClientCertificate hour = ExecTestCertificate(t0, hours(1));
  EXPECT_EQ(ExecCredentialExpiration(hour, t0), t0 + hours(1) - seconds(360));
  // Past it (the run renewed, or a certificate shorter than the margin): notAfter.
  EXPECT_EQ(ExecCredentialExpiration(hour, t0 + minutes(55)), t0 + hours(1));
  const ClientCertificate short_lived = ExecTestCertificate(t0, seconds(20));
  EXPECT_EQ(ExecCredentialExpiration(short_lived, t0), t0 + seconds(20));
}

TEST(ExecKubeconfigTest, PluginArgsReachTheSameSeptadWithoutAToken) {
  const VclusterKubeconfig k{"acme", "train", "", "edit"};
  EXPECT_EQ(ExecPluginArgs({.server = "127.0.0.1:9090"}, k),
            (std::vector<std::string>{"--server", "127.0.0.1:9090", "vcluster", "credential", "train", "--tenant",
                                      "acme", "--role", "edit"}));
  EXPECT_EQ(ExecPluginArgs({.server = "septa.example.com:443", .tls = true}, {"acme", "train", "2h", "view"}),
            (std::vector<std::string>{"--server", "septa.example.com:443", "--tls", "vcluster", "credential", "train",
                                      "--tenant", "acme", "--role", "view", "--ttl", "2h"}));
  EXPECT_EQ(ExecPluginArgs({.server = "s:1", .tls = true, .ca_file = "/etc/septa/ca.pem", .config_path = "/c.yaml"}, k),
            (std::vector<std::string>{"--server", "s:1", "--ca-file", "/etc/septa/ca.pem", "--config", "/c.yaml",
                                      "vcluster", "credential", "train", "--tenant", "acme", "--role", "edit"}));
}

TEST(ExecKubeconfigTest, TheUserIsTheExecPlugin) {
  const ClientCertificate certificate = ExecTestCertificate(TimePoint(seconds(1'800'000'000)), hours(1));
  const std::string issued = IssuedKubeconfig(certificate);
  const std::vector<std::string> args{"--server", "127.0.0.1:9090", "vcluster", "credential", "train",
                                      "--tenant", "acme",           "--role",   "edit"};
  auto text = ExecKubeconfig(issued, "/usr/local/bin/septactl", args, "edit");
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  const YAML::Node kubeconfig = YAML::Load(*text);
  const YAML::Node issued_yaml = YAML::Load(issued);
  EXPECT_EQ(kubeconfig["clusters"][0]["cluster"]["server"].as<std::string>(),
            "https://127.0.0.1:6444/vclusters/acme/train");
  EXPECT_EQ(kubeconfig["clusters"][0]["cluster"]["certificate-authority-data"].as<std::string>(),
            issued_yaml["clusters"][0]["cluster"]["certificate-authority-data"].as<std::string>());
  const YAML::Node user = kubeconfig["users"][0];
  EXPECT_EQ(user["name"].as<std::string>(), "septactl-edit@acme-train");
  EXPECT_EQ(user["user"].size(), 1u);  // exec only: no certificate, key or token
  const YAML::Node exec = user["user"]["exec"];
  EXPECT_EQ(exec["apiVersion"].as<std::string>(), "client.authentication.k8s.io/v1");
  EXPECT_EQ(exec["command"].as<std::string>(), "/usr/local/bin/septactl");
  EXPECT_EQ(exec["args"].as<std::vector<std::string>>(), args);
  EXPECT_EQ(exec["interactiveMode"].as<std::string>(), "Never");
  EXPECT_EQ(exec["provideClusterInfo"].Tag(), "?");  // a plain scalar: YAML's boolean
  EXPECT_FALSE(exec["provideClusterInfo"].as<bool>());
  EXPECT_NE(exec["installHint"].as<std::string>().find("septactl"), std::string::npos);
  EXPECT_EQ(kubeconfig["contexts"][0]["context"]["user"].as<std::string>(), "septactl-edit@acme-train");
  EXPECT_EQ(kubeconfig["contexts"][0]["context"]["cluster"].as<std::string>(), "acme-train");
  EXPECT_EQ(kubeconfig["contexts"][0]["context"]["namespace"].as<std::string>(), "default");
  EXPECT_EQ(kubeconfig["current-context"].as<std::string>(), "acme-train");
  EXPECT_EQ(text->find("PRIVATE KEY"), std::string::npos);
  EXPECT_EQ(text->find(base::Base64Encode(certificate.private_key_pem).substr(0, 40)), std::string::npos);
}

TEST(ExecKubeconfigTest, CertificateOfAnIssuedKubeconfig) {
  const ClientCertificate certificate = ExecTestCertificate(TimePoint(seconds(1'800'000'000)), minutes(15));
  auto read = CertificateOfKubeconfig(IssuedKubeconfig(certificate));
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->certificate_pem, certificate.certificate_pem);
  EXPECT_EQ(read->private_key_pem, certificate.private_key_pem);
  EXPECT_EQ(read->not_after, certificate.not_after);
  EXPECT_FALSE(CertificateOfKubeconfig("users: [{name: x, user: {token: t}}]").ok());
  EXPECT_FALSE(CertificateOfKubeconfig("{{{").ok());
}

// The two commands with IssueKubeconfig faked: what kubectl's runs see.
class ExecCommands : public testing::Test {
 protected:
  ExecCommands() {
    env_.home = tmp_.path() + "/home";
    env_.variable = [this](const std::string& name) -> std::optional<std::string> {
      if (name == "XDG_CACHE_HOME") return tmp_.path() + "/xdg";
      if (name == "KUBERNETES_EXEC_INFO") return exec_info_;
      return std::nullopt;
    };
    options_.server = "127.0.0.1:9090";
  }

  ExecContext Context() {
    return ExecContext{
        options_,
        env_,
        clock_,
        "127.0.0.1:9090",
        false,
        [this](const v1::IssueKubeconfigRequest& request, v1::IssueKubeconfigResponse& issued) -> grpc::Status {
          requests_.push_back(request);
          if (!refusal_.ok()) return refusal_;
          const ClientCertificate certificate = ExecTestCertificate(clock_.Now(), lifetime_);
          issued.set_kubeconfig(IssuedKubeconfig(certificate));
          issued.set_serial("serial" + std::to_string(requests_.size()));
          issued.set_role(request.role());
          issued.mutable_expire_time()->set_seconds(std::chrono::system_clock::to_time_t(certificate.not_after));
          return grpc::Status::OK;
        }};
  }

  struct Ran {
    int code = 0;
    std::string out{}, err{};
  };
  Ran Credential(const VclusterExecCredential& command) {
    std::ostringstream out, err;
    const int code = RunExecCredential(command, Context(), out, err);
    return {code, out.str(), err.str()};
  }
  Ran Kubeconfig(const VclusterExecKubeconfig& command) {
    std::ostringstream out, err;
    const int code = RunExecKubeconfig(command, Context(), out, err);
    return {code, out.str(), err.str()};
  }
  std::filesystem::path CacheFile() const {
    return std::filesystem::path(tmp_.path()) / "xdg/septa/credentials/acme_train_edit@127.0.0.1_9090.json";
  }

  test::TempDir tmp_;
  FakeClock clock_;
  GlobalOptions options_;
  Environment env_;
  std::optional<std::string> exec_info_;
  seconds lifetime_ = hours(1);
  grpc::Status refusal_ = grpc::Status::OK;
  std::vector<v1::IssueKubeconfigRequest> requests_;
};

const VclusterExecCredential kTrainEdit{"acme", "train", "edit", "1h"};

TEST_F(ExecCommands, CredentialIssuesOnceThenServesTheCache) {
  const Ran first = Credential(kTrainEdit);
  ASSERT_EQ(first.code, kExitOk) << first.err;
  EXPECT_EQ(first.err, "");
  ASSERT_EQ(requests_.size(), 1u);
  EXPECT_EQ(requests_[0].tenant(), "acme");
  EXPECT_EQ(requests_[0].vcluster(), "train");
  EXPECT_EQ(requests_[0].role(), "edit");
  EXPECT_EQ(requests_[0].ttl(), "1h");
  const nlohmann::json credential = nlohmann::json::parse(first.out);
  EXPECT_EQ(credential["kind"], "ExecCredential");
  EXPECT_EQ(credential["status"]["expirationTimestamp"], FormatRfc3339(clock_.Now() + hours(1) - seconds(360)));
  EXPECT_TRUE(std::filesystem::exists(CacheFile()));

  clock_.Advance(minutes(30));
  const Ran second = Credential(kTrainEdit);
  ASSERT_EQ(second.code, kExitOk);
  EXPECT_EQ(requests_.size(), 1u);  // from the cache
  EXPECT_EQ(nlohmann::json::parse(second.out)["status"], credential["status"]);

  clock_.Advance(minutes(25));  // 5 minutes left: within the margin
  const Ran third = Credential(kTrainEdit);
  ASSERT_EQ(third.code, kExitOk);
  EXPECT_EQ(requests_.size(), 2u);
  EXPECT_NE(nlohmann::json::parse(third.out)["status"]["clientCertificateData"],
            credential["status"]["clientCertificateData"]);
}

TEST_F(ExecCommands, AnswersInTheApiVersionKubectlSent) {
  exec_info_ = R"({"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1beta1","spec":{}})";
  const Ran ran = Credential(kTrainEdit);
  ASSERT_EQ(ran.code, kExitOk);
  EXPECT_EQ(nlohmann::json::parse(ran.out)["apiVersion"], "client.authentication.k8s.io/v1beta1");
}

TEST_F(ExecCommands, ARefusalIsOnStderrWithNothingOnStdout) {
  refusal_ = grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "invalid token");
  const Ran ran = Credential(kTrainEdit);
  EXPECT_EQ(ran.code, kExitFailure);
  EXPECT_EQ(ran.out, "");
  EXPECT_EQ(ran.err,
            "septactl: UNAUTHENTICATED: invalid token\n"
            "septactl: kubectl's credential plugin for virtual cluster acme/train needs a valid Septa token to renew "
            "its certificate (token: in septactl's config file, or $SEPTA_TOKEN)\n");
  EXPECT_FALSE(std::filesystem::exists(CacheFile()));

  refusal_ = grpc::Status(grpc::StatusCode::FAILED_PRECONDITION, "virtual cluster acme/train is SLEEPING");
  const Ran sleeping = Credential(kTrainEdit);
  EXPECT_EQ(sleeping.code, kExitFailure);
  EXPECT_EQ(sleeping.err, "septactl: FAILED_PRECONDITION: virtual cluster acme/train is SLEEPING\n");
}

TEST_F(ExecCommands, ACachedCertificateOutlivesTheToken) {
  ASSERT_EQ(Credential(kTrainEdit).code, kExitOk);
  refusal_ = grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "the token was revoked");
  clock_.Advance(minutes(10));
  EXPECT_EQ(Credential(kTrainEdit).code, kExitOk);  // not asked: the cached one is fresh
  clock_.Advance(minutes(45));
  const Ran due = Credential(kTrainEdit);
  EXPECT_EQ(due.code, kExitFailure);
  EXPECT_NE(due.err.find("the token was revoked"), std::string::npos);
}

TEST_F(ExecCommands, KubeconfigSeedsTheCacheForKubectlsFirstRun) {
  const Ran made = Kubeconfig({{"acme", "train", "1h", "edit"}, "/opt/septactl"});
  ASSERT_EQ(made.code, kExitOk) << made.err;
  EXPECT_EQ(made.err, "");
  const YAML::Node kubeconfig = YAML::Load(made.out);
  const YAML::Node exec = kubeconfig["users"][0]["user"]["exec"];
  EXPECT_EQ(exec["command"].as<std::string>(), "/opt/septactl");
  EXPECT_EQ(exec["args"].as<std::vector<std::string>>(),
            (std::vector<std::string>{"--server", "127.0.0.1:9090", "vcluster", "credential", "train", "--tenant",
                                      "acme", "--role", "edit", "--ttl", "1h"}));
  ASSERT_EQ(requests_.size(), 1u);
  ASSERT_TRUE(std::filesystem::exists(CacheFile()));

  const Ran first_run = Credential(kTrainEdit);
  ASSERT_EQ(first_run.code, kExitOk);
  EXPECT_EQ(requests_.size(), 1u);  // the kubeconfig's certificate
}

TEST_F(ExecCommands, KubeconfigWithAGivenTokenSaysTheKubeconfigDoesNotCarryIt) {
  options_.token = "septa_secret";
  const Ran made = Kubeconfig({{"acme", "train", "", "edit"}, "/opt/septactl"});
  ASSERT_EQ(made.code, kExitOk);
  EXPECT_EQ(made.out.find("septa_secret"), std::string::npos);
  EXPECT_NE(made.err.find("note: the kubeconfig does not carry --token"), std::string::npos);
}

TEST_F(ExecCommands, KubeconfigPassesTheCaFileAbsolute) {
  options_.ca_file = tmp_.Write("ca.pem", "PEM");
  options_.tls = true;
  const Ran made = Kubeconfig({{"acme", "train", "", "edit"}, "/opt/septactl"});
  ASSERT_EQ(made.code, kExitOk) << made.err;
  const auto args = YAML::Load(made.out)["users"][0]["user"]["exec"]["args"].as<std::vector<std::string>>();
  ASSERT_GE(args.size(), 4u);
  EXPECT_EQ(args[2], "--ca-file");
  EXPECT_EQ(args[3], options_.ca_file);
}

TEST_F(ExecCommands, KubeconfigRefusedIsOnStderr) {
  refusal_ = grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "a viewer may only ask for role \"view\"");
  const Ran ran = Kubeconfig({{"acme", "train", "", "edit"}, "/opt/septactl"});
  EXPECT_EQ(ran.code, kExitFailure);
  EXPECT_EQ(ran.out, "");
  EXPECT_EQ(ran.err, "septactl: PERMISSION_DENIED: a viewer may only ask for role \"view\"\n");
}

TEST(ExecRun, NoTokenFailsWithSeptactlsMessage) {
  test::TempDir tmp;
  Environment env;
  env.home = tmp.path();
  std::ostringstream out, err;
  const int code = RunSeptactl({"--server", "127.0.0.1:1", "vcluster", "credential", "acme", "train", "--role", "edit"},
                               env, out, err);
  EXPECT_EQ(code, kExitFailure);
  EXPECT_EQ(out.str(), "");
  EXPECT_EQ(err.str().rfind("septactl: UNAUTHENTICATED: no token", 0), 0u) << err.str();
}

}  // namespace
}  // namespace septa::cli
