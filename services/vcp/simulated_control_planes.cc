#include "services/vcp/simulated_control_planes.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <boost/beast/http/field.hpp>

#include "common/ip_address.h"
#include "common/text.h"
#include "services/base/base64.h"
#include "services/base/mac.h"
#include "services/base/secure_random.h"
#include "services/core/crypto.h"
#include "services/core/kubeconfig.h"
#include "services/http/target.h"
#include "services/kubesim/api_error.h"
#include "tenancy/virtual_cluster_ref.h"

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

// The flow of requests whose virtual cluster is not in use yet (its
// credentials are read first): tenants are DNS labels, never empty.
const std::string kUnidentifiedFlow;

constexpr int kRetryAfterSeconds = 1;

kubesim::ApiError TooManyRequests(std::string why) {
  // kube-apiserver's words (its max-in-flight and APF filters), then why.
  kubesim::ApiError e;
  e.code = 429;
  e.reason = "TooManyRequests";
  e.message = "Too many requests, please try again later" + (why.empty() ? "" : ": " + why);
  e.retry_after_seconds = kRetryAfterSeconds;
  return e;
}

// The slots a request holds of its virtual cluster's limits, each given
// back once: the request's when it is answered (or dropped unanswered), the
// watch's when its stream ends or its connection closes.
struct Slots {
  std::shared_ptr<Gate> gate;
  std::atomic<bool> request{false};
  std::atomic<bool> watch{false};
  void ReleaseRequest() {
    if (request.exchange(false)) gate->ReleaseRequest();
  }
  void ReleaseWatch() {
    if (watch.exchange(false)) gate->CloseWatch();
  }
};

class AdmittedExchange final : public http::Exchange {
 public:
  AdmittedExchange(std::shared_ptr<http::Exchange> inner, std::shared_ptr<Slots> slots)
      : inner_(std::move(inner)), slots_(std::move(slots)) {
    if (slots_->watch) inner_->OnClose([slots = slots_] { slots->ReleaseWatch(); });
  }
  ~AdmittedExchange() override {
    slots_->ReleaseRequest();
    slots_->ReleaseWatch();
  }
  const http::ConnectionInfo& connection() const override { return inner_->connection(); }
  // Released first: a client that sends its next request on the answer finds the slot free.
  void Reply(http::Response response) override {
    slots_->ReleaseRequest();
    slots_->ReleaseWatch();
    inner_->Reply(std::move(response));
  }
  void StartStream(http::Response head) override {
    slots_->ReleaseRequest();
    inner_->StartStream(std::move(head));
  }
  using http::Exchange::WriteChunk;
  bool WriteChunk(std::vector<std::shared_ptr<const std::string>> parts) override {
    return inner_->WriteChunk(std::move(parts));
  }
  void EndStream() override {
    slots_->ReleaseWatch();
    inner_->EndStream();
  }
  void OnClose(std::function<void()> callback) override { inner_->OnClose(std::move(callback)); }
  bool closed() const override { return inner_->closed(); }

 private:
  std::shared_ptr<http::Exchange> inner_;
  std::shared_ptr<Slots> slots_;
};

bool IsWatch(const http::Request& request, const std::string& api_path) {
  if (request.method() != boost::beast::http::verb::get) return false;
  auto target = http::ParseTarget(api_path);
  if (!target) return false;
  auto watch = target->query.find("watch");
  return watch != target->query.end() && (watch->second == "true" || watch->second == "1");
}

std::string TokenKubeconfig(const std::string& name, const std::string& server, const std::string& ca_certificate,
                            std::string_view user, const std::string& token) {
  return core::RenderKubeconfig({.name = name,
                                 .server = server,
                                 .server_ca = ca_certificate,
                                 .user = std::string(user),
                                 .credential = core::KubeconfigBearerToken{token}});
}

// The answer to a tenant's credential while its tenant is suspended: 403,
// not 401, since the credential is genuine and kubectl should not ask for
// another; the message says why and what ends it.
kubesim::ApiError SuspendedError(const core::VirtualClusterKey& key) {
  return kubesim::ForbiddenError("tenant \"" + key.tenant +
                                 "\" is suspended: its credentials are refused until an admin makes it ACTIVE again");
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
  auto ca = NewCa(key.ToString() + "-ca");
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
  std::uint8_t prefix[4] = {};
  if (random_.Fill(prefix).ok()) {
    constexpr char kHex[] = "0123456789abcdef";
    for (std::uint8_t byte : prefix) request_id_prefix_ += {kHex[byte >> 4], kHex[byte & 15]};
  }
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
    std::vector<std::string>& list = IsIpAddress(name) ? ips : names;
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
  so.max_stream_buffer = options_.max_stream_buffer;
  so.body_limit = 3 * 1024 * 1024;  // the API server's request limit
  server_ =
      std::make_unique<http::Server>(so, [this](http::Request&& request, std::shared_ptr<http::Exchange> exchange) {
        Route(std::move(request), std::move(exchange));
      });
  queue_ = std::make_unique<FairQueue>(options_.fairness);
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
  if (queue_) queue_->Stop();  // after the listener: nothing queues any more
}

void SimulatedControlPlanes::Tick() {
  std::vector<Plane> planes;
  std::vector<GatePtr> gates;
  {
    std::lock_guard lock(mu_);
    for (const auto& [key, plane] : planes_) planes.push_back(plane);
    for (const auto& [key, gate] : gates_) gates.push_back(gate);
  }
  for (const auto& gate : gates) {
    if (!gate->TakeLimitsStale()) continue;
    auto limits = LimitsOf(gate->key());
    if (!limits.ok()) {
      if (limits.status().code() != Code::kNotFound) gate->MarkLimitsStale();  // read again next tick
      continue;
    }
    gate->SetLimits(*limits);
    std::lock_guard lock(mu_);
    if (auto it = planes_.find(gate->key()); it != planes_.end()) it->second->SetLimits(*limits);
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
  std::erase_if(
      gates_, [&](const auto& entry) { return entry.second->IdleSince(idle_since) && !planes_.contains(entry.first); });
}

void SimulatedControlPlanes::Changed(const std::string& tenant, const std::string& vcluster) {
  std::lock_guard lock(mu_);
  if (auto it = planes_.find({tenant, vcluster}); it != planes_.end()) it->second->MarkStale();
}

void SimulatedControlPlanes::ChangedAll() {
  std::lock_guard lock(mu_);
  for (const auto& [key, plane] : planes_) plane->MarkStale();
}

void SimulatedControlPlanes::LimitsChanged(const std::string& tenant, const std::string& vcluster) {
  std::lock_guard lock(mu_);
  if (auto it = gates_.find({tenant, vcluster}); it != gates_.end()) it->second->MarkLimitsStale();
}

void SimulatedControlPlanes::LimitsChangedAll() {
  std::lock_guard lock(mu_);
  for (const auto& [key, gate] : gates_) gate->MarkLimitsStale();
}

std::uint16_t SimulatedControlPlanes::port() const { return server_ ? server_->port() : 0; }

std::string SimulatedControlPlanes::endpoint(const std::string& tenant, const std::string& vcluster) const {
  bool v6 = endpoint_host_.find(':') != std::string::npos && endpoint_host_.front() != '[';
  std::string host = v6 ? "[" + endpoint_host_ + "]" : endpoint_host_;
  return "https://" + host + ":" + std::to_string(port()) + std::string(kPrefix) +
         tenancy::VirtualClusterText(tenant, vcluster);
}

std::size_t SimulatedControlPlanes::waiting(const std::string& tenant) const {
  return queue_ ? queue_->queued(tenant) : 0;
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
  // Before Start there is no listener key to derive it from: service
  // account tokens then die with this copy.
  auto loaded = VirtualControlPlane::Load(key, store_, clock_, random_,
                                          listener_ca_.private_key.empty() ? std::string() : ServiceAccountKey(key));
  if (!loaded.ok()) return loaded.status();
  Plane plane = std::move(*loaded);
  std::lock_guard lock(mu_);
  if (auto gate = gates_.find(key); gate != gates_.end()) plane->SetLimits(gate->second->limits());
  planes_.emplace(key, plane);
  return plane;
}

Result<tenancy::ApiLimits> SimulatedControlPlanes::LimitsOf(const core::VirtualClusterKey& key) {
  if (!options_.api_limits) return tenancy::ApiLimits{};
  return options_.api_limits(key);
}

SimulatedControlPlanes::GatePtr SimulatedControlPlanes::FindGate(const core::VirtualClusterKey& key) {
  std::lock_guard lock(mu_);
  auto it = gates_.find(key);
  return it == gates_.end() ? nullptr : it->second;
}

Result<SimulatedControlPlanes::GatePtr> SimulatedControlPlanes::LoadedGate(const core::VirtualClusterKey& key) {
  if (GatePtr gate = FindGate(key)) return gate;
  Gate::Secrets secrets;
  if (!listener_ca_.private_key.empty()) {
    secrets.syncer_token_digest = core::Sha256Hex(SyncerToken(key));
    secrets.service_account_key = ServiceAccountKey(key);
  }
  if (options_.client_ca) {
    auto ca = options_.client_ca(key);
    if (!ca.ok()) return ca.status();
    secrets.client_ca_pem = *std::move(ca);
  }
  auto limits = LimitsOf(key);
  if (!limits.ok()) return limits.status();
  auto gate = Gate::Load(key, store_, std::move(secrets), *limits, clock_.Now());
  if (!gate.ok()) return gate.status();
  std::lock_guard lock(mu_);
  return gates_.emplace(key, *std::move(gate)).first->second;  // or the one another request read meanwhile
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
    gates_.erase(key);
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
  return base::Base64UrlEncode(base::HmacSha256(listener_ca_.private_key, "septa-syncer/" + key.ToString()));
}

// Derived as the syncer's token is: every replica signs and verifies the
// tokens of a virtual cluster alike, before and after restarts.
std::string SimulatedControlPlanes::ServiceAccountKey(const core::VirtualClusterKey& key) const {
  return base::HmacSha256(listener_ca_.private_key, "septa-service-accounts/" + key.ToString());
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
  if (auto it = gates_.find(key); it != gates_.end()) it->second->AllowTokenDigest(digest);
  return kubeconfig;
}

void SimulatedControlPlanes::Route(http::Request&& request, std::shared_ptr<http::Exchange> exchange) {
  // /vc/<tenant>/<vcluster>[/<the Kubernetes API path>][?query]
  const std::string target_text(request.target());
  std::string_view rest = target_text;
  kubesim::ApiError not_found;  // kube-apiserver's words for a path it does not serve
  not_found.code = 404;
  not_found.reason = "NotFound";
  not_found.message = "the server could not find the requested resource";
  if (rest.substr(0, kPrefix.size()) != kPrefix) return kubesim::ReplyError(*exchange, not_found);
  rest = rest.substr(kPrefix.size());
  const std::size_t tenant_end = rest.find('/');
  if (tenant_end == std::string_view::npos) return kubesim::ReplyError(*exchange, not_found);
  auto routed = std::make_shared<Routed>();
  routed->key.tenant = std::string(rest.substr(0, tenant_end));
  rest = rest.substr(tenant_end + 1);
  const std::size_t vcluster_end = rest.find_first_of("/?");
  routed->key.vcluster = std::string(rest.substr(0, vcluster_end));
  routed->api_path = vcluster_end == std::string_view::npos ? "/" : std::string(rest.substr(vcluster_end));
  if (routed->api_path.front() == '?') routed->api_path = "/" + routed->api_path;
  routed->request = std::move(request);
  routed->exchange = std::move(exchange);
  // Whether a virtual cluster exists is told to nobody who cannot
  // authenticate to it: a name that cannot exist, an absent cluster and a
  // missing or foreign credential all get the one 401 (finding L3).
  http::Exchange& ex = *routed->exchange;
  if (!ValidateKey(routed->key.tenant, routed->key.vcluster).ok() ||
      (routed->request[boost::beast::http::field::authorization].empty() && ex.connection().peer_chain.empty())) {
    return kubesim::ReplyError(ex, kubesim::UnauthorizedError());
  }
  if (GatePtr gate = FindGate(routed->key)) return Admit(gate, std::move(routed), false);
  // Not in use: its credentials are read on a worker, in a flow of their own.
  queue_->Submit(
      kUnidentifiedFlow,
      [this, routed] {
        auto gate = LoadedGate(routed->key);
        if (gate.ok()) return Admit(*gate, routed, true);
        if (IsNotFound(gate)) return kubesim::ReplyError(*routed->exchange, kubesim::UnauthorizedError());
        ReplyUnavailable(*routed->exchange, routed->key, "reading its credentials", gate.status());
      },
      [routed] { kubesim::ReplyError(*routed->exchange, TooManyRequests("")); });
}

void SimulatedControlPlanes::Admit(const GatePtr& gate, std::shared_ptr<Routed> routed, bool on_worker) {
  gate->Touch(clock_.Now());
  http::Exchange& ex = *routed->exchange;
  Caller caller = gate->Identify(routed->request, ex.connection(), clock_.Now());
  if (caller.kind == CallerKind::kUnknownToken && !on_worker) {
    // Maybe an admin token issued through another replica: its digests are
    // read again on a worker (at most once a second; else refused now).
    queue_->Submit(
        kUnidentifiedFlow,
        [this, gate, routed] {
          auto reread = gate->RereadTokens(store_);
          if (!reread.ok())
            return ReplyUnavailable(*routed->exchange, routed->key, "reading its tokens", reread.status());
          Admit(gate, routed, true);
        },
        [routed] { kubesim::ReplyError(*routed->exchange, TooManyRequests("")); });
    return;
  }
  if (caller.kind == CallerKind::kNone || caller.kind == CallerKind::kUnknownToken) {
    return kubesim::ReplyError(ex, kubesim::UnauthorizedError());
  }
  auto slots = std::make_shared<Slots>();
  slots->gate = gate;
  if (caller.counted()) {
    const tenancy::ApiLimits limits = gate->limits();
    if (!gate->TryAdmitRequest()) {
      return kubesim::ReplyError(
          ex, TooManyRequests("the virtual cluster has " + std::to_string(*limits.requests_in_flight) +
                              " requests in flight, its api_limits.requests_in_flight"));
    }
    slots->request = true;
    if (IsWatch(routed->request, routed->api_path)) {
      if (!gate->TryOpenWatch()) {
        slots->ReleaseRequest();
        return kubesim::ReplyError(ex, TooManyRequests("the virtual cluster has " + std::to_string(*limits.watches) +
                                                       " watches open, its api_limits.watches"));
      }
      slots->watch = true;
    }
  }
  routed->exchange = std::make_shared<AdmittedExchange>(std::move(routed->exchange), std::move(slots));
  queue_->Submit(
      routed->key.tenant, [this, gate, caller = std::move(caller), routed] { Serve(gate, caller, routed); },
      [routed] {
        kubesim::ReplyError(*routed->exchange,
                            TooManyRequests("the tenant's share of the virtual clusters' listener is taken"));
      });
}

void SimulatedControlPlanes::Serve(const GatePtr& gate, const Caller& caller, const std::shared_ptr<Routed>& routed) {
  const core::VirtualClusterKey& key = routed->key;
  http::Exchange& ex = *routed->exchange;
  if (caller.kind == CallerKind::kCertificate) {
    // Read on every request, so a revocation recorded through any replica
    // holds at once. Only recorded certificates authenticate: the CA key
    // signs nothing else for this listener, so an unrecorded serial means a
    // certificate made outside the credentials API.
    auto status = store_.GetCredentialStatus(key, caller.peer->serial);
    if (!status.ok()) return ReplyUnavailable(ex, key, "reading a credential's revocation", status.status());
    if (*status == core::CredentialStatus::kSuspended) return kubesim::ReplyError(ex, SuspendedError(key));
    if (*status != core::CredentialStatus::kActive) {
      spdlog::debug("virtual control plane {}/{}: client certificate {} ({}) is {}", key.tenant, key.vcluster,
                    caller.peer->serial, caller.peer->common_name,
                    *status == core::CredentialStatus::kRevoked ? "revoked" : "not issued through the credentials API");
      return kubesim::ReplyError(ex, kubesim::UnauthorizedError());
    }
  } else if (caller.kind == CallerKind::kServiceAccount) {
    // The tenant's own credential too: read on every request, as a
    // certificate's revocation is.
    auto suspended = store_.TenantSuspended(key.tenant);
    if (!suspended.ok()) return ReplyUnavailable(ex, key, "reading its tenant's state", suspended.status());
    if (*suspended) return kubesim::ReplyError(ex, SuspendedError(key));
  }
  auto plane = Loaded(key);
  if (plane.ok()) {
    if (Status fresh = (*plane)->Refresh(); !fresh.ok()) {
      if (IsNotFound(fresh)) {  // removed through another replica
        std::lock_guard lock(mu_);
        if (auto it = planes_.find(key); it != planes_.end() && it->second == *plane) planes_.erase(it);
        if (auto it = gates_.find(key); it != gates_.end() && it->second == gate) gates_.erase(it);
      }
      plane = fresh;
    }
  }
  if (!plane.ok()) {
    // Removed meanwhile: as for any cluster that does not exist.
    if (IsNotFound(plane)) return kubesim::ReplyError(ex, kubesim::UnauthorizedError());
    return ReplyUnavailable(ex, key, "loading it", plane.status());
  }
  (*plane)->SetLimits(gate->limits());
  routed->request.target(routed->api_path);
  (*plane)->Handle(std::move(routed->request), routed->exchange, caller);
}

// As the REST API answers a server fault (services/rest/problem.cc): a
// fixed message and a request id to the client (the Audit-Id header, as
// kube-apiserver names it), the detail only to the log (finding L4).
void SimulatedControlPlanes::ReplyUnavailable(http::Exchange& exchange, const core::VirtualClusterKey& key,
                                              std::string_view what, const Status& detail) {
  const std::string request_id = request_id_prefix_ + "-" + std::to_string(++request_ids_);
  spdlog::error("virtual control plane {}/{}: {}: {} (request_id={})", key.tenant, key.vcluster, what,
                detail.ToString(), request_id);
  http::Response response{boost::beast::http::status::service_unavailable, 11};
  response.set(boost::beast::http::field::content_type, "application/json");
  response.set(boost::beast::http::field::retry_after, std::to_string(kRetryAfterSeconds));
  response.set("Audit-Id", request_id);
  kubesim::ApiError e = kubesim::ServiceUnavailableError(
      "the virtual cluster cannot be served now; retry later (request id " + request_id + ")");
  e.retry_after_seconds = kRetryAfterSeconds;
  response.body() = e.ToJson().dump();
  exchange.Reply(std::move(response));
}

}  // namespace septa::vcp
