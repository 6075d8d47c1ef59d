#include "services/vcp/virtual_control_plane.h"

#include <boost/beast/http/field.hpp>

#include "services/core/crypto.h"
#include "services/kubesim/api_error.h"

namespace septa::vcp {

namespace bhttp = boost::beast::http;

// Writes every storage change through to the VirtualObjectStore before it
// is applied (Storage calls it under its write lock).
class VirtualControlPlane::Journal final : public kubesim::StorageJournal {
 public:
  Journal(core::VirtualClusterKey key, core::VirtualObjectStore& store) : key_(std::move(key)), store_(store) {}
  Status Record(const std::string& type_key, const std::string& ns, const std::string& name,
                std::uint64_t resource_version, const std::string* text) override {
    if (text == nullptr) return store_.DeleteObject(key_, type_key, ns, name, resource_version);
    return store_.PutObject(key_, {type_key, ns, name, resource_version, *text});
  }

 private:
  core::VirtualClusterKey key_;
  core::VirtualObjectStore& store_;
};

// The history a virtual cluster keeps for watches that resume: small, since
// an idle one should cost little; a client further behind relists (410).
constexpr std::size_t kHistoryLimit = 1000;

VirtualControlPlane::VirtualControlPlane(const core::VirtualClusterKey& key, core::VirtualObjectStore& store,
                                         const Clock& clock, RandomSource& random)
    : clock_(clock),
      journal_(std::make_unique<Journal>(key, store)),
      cluster_(clock, random, kHistoryLimit),
      last_request_(clock.Now().time_since_epoch().count()) {}

VirtualControlPlane::~VirtualControlPlane() = default;

Result<std::unique_ptr<VirtualControlPlane>> VirtualControlPlane::Load(const core::VirtualClusterKey& key,
                                                                       core::VirtualObjectStore& store,
                                                                       const Clock& clock, RandomSource& random) {
  auto stored = store.GetControlPlane(key);
  if (!stored.ok()) return stored.status();
  if (!stored->has_value())
    return NotFound("virtual control plane " + key.tenant + "/" + key.vcluster + " does not exist");
  auto objects = store.LoadObjects(key);
  if (!objects.ok()) return objects.status();
  auto tokens = store.TokenDigests(key);
  if (!tokens.ok()) return tokens.status();

  std::unique_ptr<VirtualControlPlane> plane(new VirtualControlPlane(key, store, clock, random));
  kubesim::Storage& storage = plane->cluster_.storage;
  for (auto& object : *objects) {
    auto parsed = nlohmann::json::parse(object.body, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_object()) {
      return Status(Code::kDataLoss, "virtual control plane " + key.tenant + "/" + key.vcluster + ": stored " +
                                         object.type_key + " " + object.ns + "/" + object.name +
                                         " is not a JSON object");
    }
    storage.Restore(object.type_key, object.ns, object.name, std::move(parsed), std::move(object.body));
  }
  storage.RestoreResourceVersion((*stored)->resource_version);
  storage.SetJournal(plane->journal_.get());
  plane->api_ = std::make_unique<kubesim::ApiServer>(plane->cluster_, kubesim::ApiServerOptions{});
  plane->api_->RestoreCustomResourceTypes();
  plane->own_watchers_ = storage.watcher_count();
  plane->workloads_ = std::make_unique<kubesim::WorkloadControllers>(plane->cluster_, *plane->api_);
  plane->token_digests_.insert(tokens->begin(), tokens->end());
  SEPTA_RETURN_IF_ERROR(kubesim::SeedCluster(*plane->api_));
  return plane;
}

void VirtualControlPlane::Handle(http::Request&& request, std::shared_ptr<http::Exchange> exchange) {
  Touch();
  constexpr std::string_view kBearer = "Bearer ";
  auto header = request[bhttp::field::authorization];
  std::string_view authorization(header.data(), header.size());
  bool known = false;
  if (authorization.size() > kBearer.size() && authorization.substr(0, kBearer.size()) == kBearer) {
    std::string token(authorization.substr(kBearer.size()));
    std::string digest = core::Sha256Hex(token);
    {
      std::lock_guard lock(tokens_mu_);
      known = token_digests_.contains(digest);
    }
    // kubesim's authenticator then knows the token for this cluster only.
    if (known)
      cluster_.authenticator.AddToken(std::move(token), {std::string(kAdminUser), {std::string(kubesim::kAdminGroup)}});
  }
  if (!known) {
    http::Response res{bhttp::status::unauthorized, 11};
    res.set(bhttp::field::content_type, "application/json");
    res.body() = kubesim::UnauthorizedError().ToJson().dump();
    exchange->Reply(std::move(res));
    return;
  }
  api_->Handle(std::move(request), std::move(exchange));
}

void VirtualControlPlane::Tick() {
  std::lock_guard lock(tick_mu_);
  api_->Tick();
  workloads_->Tick();
}

void VirtualControlPlane::AllowTokenDigest(const std::string& sha256_hex) {
  std::lock_guard lock(tokens_mu_);
  token_digests_.insert(sha256_hex);
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
