#include "services/vaultsim/vaultsim.h"

#include <boost/beast/http/field.hpp>
#include <condition_variable>

#include "common/documents.h"
#include "services/base/secure_random.h"
#include "services/http/target.h"
#include "services/kube/client.h"
#include "services/kube/resources.h"

namespace septa::vaultsim {
namespace {

namespace bhttp = boost::beast::http;

std::string RandomToken(RandomSource& random) {
  std::array<std::uint8_t, 18> bytes{};
  if (!random.Fill(bytes).ok()) return {};
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::string out = "hvs.";
  for (auto b : bytes) out += kAlphabet[b % 62];
  return out;
}

http::Response ToResponse(const http::Request& request, const ApiReply& reply) {
  http::Response res{static_cast<bhttp::status>(reply.status), request.version()};
  res.set(bhttp::field::cache_control, "no-store");
  if (!reply.content_type.empty()) res.set(bhttp::field::content_type, reply.content_type);
  if (request.method() != bhttp::verb::head) res.body() = reply.body;
  return res;
}

std::optional<std::pair<std::string, std::uint16_t>> SplitHostPort(const std::string& listen) {
  auto colon = listen.rfind(':');
  if (colon == std::string::npos) return std::nullopt;
  try {
    int port = std::stoi(listen.substr(colon + 1));
    if (port < 0 || port > 65535) return std::nullopt;
    return std::pair{listen.substr(0, colon), static_cast<std::uint16_t>(port)};
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// Vault's TokenReview call (vault-plugin-auth-kubernetes token_review.go):
// POST the review with the bearer; a 401 means the reviewer (or, with no
// reviewer JWT, the login's JWT) is not a live token; the JWT must be
// authenticated for one of the audiences asked, as a service account.
Result<ReviewedServiceAccount> ReviewToken(const TokenReviewRequest& request) {
  kube::ClientConfig config;
  config.server = request.kubernetes_host;
  config.ca_pem = request.kubernetes_ca_cert;
  config.token = request.bearer;
  kube::ClientOptions options;
  options.max_retries = 0;
  options.request_timeout = std::chrono::seconds(10);
  auto client = kube::Client::Create(std::move(config), options);
  if (!client.ok()) return client.status();
  nlohmann::json spec = {{"token", request.jwt}};
  if (!request.audiences.empty()) spec["audiences"] = request.audiences;
  auto review = (*client)->Create(
      kube::kTokenReviews, "", {{"apiVersion", "authentication.k8s.io/v1"}, {"kind", "TokenReview"}, {"spec", spec}});
  if (!review.ok()) return review.status();
  const nlohmann::json status = review->value("status", nlohmann::json::object());
  if (!status.is_object()) return septa::PermissionDenied("lookup failed: no status");
  if (auto error = status.value("error", std::string()); !error.empty()) {
    return septa::PermissionDenied("lookup failed: " + error);
  }
  if (!status.value("authenticated", false))
    return septa::PermissionDenied("lookup failed: service account jwt not valid");
  if (!request.audiences.empty()) {
    std::vector<std::string> granted;
    if (auto a = status.find("audiences"); a != status.end() && a->is_array()) granted = StringList(*a);
    if (std::none_of(request.audiences.begin(), request.audiences.end(), [&](const std::string& want) {
          return std::find(granted.begin(), granted.end(), want) != granted.end();
        })) {
      return septa::PermissionDenied("lookup failed: service account jwt valid for other audiences");
    }
  }
  const nlohmann::json user = status.value("user", nlohmann::json::object());
  const std::string username = user.is_object() ? user.value("username", std::string()) : std::string();
  static constexpr std::string_view kPrefix = "system:serviceaccount:";
  const std::size_t colon = username.find(':', kPrefix.size());
  if (username.rfind(kPrefix, 0) != 0 || colon == std::string::npos ||
      username.find(':', colon + 1) != std::string::npos) {
    return septa::PermissionDenied("lookup failed: username returned is not a service account");
  }
  return ReviewedServiceAccount{username.substr(kPrefix.size(), colon - kPrefix.size()), username.substr(colon + 1),
                                user.value("uid", std::string())};
}

}  // namespace

VaultSim::VaultSim(VaultSimOptions options) : options_(std::move(options)) {
  if (options_.random == nullptr) {
    system_random_ = std::make_unique<base::SecureRandom>();
    options_.random = system_random_.get();
  }
  if (options_.clock == nullptr) options_.clock = &system_clock_;
  std::string root = options_.root_token.empty() ? RandomToken(*options_.random) : options_.root_token;
  backend_ = std::make_unique<Backend>(*options_.clock, *options_.random, root);
  if (options_.review_kubernetes_logins) backend_->SetTokenReviewer(ReviewToken);
}

VaultSim::~VaultSim() { Stop(); }

Status VaultSim::Start() {
  auto hp = SplitHostPort(options_.listen);
  if (!hp) return InvalidArgument("listen: want host:port, got \"" + options_.listen + "\"");
  if (backend_->root_token().empty()) return Unavailable("no randomness for the root token");
  http::ServerOptions server_options;
  server_options.host = hp->first;
  server_options.port = hp->second;
  server_options.io_threads = options_.io_threads;
  server_options.body_limit = 32 * 1024 * 1024;  // Vault's default max_request_size
  server_options.error_formatter = [](http::HttpStatus status, std::string_view message) {
    http::Response res{status, 11};
    res.set(bhttp::field::content_type, "application/json");
    res.body() = nlohmann::json{{"errors", nlohmann::json::array({std::string(message)})}}.dump();
    return res;
  };
  if (options_.tls) {
    // TLS peers check validity against the wall clock, not the injected one.
    TimePoint now = std::chrono::system_clock::now();
    http::CertificateRequest ca_request{
        "septa-vaultsim CA", {}, {}, {}, now - std::chrono::minutes(1), now + std::chrono::hours(24 * 365), true};
    auto ca = http::IssueCertificate(ca_request, nullptr);
    if (!ca.ok()) return ca.status();
    ca_ = *ca;
    http::CertificateRequest serving{"septa-vaultsim",
                                     {},
                                     {"localhost"},
                                     {"127.0.0.1", "::1"},
                                     now - std::chrono::minutes(1),
                                     now + std::chrono::hours(24 * 365),
                                     false};
    auto cert = http::IssueCertificate(serving, &ca_);
    if (!cert.ok()) return cert.status();
    auto ctx = http::MakeServerTlsContext({cert->certificate + ca_.certificate, cert->private_key, "", false});
    if (!ctx.ok()) return ctx.status();
    server_options.tls = *ctx;
  }
  server_ = std::make_unique<http::Server>(server_options,
                                           [this](http::Request&& request, std::shared_ptr<http::Exchange> exchange) {
                                             Serve(std::move(request), std::move(exchange));
                                           });
  return server_->Start();
}

void VaultSim::Stop() {
  {
    std::lock_guard lock(delayed_mu_);
    for (auto& t : delayed_) t.request_stop();
  }
  std::vector<std::jthread> delayed;
  {
    std::lock_guard lock(delayed_mu_);
    delayed.swap(delayed_);
  }
  delayed.clear();  // joins
  if (server_) server_->Shutdown(std::chrono::milliseconds(500));
}

std::uint16_t VaultSim::port() const { return server_ ? server_->port() : 0; }

std::string VaultSim::address() const {
  auto hp = SplitHostPort(options_.listen);
  return std::string(options_.tls ? "https://" : "http://") + (hp ? hp->first : "127.0.0.1") + ":" +
         std::to_string(port());
}

void VaultSim::Serve(http::Request&& request, std::shared_ptr<http::Exchange> exchange) {
  auto reply = [&](const ApiReply& r) { exchange->Reply(ToResponse(request, r)); };
  auto target = http::ParseTarget(std::string_view(request.target().data(), request.target().size()));
  if (!target || target->segments.empty() || target->segments.front() != "v1") {
    return reply(Error(404, ""));
  }
  ApiRequest api;
  for (std::size_t i = 1; i < target->segments.size(); ++i) {
    api.path += (api.path.empty() ? "" : "/") + target->segments[i];
    api.segments.push_back(target->segments[i]);
  }
  api.query = target->query;
  const std::string method(request.method_string());
  auto list = api.query.find("list");
  if (method == "LIST" || (method == "GET" && list != api.query.end() && list->second == "true")) {
    api.op = Operation::kList;
  } else if (method == "GET") {
    api.op = Operation::kRead;
  } else if (method == "HEAD") {
    api.op = Operation::kHead;
  } else if (method == "POST" || method == "PUT" || method == "PATCH") {
    api.op = Operation::kWrite;
  } else if (method == "DELETE") {
    api.op = Operation::kDelete;
  } else {
    return reply(Error(405, "unsupported operation"));
  }
  if (auto ns = request.find("X-Vault-Namespace");
      ns != request.end() && !ns->value().empty() && ns->value() != "root" && ns->value() != "root/") {
    return reply(Error(
        400, "namespaces are not supported by septa-vaultsim (X-Vault-Namespace: " + std::string(ns->value()) + ")"));
  }
  if (auto t = request.find("X-Vault-Token"); t != request.end()) {
    api.token = std::string(t->value());
  } else if (auto a = request.find(bhttp::field::authorization); a != request.end()) {
    std::string value(a->value());
    if (value.rfind("Bearer ", 0) == 0) api.token = value.substr(7);
  }
  if (api.op == Operation::kWrite && !request.body().empty()) {
    auto body = ParseJson(request.body());
    if (!body.ok()) return reply(Error(400, "failed to parse JSON input: " + body.status().message()));
    if (!body->is_object()) return reply(Error(400, "failed to parse JSON input: the body is not a JSON object"));
    api.body = *std::move(body);
    // Vault reads a null field as an unset one (hvac sends None as null).
    for (auto it = api.body.begin(); it != api.body.end();) {
      it = it->is_null() ? api.body.erase(it) : std::next(it);
    }
  }
  std::chrono::milliseconds delay = backend_->TakeDelay();
  if (delay.count() <= 0) return reply(backend_->Handle(api));
  // The delay fault: answer from a thread of its own so the I/O thread never waits.
  std::lock_guard lock(delayed_mu_);
  delayed_.emplace_back([this, delay, api = std::move(api), request = std::move(request),
                         exchange = std::move(exchange)](std::stop_token stop) {
    std::mutex mu;
    std::condition_variable_any cv;
    std::unique_lock wait_lock(mu);
    cv.wait_for(wait_lock, stop, delay, [] { return false; });
    exchange->Reply(ToResponse(request, backend_->Handle(api)));
  });
}

}  // namespace septa::vaultsim
