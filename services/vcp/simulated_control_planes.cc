#include "services/vcp/simulated_control_planes.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/beast/http/field.hpp>

#include "common/text.h"
#include "services/base/base64.h"
#include "services/base/ip_address.h"
#include "services/base/mac.h"
#include "services/base/secure_random.h"
#include "services/core/crypto.h"
#include "services/core/kubeconfig.h"
#include "services/kubesim/api_error.h"

namespace septa::vcp {

namespace bhttp = boost::beast::http;
using namespace std::chrono_literals;

namespace {

constexpr std::string_view kPrefix = "/vc/";

Status ValidateKey(const std::string& tenant, const std::string& vcluster) {
  if (!IsDns1123Label(tenant)) return InvalidField("tenant", "\"" + tenant + "\" is not a DNS-1123 label");
  if (!IsDns1123Label(vcluster)) return InvalidField("vcluster", "\"" + vcluster + "\" is not a DNS-1123 label");
  return Status::Ok();
}

Result<http::KeyPairPem> NewCa(const std::string& common_name) {
  auto now = std::chrono::system_clock::now();
  return http::IssueCertificate({common_name, {}, {}, {}, now - 1h, now + 24h * 3650, true}, nullptr);
}

std::string TokenKubeconfig(const std::string& name, const std::string& server, const std::string& ca_certificate,
                            std::string_view user, const std::string& token) {
  return core::RenderKubeconfig({.name = name,
                                 .server = server,
                                 .server_ca = ca_certificate,
                                 .user = std::string(user),
                                 .credential = core::KubeconfigBearerToken{token}});
}

}  // namespace

Result<core::VirtualObjectStore::ListenerCertificate> ListenerCa(core::VirtualObjectStore& store) {
  auto created = NewCa("septa-virtual-control-planes-ca");
  if (!created.ok()) return created.status();
  return store.ListenerCa({created->certificate, created->private_key});
}

Status StoreControlPlane(core::VirtualObjectStore& store, const core::VirtualClusterKey& key) {
  auto stored = store.GetControlPlane(key);
  if (!stored.ok()) return stored.status();
  if (stored->has_value()) return Status::Ok();
  auto ca = NewCa(key.tenant + "/" + key.vcluster + "-ca");
  if (!ca.ok()) return ca.status();
  return store.CreateControlPlane(key, {ca->certificate, ca->private_key, 0}).status();
}

Result<std::string> IssueAdminKubeconfig(core::VirtualObjectStore& store, RandomSource& random,
                                         const core::VirtualClusterKey& key, const std::string& endpoint,
                                         const std::string& listener_ca_certificate, std::string& digest) {
  auto token = core::RandomBase64Url(random, 32);
  if (!token.ok()) return token.status();
  digest = core::Sha256Hex(*token);
  SEPTA_RETURN_IF_ERROR(store.AddTokenDigest(key, digest));
  return TokenKubeconfig(key.tenant + "-" + key.vcluster, endpoint, listener_ca_certificate, kAdminUser, *token);
}

SimulatedControlPlanes::SimulatedControlPlanes(core::VirtualObjectStore& store, SimulatedControlPlanesOptions options)
    : store_(store),
      options_(std::move(options)),
      system_random_(options_.random ? nullptr : std::make_unique<base::SecureRandom>()),
      clock_(options_.clock ? *options_.clock : system_clock_),
      random_(options_.random ? *options_.random : *system_random_) {
  const std::string& host = options_.host;
  bool wildcard = host.empty() || host == "0.0.0.0" || host == "::" || host == "[::]";
  endpoint_host_ = !options_.advertise_host.empty() ? options_.advertise_host : wildcard ? "127.0.0.1" : host;
}

SimulatedControlPlanes::~SimulatedControlPlanes() { Stop(); }

Status SimulatedControlPlanes::Start() {
  auto ca = ListenerCa(store_);
  if (!ca.ok()) return ca.status();
  listener_ca_ = {ca->ca_certificate, ca->ca_private_key};
  std::string host = options_.host.empty() ? "127.0.0.1" : options_.host;
  if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  // The certificate names loopback, the listen host and the advertised one.
  std::vector<std::string> ips = {"127.0.0.1", "::1"};
  std::vector<std::string> names = {"localhost"};
  for (std::string name : {host, endpoint_host_}) {
    if (name.size() > 2 && name.front() == '[') name = name.substr(1, name.size() - 2);
    if (name == "0.0.0.0" || name == "::") continue;
    std::vector<std::string>& list = base::IsIpAddress(name) ? ips : names;
    if (std::find(list.begin(), list.end(), name) == list.end()) list.push_back(name);
  }
  auto now = std::chrono::system_clock::now();
  auto serving = http::IssueCertificate({"septa-virtual-control-planes", {}, names, ips, now - 1h, now + 24h * 365},
                                        &listener_ca_);
  if (!serving.ok()) return serving.status();
  // Each virtual cluster has its own client CA: certificates are verified
  // after routing (VirtualControlPlane), and optional, as tokens work too.
  auto tls = http::MakeServerTlsContext({.certificate_pem = serving->certificate,
                                         .private_key_pem = serving->private_key,
                                         .accept_any_client_certificate = true});
  if (!tls.ok()) return tls.status();

  http::ServerOptions so;
  so.host = host;
  so.port = options_.port;
  so.tls = *tls;
  so.io_threads = options_.io_threads;
  so.max_connections = options_.max_connections;
  so.body_limit = 3 * 1024 * 1024;  // the API server's request limit
  server_ =
      std::make_unique<http::Server>(so, [this](http::Request&& request, std::shared_ptr<http::Exchange> exchange) {
        Route(std::move(request), std::move(exchange));
      });
  SEPTA_RETURN_IF_ERROR(server_->Start());
  if (options_.tick_interval.count() > 0) {
    ticker_ = std::thread([this] {
      std::unique_lock lock(ticker_mu_);
      while (!ticker_wake_.wait_for(lock, options_.tick_interval, [this] { return stopping_; })) {
        lock.unlock();
        Tick();
        lock.lock();
      }
    });
  }
  return Status::Ok();
}

void SimulatedControlPlanes::Stop() {
  {
    std::lock_guard lock(ticker_mu_);
    stopping_ = true;
  }
  ticker_wake_.notify_all();
  if (ticker_.joinable()) ticker_.join();
  if (server_) server_->Shutdown(1s);
}

void SimulatedControlPlanes::Tick() {
  std::vector<Plane> planes;
  {
    std::lock_guard lock(mu_);
    for (const auto& [key, plane] : planes_) planes.push_back(plane);
  }
  for (const auto& plane : planes) {
    if (plane->stale()) {
      if (Status refreshed = plane->Refresh(); !refreshed.ok() && refreshed.code() != Code::kNotFound) {
        spdlog::warn("virtual control plane: refresh failed, retried next tick: {}", refreshed.ToString());
        plane->MarkStale();
      }
    }
    plane->Tick();
  }
  if (options_.idle_after.count() <= 0) return;
  const TimePoint idle_since = clock_.Now() - options_.idle_after;
  std::lock_guard lock(mu_);
  std::erase_if(planes_, [&](const auto& entry) { return entry.second->IdleSince(idle_since); });
}

void SimulatedControlPlanes::Changed(const std::string& tenant, const std::string& vcluster) {
  std::lock_guard lock(mu_);
  if (auto it = planes_.find({tenant, vcluster}); it != planes_.end()) it->second->MarkStale();
}

void SimulatedControlPlanes::ChangedAll() {
  std::lock_guard lock(mu_);
  for (const auto& [key, plane] : planes_) plane->MarkStale();
}

std::uint16_t SimulatedControlPlanes::port() const { return server_ ? server_->port() : 0; }

std::string SimulatedControlPlanes::endpoint(const std::string& tenant, const std::string& vcluster) const {
  bool v6 = endpoint_host_.find(':') != std::string::npos && endpoint_host_.front() != '[';
  std::string host = v6 ? "[" + endpoint_host_ + "]" : endpoint_host_;
  return "https://" + host + ":" + std::to_string(port()) + std::string(kPrefix) + tenant + "/" + vcluster;
}

std::size_t SimulatedControlPlanes::loaded_count() const {
  std::lock_guard lock(mu_);
  return planes_.size();
}

Result<SimulatedControlPlanes::Plane> SimulatedControlPlanes::Loaded(const core::VirtualClusterKey& key) {
  auto found = [&]() -> Plane {
    std::lock_guard lock(mu_);
    auto it = planes_.find(key);
    if (it == planes_.end()) return nullptr;
    it->second->Touch();
    return it->second;
  };
  if (Plane plane = found()) return plane;
  std::lock_guard loading(load_mu_);
  if (Plane plane = found()) return plane;
  VirtualControlPlane::Secrets secrets;
  // Before Start there is no listener key to derive them from: no syncer
  // token is accepted, and service account tokens die with this copy.
  if (!listener_ca_.private_key.empty()) {
    secrets.syncer_token_digest = core::Sha256Hex(SyncerToken(key));
    secrets.service_account_key = ServiceAccountKey(key);
  }
  if (options_.client_ca) {
    auto ca = options_.client_ca(key);
    if (!ca.ok()) return ca.status();
    secrets.client_ca_pem = *std::move(ca);
  }
  auto loaded = VirtualControlPlane::Load(key, store_, clock_, random_, std::move(secrets));
  if (!loaded.ok()) return loaded.status();
  Plane plane = std::move(*loaded);
  std::lock_guard lock(mu_);
  planes_.emplace(key, plane);
  return plane;
}

Result<core::ControlPlaneState> SimulatedControlPlanes::Ensure(const std::string& tenant, const std::string& vcluster) {
  SEPTA_RETURN_IF_ERROR(ValidateKey(tenant, vcluster));
  const core::VirtualClusterKey key{tenant, vcluster};
  SEPTA_RETURN_IF_ERROR(StoreControlPlane(store_, key));
  auto plane = Loaded(key);
  if (!plane.ok()) return plane.status();
  return core::ControlPlaneState{true, endpoint(tenant, vcluster), ""};
}

Status SimulatedControlPlanes::Remove(const std::string& tenant, const std::string& vcluster) {
  SEPTA_RETURN_IF_ERROR(ValidateKey(tenant, vcluster));
  const core::VirtualClusterKey key{tenant, vcluster};
  std::lock_guard loading(load_mu_);  // no load of it races the removal
  {
    std::lock_guard lock(mu_);
    planes_.erase(key);
  }
  return store_.RemoveControlPlane(key);
}

Result<std::vector<std::pair<std::string, std::string>>> SimulatedControlPlanes::List() {
  auto keys = store_.ListControlPlanes();
  if (!keys.ok()) return keys.status();
  std::vector<std::pair<std::string, std::string>> out;
  for (auto& key : *keys) out.emplace_back(std::move(key.tenant), std::move(key.vcluster));
  return out;
}

// Derived from the listener CA's key, which every replica reads from the
// database: the same token on every replica and across restarts, nothing new
// stored, and one virtual cluster's token is worthless for any other.
std::string SimulatedControlPlanes::SyncerToken(const core::VirtualClusterKey& key) const {
  return base::Base64UrlEncode(
      base::HmacSha256(listener_ca_.private_key, "septa-syncer/" + key.tenant + "/" + key.vcluster));
}

// Derived as the syncer's token is: every replica signs and verifies the
// tokens of a virtual cluster alike, before and after restarts.
std::string SimulatedControlPlanes::ServiceAccountKey(const core::VirtualClusterKey& key) const {
  return base::HmacSha256(listener_ca_.private_key, "septa-service-accounts/" + key.tenant + "/" + key.vcluster);
}

Result<std::string> SimulatedControlPlanes::SyncerKubeconfig(const std::string& tenant, const std::string& vcluster) {
  SEPTA_RETURN_IF_ERROR(ValidateKey(tenant, vcluster));
  if (listener_ca_.private_key.empty()) return Status(Code::kFailedPrecondition, "virtual control planes: not started");
  return TokenKubeconfig(tenant + "-" + vcluster, endpoint(tenant, vcluster), listener_ca_.certificate, kSyncerUser,
                         SyncerToken({tenant, vcluster}));
}

Result<std::string> SimulatedControlPlanes::AdminKubeconfig(const std::string& tenant, const std::string& vcluster) {
  SEPTA_RETURN_IF_ERROR(ValidateKey(tenant, vcluster));
  const core::VirtualClusterKey key{tenant, vcluster};
  std::string digest;
  auto kubeconfig =
      IssueAdminKubeconfig(store_, random_, key, endpoint(tenant, vcluster), listener_ca_.certificate, digest);
  if (!kubeconfig.ok()) return kubeconfig;
  std::lock_guard lock(mu_);
  if (auto it = planes_.find(key); it != planes_.end()) it->second->AllowTokenDigest(digest);
  return kubeconfig;
}

void SimulatedControlPlanes::Route(http::Request&& request, std::shared_ptr<http::Exchange> exchange) {
  // /vc/<tenant>/<vcluster>[/<the Kubernetes API path>][?query]
  const std::string target_text(request.target());
  std::string_view target = target_text;
  kubesim::ApiError not_found;
  not_found.code = 404;
  not_found.reason = "NotFound";
  not_found.message = "no virtual cluster at " + std::string(target.substr(0, target.find('?')));
  if (target.substr(0, kPrefix.size()) != kPrefix) return kubesim::ReplyError(*exchange, not_found);
  std::string_view rest = target.substr(kPrefix.size());
  std::size_t tenant_end = rest.find('/');
  if (tenant_end == std::string_view::npos) return kubesim::ReplyError(*exchange, not_found);
  std::string tenant(rest.substr(0, tenant_end));
  rest = rest.substr(tenant_end + 1);
  std::size_t vcluster_end = rest.find_first_of("/?");
  std::string vcluster(rest.substr(0, vcluster_end));
  std::string api_path = vcluster_end == std::string_view::npos ? "/" : std::string(rest.substr(vcluster_end));
  if (api_path.front() == '?') api_path = "/" + api_path;
  if (!ValidateKey(tenant, vcluster).ok()) return kubesim::ReplyError(*exchange, not_found);

  auto plane = Loaded({tenant, vcluster});
  if (plane.ok()) {
    if (Status fresh = (*plane)->Refresh(); !fresh.ok()) {
      if (fresh.code() == Code::kNotFound) {  // removed through another replica
        std::lock_guard lock(mu_);
        if (auto it = planes_.find({tenant, vcluster}); it != planes_.end() && it->second == *plane) planes_.erase(it);
      }
      plane = fresh;
    }
  }
  if (!plane.ok()) {
    if (plane.status().code() == Code::kNotFound) return kubesim::ReplyError(*exchange, not_found);
    kubesim::ApiError unavailable;
    unavailable.code = 503;
    unavailable.reason = "ServiceUnavailable";
    unavailable.message =
        "virtual cluster " + tenant + "/" + vcluster + " cannot be loaded: " + plane.status().message();
    unavailable.retry_after_seconds = 1;
    return kubesim::ReplyError(*exchange, unavailable);
  }
  request.target(api_path);
  (*plane)->Handle(std::move(request), std::move(exchange));
}

}  // namespace septa::vcp
