// Retries, Retry-After, timeouts, authentication and authorization, and the
// Status errors kubesim gives for bad input.
#include <atomic>
#include <boost/beast/http.hpp>
#include <thread>

#include "services/http/server.h"
#include "tests/support/seeded_random.h"
#include "tests/unit/services/kube/sim_fixture.h"

namespace septa::kube {
namespace {

using nlohmann::json;
using testing::ConfigMap;
using namespace std::chrono_literals;
namespace bhttp = boost::beast::http;

// A plain-HTTP server answering with `statuses` in turn (then 200).
struct ScriptedServer {
  explicit ScriptedServer(std::vector<int> statuses, bool never_answer = false)
      : server({}, [this, statuses, never_answer](http::Request&&, std::shared_ptr<http::Exchange> ex) {
          int n = calls++;
          if (never_answer) {
            held.push_back(ex);
            return;
          }
          int code = n < static_cast<int>(statuses.size()) ? statuses[n] : 200;
          http::Response res{static_cast<bhttp::status>(code), 11};
          res.set(bhttp::field::content_type, "application/json");
          if (code == 429) res.set(bhttp::field::retry_after, "2");
          res.body() = code == 200 ? R"({"kind":"ConfigMap","metadata":{"name":"x"}})"
                                   : json{{"kind", "Status"},
                                          {"code", code},
                                          {"reason", code == 429 ? "TooManyRequests" : "ServiceUnavailable"},
                                          {"message", "try later"}}
                                         .dump();
          ex->Reply(std::move(res));
        }) {
    EXPECT_TRUE(server.Start().ok());
  }
  std::atomic<int> calls{0};
  std::vector<std::shared_ptr<http::Exchange>> held;
  http::Server server;
};

std::unique_ptr<Client> PlainClient(std::uint16_t port, std::vector<std::chrono::milliseconds>* sleeps,
                                    std::chrono::milliseconds timeout = 5s) {
  ClientConfig config;
  config.server = "http://127.0.0.1:" + std::to_string(port);
  ClientOptions options;
  options.request_timeout = timeout;
  options.sleep = [sleeps](std::chrono::milliseconds d) { sleeps->push_back(d); };
  static SeededRandom random(7);
  options.random = &random;
  return std::move(*Client::Create(config, options));
}

// A loopback port a server listened on and has closed: nothing answers there.
// 0 when no server could be started.
std::uint16_t ClosedPort() {
  http::Server s({}, [](http::Request&&, std::shared_ptr<http::Exchange>) {});
  if (!s.Start().ok()) return 0;
  return s.port();
}

TEST(kubeClientResilience, TooManyRequestsHonoursRetryAfter) {
  ScriptedServer s({429, 429});
  std::vector<std::chrono::milliseconds> sleeps;
  auto client = PlainClient(s.server.port(), &sleeps);
  auto created = client->Create(kConfigMaps, "default", ConfigMap("x"));  // even a POST: 429 was not processed
  EXPECT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(s.calls.load(), 3);
  EXPECT_EQ(sleeps, (std::vector<std::chrono::milliseconds>{2s, 2s}));
}

TEST(kubeClientResilience, ServerErrorsAreRetriedOnlyWhereSafe) {
  ScriptedServer get_server({503, 503});
  std::vector<std::chrono::milliseconds> sleeps;
  auto client = PlainClient(get_server.server.port(), &sleeps);
  EXPECT_TRUE(client->Get(kConfigMaps, "default", "x").ok());
  EXPECT_EQ(get_server.calls.load(), 3);
  for (auto d : sleeps) {
    EXPECT_GE(d, 50ms);
    EXPECT_LE(d, 5s);
  }

  ScriptedServer post_server({503});
  auto poster = PlainClient(post_server.server.port(), &sleeps);
  auto created = poster->Create(kConfigMaps, "default", ConfigMap("x"));
  EXPECT_EQ(created.status().code(), Code::kUnavailable);
  EXPECT_EQ(post_server.calls.load(), 1) << "a create is not retried after a server error";
}

TEST(kubeClientResilience, ASlowServerTimesOutNamingTheCall) {
  ScriptedServer s({}, /*never_answer=*/true);
  std::vector<std::chrono::milliseconds> sleeps;
  auto client = PlainClient(s.server.port(), &sleeps, 200ms);
  auto got = client->Get(kConfigMaps, "default", "x");
  EXPECT_EQ(got.status().code(), Code::kDeadlineExceeded);
  EXPECT_NE(got.status().message().find("GET /api/v1/namespaces/default/configmaps/x"), std::string::npos);
}

TEST(kubeClientResilience, NothingListeningIsUnavailable) {
  const std::uint16_t port = ClosedPort();
  ASSERT_NE(port, 0);
  std::vector<std::chrono::milliseconds> sleeps;
  auto client = PlainClient(port, &sleeps);
  EXPECT_EQ(client->Get(kConfigMaps, "default", "x").status().code(), Code::kUnavailable);
}

// An informer whose server cannot be reached says why its first list is
// missing (what a caller whose WaitForSync timed out reports), and keeps
// trying until stopped.
TEST(kubeClientResilience, AnInformerSaysWhyItsListFailed) {
  const std::uint16_t port = ClosedPort();
  ASSERT_NE(port, 0);
  std::vector<std::chrono::milliseconds> sleeps;
  auto client = PlainClient(port, &sleeps);
  Informer informer(*client, kConfigMaps, "default", {}, {});
  EXPECT_TRUE(informer.last_list_error().ok()) << "nothing has failed before it starts";
  informer.Start();
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (informer.last_list_error().ok()) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "no failed list reported";
    std::this_thread::sleep_for(5ms);  // polling for the event, bounded above
  }
  EXPECT_EQ(informer.last_list_error().code(), Code::kUnavailable) << informer.last_list_error().ToString();
  EXPECT_FALSE(informer.WaitForSync(0ms));
  informer.Stop();
}

class kubeAuth : public testing::SimTest {};

TEST_F(kubeAuth, NonAdminsGetWhatRoleBindingsGrant) {
  auto now = std::chrono::system_clock::now();
  auto alice_cert = sim_->IssueClientCertificate("alice", {"dev"}, now - 1h, now + 1h);
  ASSERT_TRUE(alice_cert.ok());
  auto alice = ClientFor(sim_->Kubeconfig("alice", *alice_cert));
  auto denied = alice->List(kConfigMaps, "default");
  EXPECT_EQ(denied.status().code(), Code::kPermissionDenied);
  EXPECT_EQ(KubeReason(denied.status()), "Forbidden");

  ASSERT_TRUE(client_->Create(kNamespaces, "", {{"metadata", {{"name", "team-a"}}}}).ok());
  Resource bindings{"rbac.authorization.k8s.io", "v1", "rolebindings", true};
  json binding = {{"apiVersion", "rbac.authorization.k8s.io/v1"},
                  {"kind", "RoleBinding"},
                  {"metadata", {{"name", "devs-edit"}}},
                  {"subjects", {{{"kind", "Group"}, {"name", "dev"}}}},
                  {"roleRef", {{"kind", "ClusterRole"}, {"name", "edit"}, {"apiGroup", "rbac.authorization.k8s.io"}}}};
  ASSERT_TRUE(client_->Create(bindings, "team-a", binding).ok());
  EXPECT_TRUE(alice->Create(kConfigMaps, "team-a", ConfigMap("mine")).ok());
  EXPECT_TRUE(alice->List(kConfigMaps, "team-a").ok());
  EXPECT_EQ(alice->List(kConfigMaps, "default").status().code(), Code::kPermissionDenied) << "other namespace";
  EXPECT_EQ(alice->Create(bindings, "team-a", binding).status().code(), Code::kPermissionDenied) << "edit has no rbac";

  binding["metadata"]["name"] = "bob-view";
  binding["subjects"] = {{{"kind", "User"}, {"name", "bob"}}};
  binding["roleRef"]["name"] = "view";
  ASSERT_TRUE(client_->Create(bindings, "team-a", binding).ok());
  auto bob_cert = sim_->IssueClientCertificate("bob", {}, now - 1h, now + 1h);
  auto bob = ClientFor(sim_->Kubeconfig("bob", *bob_cert));
  EXPECT_TRUE(bob->Get(kConfigMaps, "team-a", "mine").ok());
  EXPECT_EQ(bob->Delete(kConfigMaps, "team-a", "mine").code(), Code::kPermissionDenied);
}

TEST_F(kubeAuth, TokensAndTheirExpiry) {
  auto now = std::chrono::system_clock::now();
  sim_->cluster().authenticator.AddToken("good-token", {"robot", {"system:masters"}}, now + 1h);
  sim_->cluster().authenticator.AddToken("old-token", {"robot", {"system:masters"}}, now - 1s);
  auto config = *ParseKubeconfig(*sim_->AdminKubeconfig());
  config.client_certificate_pem.clear();
  config.client_key_pem.clear();
  config.token = "good-token";
  EXPECT_TRUE((*Client::Create(config))->List(kConfigMaps, "default").ok());
  config.token = "old-token";
  auto expired = (*Client::Create(config))->List(kConfigMaps, "default");
  EXPECT_EQ(expired.status().code(), Code::kUnauthenticated);
  config.token = "";
  EXPECT_EQ((*Client::Create(config))->List(kConfigMaps, "default").status().code(), Code::kUnauthenticated);
}

TEST_F(kubeAuth, ExpiredOrForeignClientCertificatesAreRefused) {
  auto now = std::chrono::system_clock::now();
  auto expired = sim_->IssueClientCertificate("old", {"system:masters"}, now - 48h, now - 24h);
  auto old = ClientFor(sim_->Kubeconfig("old", *expired));
  EXPECT_FALSE(old->List(kConfigMaps, "default").ok());
  auto foreign_ca = http::IssueCertificate({"foreign", {}, {}, {}, now - 1h, now + 1h, true}, nullptr);
  auto foreign = http::IssueCertificate({"mallory", {"system:masters"}, {}, {}, now - 1h, now + 1h}, &*foreign_ca);
  auto mallory = ClientFor(sim_->Kubeconfig("mallory", *foreign));
  EXPECT_FALSE(mallory->List(kConfigMaps, "default").ok());
}

class kubesimBadInput : public testing::SimTest {
 protected:
  Result<HttpResponse> Raw(std::string method, std::string target, std::string body, std::string content_type) {
    return client_->Call({method, target, body, content_type}, false);
  }
};

TEST_F(kubesimBadInput, StatusErrorsLikeARealApiServer) {
  struct Case {
    std::string method, target, body, content_type;
    int code;
    std::string reason;
  };
  const std::string cms = "/api/v1/namespaces/default/configmaps";
  std::vector<Case> cases = {
      {"POST", cms, "{not json", "application/json", 400, "BadRequest"},
      {"POST", cms, "[1,2]", "application/json", 400, "BadRequest"},
      {"POST", cms, R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"x"}})", "application/json", 400,
       "BadRequest"},
      {"POST", cms, R"({"metadata":{"name":"x"}})", "application/vnd.kubernetes.protobuf", 415, "UnsupportedMediaType"},
      {"POST", cms, R"({"metadata":{"name":"UPPER"}})", "application/json", 422, "Invalid"},
      {"POST", cms, R"({"metadata":{"name":"x","namespace":"other"}})", "application/json", 400, "BadRequest"},
      {"PATCH", cms + "/x", "{}", "text/plain", 415, "UnsupportedMediaType"},
      {"GET", "/api/v1/namespaces/default/widgets", "", "", 404, "NotFound"},
      {"GET", "/apis/nope.io/v1/things", "", "", 404, "NotFound"},
      {"POST", cms, "{\"metadata\":{\"name\":\"big\"},\"data\":{\"a\":\"" + std::string(4 << 20, 'x') + "\"}}",
       "application/json", 413, "RequestEntityTooLarge"},
  };
  for (const auto& c : cases) {
    auto res = Raw(c.method, c.target, c.body, c.content_type);
    ASSERT_TRUE(res.ok()) << c.method << " " << c.target << ": " << res.status().ToString();
    EXPECT_EQ(res->status, c.code) << c.method << " " << c.target << " " << c.body.substr(0, 80);
    json status = json::parse(res->body, nullptr, false);
    EXPECT_EQ(status.value("kind", ""), "Status") << res->body.substr(0, 200);
    EXPECT_EQ(status.value("reason", ""), c.reason) << c.body.substr(0, 80);
    EXPECT_EQ(status.value("code", 0), c.code);
  }
  EXPECT_TRUE(client_->Get(kNamespaces, "", "default").ok()) << "still serving";
}

}  // namespace
}  // namespace septa::kube
