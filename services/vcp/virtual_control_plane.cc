#include "services/vcp/virtual_control_plane.h"

#include <spdlog/spdlog.h>

#include <limits>

#include "common/documents.h"
#include "services/kubesim/api_error.h"
#include "tenancy/host/control_plane_manifests.h"

namespace septa::vcp {

namespace {

// The role bindings every virtual cluster holds (host::
// VirtualClusterRoleBindings), created where missing at every load as
// SeedCluster's objects are. A tenant admin may edit or delete one inside
// the virtual cluster; the next load restores a deleted one.
Status SeedRoleBindings(kubesim::ApiServer& api) {
  for (nlohmann::json& binding : tenancy::host::VirtualClusterRoleBindings()) {
    const std::string name = binding["metadata"].value("name", "");
    auto created = api.CreateObject("rbac.authorization.k8s.io", "clusterrolebindings", std::move(binding));
    if (!created.ok() && created.error().code != 409) {
      return Unavailable("seeding the virtual cluster's role binding " + name + ": " + created.error().message);
    }
  }
  return Status::Ok();
}

// The exchange of a request whose client certificate this virtual cluster
// verified: kubesim, which takes ConnectionInfo::peer for a verified
// identity, sees it there; everything else is the listener's exchange.
class CertifiedExchange final : public http::Exchange {
 public:
  CertifiedExchange(std::shared_ptr<http::Exchange> inner, http::PeerIdentity peer)
      : inner_(std::move(inner)), connection_(inner_->connection()) {
    connection_.peer = std::move(peer);
  }
  const http::ConnectionInfo& connection() const override { return connection_; }
  void Reply(http::Response response) override { inner_->Reply(std::move(response)); }
  void StartStream(http::Response head) override { inner_->StartStream(std::move(head)); }
  using http::Exchange::WriteChunk;
  bool WriteChunk(std::vector<std::shared_ptr<const std::string>> parts) override {
    return inner_->WriteChunk(std::move(parts));
  }
  void EndStream() override { inner_->EndStream(); }
  void OnClose(std::function<void()> callback) override { inner_->OnClose(std::move(callback)); }
  bool closed() const override { return inner_->closed(); }

 private:
  std::shared_ptr<http::Exchange> inner_;
  http::ConnectionInfo connection_;
};

}  // namespace

// Writes every storage change through to the VirtualObjectStore before it
// is applied (Storage calls it under its write lock), as a compare-and-set
// from the stored version this copy is known to be at. The version moves
// with the commit under `mu_`, so a Refresh that read the stored version
// after a commit of this copy's never finds this copy behind it.
class VirtualControlPlane::Journal final : public kubesim::StorageJournal {
 public:
  Journal(core::VirtualClusterKey key, core::VirtualObjectStore& store, std::atomic<bool>& stale, std::uint64_t version)
      : key_(std::move(key)), store_(store), stale_(stale), version_(version) {}
  Status Record(const std::string& type_key, const std::string& ns, const std::string& name,
                std::uint64_t resource_version, const std::string* text) override {
    std::lock_guard lock(mu_);
    Status recorded = text == nullptr ? store_.DeleteObject(key_, type_key, ns, name, resource_version, version_)
                                      : store_.PutObject(key_, {type_key, ns, name, resource_version, *text}, version_);
    if (recorded.ok()) {
      version_ = resource_version;
    } else if (IsAborted(recorded)) {
      stale_ = true;  // another replica wrote: the client gets 409, its retry a refreshed copy
    }
    return recorded;
  }
  void Converged(std::uint64_t resource_version) override {
    std::lock_guard lock(mu_);
    version_ = resource_version;
  }
  std::uint64_t version() const {
    std::lock_guard lock(mu_);
    return version_;
  }

 private:
  core::VirtualClusterKey key_;
  core::VirtualObjectStore& store_;
  std::atomic<bool>& stale_;
  mutable std::mutex mu_;
  std::uint64_t version_;  // the stored version the copy is at
};

// The stored objects as the storage holds them, read with the document
// depth bound (common/documents.h), which every write keeps (Storage::
// Mutate); their size was bounded when they were written. An object stored
// before that bound held is not served, and the log says which: loading it
// would hand its tree to the recursive code the bound protects, and
// listing it would fail every client's list of that kind (the syncer's
// informers stopped at such an object). Its row stays until an object of
// that name replaces it or the cluster is deleted.
Result<std::vector<kubesim::Storage::JournaledObject>> Parsed(const core::VirtualClusterKey& key,
                                                              std::vector<core::VirtualObject> objects) {
  std::vector<kubesim::Storage::JournaledObject> out;
  out.reserve(objects.size());
  for (auto& object : objects) {
    auto parsed = ParseJson(object.body, {.max_bytes = std::numeric_limits<std::size_t>::max()});
    if (!parsed.ok() && !IsMalformedDocument(parsed.status())) {
      spdlog::warn("virtual control plane {}/{}: stored {} {}/{} is not served: {}", key.tenant, key.vcluster,
                   object.type_key, object.ns, object.name, parsed.status().message());
      continue;
    }
    if (!parsed.ok() || !parsed->is_object()) {
      return Status(Code::kDataLoss, "virtual control plane " + key.ToString() + ": stored " + object.type_key + " " +
                                         object.ns + "/" + object.name + " is not a JSON object");
    }
    out.push_back({std::move(object.type_key), std::move(object.ns), std::move(object.name), *std::move(parsed),
                   std::move(object.body)});
  }
  return out;
}

// The history a virtual cluster keeps for watches that resume: small, since
// an idle one should cost little; a client further behind relists (410).
constexpr std::size_t kHistoryLimit = 1000;

VirtualControlPlane::VirtualControlPlane(const core::VirtualClusterKey& key, core::VirtualObjectStore& store,
                                         const Clock& clock, RandomSource& random, std::uint64_t stored_version)
    : key_(key),
      store_(store),
      clock_(clock),
      journal_(std::make_unique<Journal>(key, store, stale_, stored_version)),
      cluster_(clock, random, kHistoryLimit),
      last_request_(clock.Now().time_since_epoch().count()) {}

VirtualControlPlane::~VirtualControlPlane() = default;

Result<std::unique_ptr<VirtualControlPlane>> VirtualControlPlane::Load(const core::VirtualClusterKey& key,
                                                                       core::VirtualObjectStore& store,
                                                                       const Clock& clock, RandomSource& random,
                                                                       std::string service_account_key) {
  auto stored = store.GetControlPlane(key);
  if (!stored.ok()) return stored.status();
  if (!stored->has_value()) return NotFound("virtual control plane " + key.ToString() + " does not exist");
  auto objects = store.LoadObjects(key);
  if (!objects.ok()) return objects.status();

  std::unique_ptr<VirtualControlPlane> plane(
      new VirtualControlPlane(key, store, clock, random, (*stored)->resource_version));
  if (service_account_key.empty()) {
    service_account_key.resize(32);
    SEPTA_RETURN_IF_ERROR(random.Fill(
        std::span(reinterpret_cast<std::uint8_t*>(service_account_key.data()), service_account_key.size())));
  }
  plane->cluster_.service_account_key = std::move(service_account_key);
  // Read at each TokenRequest, as revocations are at each request: a tier
  // change caps the next token.
  plane->cluster_.max_token_expiration_seconds = [&store, key] { return store.CredentialTtlMax(key); };
  kubesim::Storage& storage = plane->cluster_.storage;
  auto parsed = Parsed(key, *std::move(objects));
  if (!parsed.ok()) return parsed.status();
  for (auto& object : *parsed) {
    storage.Restore(object.type_key, object.ns, object.name, std::move(object.object), std::move(object.text));
  }
  storage.RestoreResourceVersion((*stored)->resource_version);
  storage.SetJournal(plane->journal_.get());
  plane->api_ = std::make_unique<kubesim::ApiServer>(plane->cluster_, kubesim::ApiServerOptions{});
  plane->api_->RestoreCustomResourceTypes();
  plane->workloads_ = std::make_unique<kubesim::WorkloadControllers>(plane->cluster_, *plane->api_);
  plane->own_watchers_ = storage.watcher_count();
  SEPTA_RETURN_IF_ERROR(kubesim::SeedCluster(*plane->api_));
  SEPTA_RETURN_IF_ERROR(SeedRoleBindings(*plane->api_));
  return plane;
}

void VirtualControlPlane::Handle(http::Request&& request, std::shared_ptr<http::Exchange> exchange,
                                 const Caller& caller) {
  Touch();
  switch (caller.kind) {
    case CallerKind::kServiceAccount: break;  // kubesim checks expiry and what the token is bound to
    case CallerKind::kAdmin:
    case CallerKind::kSyncer:
      // kubesim's authenticator then knows the token for this cluster only.
      cluster_.authenticator.AddToken(caller.token,
                                      {std::string(caller.kind == CallerKind::kAdmin ? kAdminUser : kSyncerUser),
                                       {std::string(kubesim::kAdminGroup)}});
      break;
    case CallerKind::kCertificate:
      exchange = std::make_shared<CertifiedExchange>(std::move(exchange), *caller.peer);
      break;
    case CallerKind::kNone:
    case CallerKind::kUnknownToken: return kubesim::ReplyError(*exchange, kubesim::UnauthorizedError());
  }
  api_->Handle(std::move(request), std::move(exchange));
}

void VirtualControlPlane::SetLimits(const tenancy::ApiLimits& limits) {
  {
    std::lock_guard lock(limits_mu_);
    if (limits_ == limits) return;  // as is: the storage's write lock is not taken for nothing
    limits_ = limits;
  }
  auto bound = [](const std::optional<std::int64_t>& limit) -> std::optional<std::uint64_t> {
    if (!limit) return std::nullopt;
    return static_cast<std::uint64_t>(std::max<std::int64_t>(0, *limit));
  };
  cluster_.storage.SetQuota(
      {.name = "api_limits", .objects = bound(limits.objects), .bytes = bound(limits.object_bytes)});
}

void VirtualControlPlane::Tick() {
  std::lock_guard lock(tick_mu_);
  api_->Tick();
  workloads_->Tick();
}

Status VirtualControlPlane::Refresh() {
  std::lock_guard lock(refresh_mu_);
  stale_ = false;  // before reading: a change told from now on is looked at again
  // Another replica's write makes this copy's next write-through fail; this
  // copy's own writes keep going meanwhile, and a snapshot that misses one
  // of them is not converged to (it would undo it and move the version back).
  constexpr int kAttempts = 5;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    const std::uint64_t unchanged_since = cluster_.storage.current_resource_version();
    auto stored = store_.ResourceVersion(key_);
    if (!stored.ok()) return stored.status();
    if (!stored->has_value()) return NotFound("virtual control plane " + key_.ToString() + " was removed");
    // At or past it: every write up to it is this copy's or was converged to.
    if (**stored <= journal_->version()) return Status::Ok();
    auto objects = store_.LoadObjects(key_);
    if (!objects.ok()) return objects.status();
    // The objects may have been read after later writes than the version
    // was: the copy is at least at the newest of them. A write the objects do
    // not show (a later delete) makes this copy's next write-through fail and
    // refresh again.
    std::uint64_t version = **stored;
    for (const auto& object : *objects) version = std::max(version, object.resource_version);
    auto parsed = Parsed(key_, *std::move(objects));
    if (!parsed.ok()) return parsed.status();
    if (cluster_.storage.Converge(*std::move(parsed), version, unchanged_since)) {
      api_->RestoreCustomResourceTypes();
      return Status::Ok();
    }
  }
  stale_ = true;  // this copy kept writing: the next tick tries again
  return Status::Ok();
}

bool VirtualControlPlane::IdleSince(TimePoint since) const {
  return TimePoint(TimePoint::duration(last_request_.load())) <= since &&
         cluster_.storage.watcher_count() <= own_watchers_;
}

std::size_t VirtualControlPlane::object_count() const {
  std::size_t n = 0;
  for (const auto& type : cluster_.registry.All())
    n += cluster_.storage.List(type->key(), "", nullptr, 0, "").items.size();
  return n;
}

}  // namespace septa::vcp
