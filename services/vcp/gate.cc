#include "services/vcp/gate.h"

#include <boost/beast/http/field.hpp>
#include <limits>

#include "services/base/mac.h"
#include "services/core/crypto.h"
#include "services/kubesim/service_account_tokens.h"

namespace septa::vcp {

namespace bhttp = boost::beast::http;

Gate::Gate(core::VirtualClusterKey key, http::ClientCertificateVerifier client_ca, Secrets secrets,
           tenancy::ApiLimits limits, TimePoint now)
    : key_(std::move(key)),
      client_ca_(std::move(client_ca)),
      secrets_(std::move(secrets)),
      limits_(limits),
      last_used_(now.time_since_epoch().count()) {}

Result<std::shared_ptr<Gate>> Gate::Load(const core::VirtualClusterKey& key, core::VirtualObjectStore& store,
                                         Secrets secrets, tenancy::ApiLimits limits, TimePoint now) {
  auto stored = store.GetControlPlane(key);
  if (!stored.ok()) return stored.status();
  if (!stored->has_value()) return NotFound("virtual control plane " + key.ToString() + " does not exist");
  auto tokens = store.TokenDigests(key);
  if (!tokens.ok()) return tokens.status();
  auto client_ca = http::ClientCertificateVerifier::Create(secrets.client_ca_pem.empty() ? (*stored)->ca_certificate
                                                                                         : secrets.client_ca_pem);
  if (!client_ca.ok()) {
    return Status(Code::kDataLoss, "virtual control plane " + key.ToString() +
                                       ": the client CA certificate cannot be read: " + client_ca.status().message());
  }
  std::shared_ptr<Gate> gate(new Gate(key, *std::move(client_ca), std::move(secrets), limits, now));
  gate->token_digests_.insert(tokens->begin(), tokens->end());
  return gate;
}

Caller Gate::Identify(const http::Request& request, const http::ConnectionInfo& connection, TimePoint now) const {
  constexpr std::string_view kBearer = "Bearer ";
  const auto header = request[bhttp::field::authorization];
  const std::string_view authorization(header.data(), header.size());
  Caller caller;
  if (authorization.size() > kBearer.size() && authorization.substr(0, kBearer.size()) == kBearer) {
    caller.token = std::string(authorization.substr(kBearer.size()));
    if (!secrets_.service_account_key.empty() &&
        kubesim::VerifiedServiceAccountClaims(caller.token, secrets_.service_account_key)) {
      caller.kind = CallerKind::kServiceAccount;
      return caller;
    }
    const std::string digest = core::Sha256Hex(caller.token);
    if (!secrets_.syncer_token_digest.empty() && base::ConstantTimeEquals(digest, secrets_.syncer_token_digest)) {
      caller.kind = CallerKind::kSyncer;
    } else {
      caller.kind = KnowsToken(digest) ? CallerKind::kAdmin : CallerKind::kUnknownToken;
    }
    return caller;
  }
  if (connection.peer_chain.empty()) return caller;
  auto peer = client_ca_.Verify(connection.peer_chain, now);
  if (peer.ok()) {
    caller.kind = CallerKind::kCertificate;
    caller.peer = *std::move(peer);
  }
  return caller;
}

Result<bool> Gate::RereadTokens(core::VirtualObjectStore& store) {
  {
    std::lock_guard lock(mu_);
    const auto now = std::chrono::steady_clock::now();
    if (now - last_reread_ < std::chrono::seconds(1)) return false;
    last_reread_ = now;
  }
  auto stored = store.TokenDigests(key_);
  if (!stored.ok()) return stored.status();
  std::lock_guard lock(mu_);
  token_digests_.insert(stored->begin(), stored->end());
  return true;
}

void Gate::AllowTokenDigest(const std::string& sha256_hex) {
  std::lock_guard lock(mu_);
  token_digests_.insert(sha256_hex);
}

bool Gate::KnowsToken(const std::string& digest) const {
  std::lock_guard lock(mu_);
  return token_digests_.contains(digest);
}

tenancy::ApiLimits Gate::limits() const {
  std::lock_guard lock(mu_);
  return limits_;
}

void Gate::SetLimits(const tenancy::ApiLimits& limits) {
  std::lock_guard lock(mu_);
  limits_ = limits;
}

bool Gate::TryTake(std::atomic<std::int64_t>& count, const std::optional<std::int64_t>& limit) {
  if (count.fetch_add(1) < limit.value_or(std::numeric_limits<std::int64_t>::max())) return true;
  --count;
  return false;
}

bool Gate::TryAdmitRequest() { return TryTake(in_flight_, limits().requests_in_flight); }
void Gate::ReleaseRequest() { --in_flight_; }
bool Gate::TryOpenWatch() { return TryTake(watches_, limits().watches); }
void Gate::CloseWatch() { --watches_; }

bool Gate::IdleSince(TimePoint since) const {
  return TimePoint(TimePoint::duration(last_used_.load())) <= since && in_flight_ == 0 && watches_ == 0;
}

}  // namespace septa::vcp
