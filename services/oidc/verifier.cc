#include "services/oidc/verifier.h"

#include <spdlog/spdlog.h>

#include <map>
#include <mutex>

#include "common/documents.h"
#include "common/http_url.h"
#include "common/text.h"
#include "services/kube/transport.h"
#include "services/oidc/claims.h"
#include "services/oidc/jwk.h"
#include "services/oidc/jws.h"

namespace septa::oidc {

namespace {

// A discovery document or a key set is a few KiB; a provider that answers
// more is refused unread past this.
constexpr std::uint64_t kMaxDocumentBytes = 1 << 20;

// An http(s) URL as the transport takes it; plain http only for a loopback
// host (the configuration checks the issuer alike; a discovery document
// must not lead septad elsewhere in plain text).
Result<HttpUrl> SplitUrl(const std::string& url, std::string_view what) {
  std::optional<HttpUrl> parts = ParseHttpUrl(url);
  if (!parts) return InvalidArgument(std::string(what) + " is not an http(s) URL");
  if (parts->authority.empty()) return InvalidArgument(std::string(what) + " names no host");
  if (!parts->https && !IsLoopbackAuthority(parts->authority)) {
    return InvalidArgument(std::string(what) + " must be https (http only on a loopback host)");
  }
  return *std::move(parts);
}

std::map<std::string, std::string> StringClaims(const nlohmann::json& claims) {
  std::map<std::string, std::string> out;
  for (const auto& entry : claims.items()) {
    if (entry.value().is_string()) out.emplace(entry.key(), entry.value().get<std::string>());
  }
  return out;
}

}  // namespace

struct OidcVerifier::Provider {
  explicit Provider(ProviderSettings s) : settings(std::move(s)) {}

  // GET of `url` (one transport per origin, kept for its connections).
  Result<std::string> Get(const std::string& url, std::string_view what, std::chrono::milliseconds timeout) {
    SEPTA_ASSIGN_OR_RETURN(const HttpUrl parts, SplitUrl(url, what));
    kube::Transport* transport = nullptr;
    {
      std::lock_guard lock(transports_mu);
      auto& slot = transports[parts.origin];
      if (!slot) {
        kube::ClientConfig config;
        config.server = parts.origin;
        config.ca_pem = settings.ca_pem;
        SEPTA_ASSIGN_OR_RETURN(slot, kube::Transport::Create(config, timeout));
      }
      transport = slot.get();
    }
    kube::HttpRequest request("GET", parts.target);
    request.max_body_bytes = kMaxDocumentBytes;
    SEPTA_ASSIGN_OR_RETURN(const kube::HttpResponse response, transport->Send(request, "", timeout));
    if (response.status != 200) {
      return Unavailable(std::string(what) + " answered HTTP " + std::to_string(response.status));
    }
    return response.body;
  }

  // Discovery, then the key set it names.
  Result<std::shared_ptr<const KeySet>> FetchKeys(std::chrono::milliseconds timeout) {
    std::string base = settings.issuer;
    while (base.ends_with('/')) base.pop_back();
    SEPTA_ASSIGN_OR_RETURN(const std::string discovery_text,
                           Get(base + "/.well-known/openid-configuration", "the discovery document", timeout));
    auto discovery = ParseJson(discovery_text);
    if (!discovery.ok() || !discovery->is_object()) {
      return Unavailable("the discovery document is not a JSON object");
    }
    const auto issuer = discovery->find("issuer");
    // OpenID Connect Discovery §4.3: a document naming another issuer is
    // not this provider's.
    if (issuer == discovery->end() || !issuer->is_string() || issuer->get<std::string>() != settings.issuer) {
      return Unavailable("the discovery document names another issuer than " + QuotedExcerpt(settings.issuer));
    }
    const auto jwks_uri = discovery->find("jwks_uri");
    if (jwks_uri == discovery->end() || !jwks_uri->is_string()) {
      return Unavailable("the discovery document has no jwks_uri");
    }
    SEPTA_ASSIGN_OR_RETURN(const std::string jwks_text, Get(jwks_uri->get<std::string>(), "jwks_uri", timeout));
    auto keys = KeySet::Parse(jwks_text);
    if (!keys.ok()) return Unavailable("its key set: " + keys.status().message());
    return std::make_shared<const KeySet>(*std::move(keys));
  }

  const ProviderSettings settings;
  std::mutex transports_mu;
  std::map<std::string, std::unique_ptr<kube::Transport>> transports;
  std::mutex fetch_mu;  // one fetch at a time
  std::mutex mu;        // the cache below
  std::shared_ptr<const KeySet> keys;
  TimePoint fetched_at{};
  std::optional<TimePoint> last_attempt;
  std::string last_error;
};

Result<std::unique_ptr<OidcVerifier>> OidcVerifier::Create(std::vector<ProviderSettings> providers, const Clock& clock,
                                                           VerifierOptions options) {
  std::unique_ptr<OidcVerifier> verifier(new OidcVerifier(clock, options));
  for (ProviderSettings& settings : providers) {
    std::string base = settings.issuer;
    if (auto checked = SplitUrl(base, "issuer " + QuotedExcerpt(base)); !checked.ok()) return checked.status();
    verifier->providers_.push_back(std::make_unique<Provider>(std::move(settings)));
  }
  return verifier;
}

OidcVerifier::OidcVerifier(const Clock& clock, VerifierOptions options) : clock_(clock), options_(options) {}

OidcVerifier::~OidcVerifier() = default;

Result<std::shared_ptr<const KeySet>> OidcVerifier::KeysFor(Provider& provider, const Jws& jws, TimePoint now) {
  std::shared_ptr<const KeySet> keys;
  bool due = false;
  {
    std::lock_guard lock(provider.mu);
    keys = provider.keys;
    const bool stale = keys == nullptr || now - provider.fetched_at > options_.keys_max_age;
    const bool unknown_key = keys != nullptr && keys->Find(jws) == nullptr;
    due =
        (stale || unknown_key) && (!provider.last_attempt || now - *provider.last_attempt >= options_.refetch_interval);
  }
  if (due) {
    std::lock_guard fetching(provider.fetch_mu);
    bool still_due = false;
    {
      std::lock_guard lock(provider.mu);
      // Another thread may have fetched while this one waited.
      still_due = !provider.last_attempt || now - *provider.last_attempt >= options_.refetch_interval;
      if (still_due) provider.last_attempt = now;
    }
    if (still_due) {
      auto fetched = provider.FetchKeys(options_.fetch_timeout);
      std::lock_guard lock(provider.mu);
      if (fetched.ok()) {
        provider.keys = *std::move(fetched);
        provider.fetched_at = now;
        provider.last_error.clear();
      } else {
        provider.last_error = fetched.status().message();
        spdlog::warn("oidc: the keys of {} could not be fetched (the last ones stay in use): {}",
                     provider.settings.issuer, provider.last_error);
      }
    }
    std::lock_guard lock(provider.mu);
    keys = provider.keys;
  }
  if (keys == nullptr) {
    std::lock_guard lock(provider.mu);
    return Unavailable("the identity provider " + provider.settings.issuer +
                       " cannot be reached for its keys: " + provider.last_error);
  }
  return keys;
}

struct OidcVerifier::Verified {
  const Provider* provider = nullptr;
  Jws jws;
};

Result<OidcVerifier::Verified> OidcVerifier::VerifySigned(std::string_view token, TimePoint now) {
  SEPTA_ASSIGN_OR_RETURN(Jws jws, ParseJws(token));
  const auto iss = jws.claims.find("iss");
  if (iss == jws.claims.end() || !iss->is_string()) return Unauthenticated("the token has no \"iss\" claim");
  Provider* provider = nullptr;
  for (const auto& p : providers_) {
    if (p->settings.issuer == iss->get<std::string>()) provider = p.get();
  }
  if (provider == nullptr) {
    return Unauthenticated("the token's issuer " + QuotedExcerpt(iss->get<std::string>()) +
                           " is not one of oidc_issuers");
  }
  SEPTA_ASSIGN_OR_RETURN(const std::shared_ptr<const KeySet> keys, KeysFor(*provider, jws, now));
  const Jwk* key = keys->Find(jws);
  if (key == nullptr) {
    return Unauthenticated("no key of " + provider->settings.issuer + " has the token's key id " +
                           QuotedExcerpt(jws.key_id) + " for " + std::string(AlgorithmName(jws.algorithm)));
  }
  SEPTA_RETURN_IF_ERROR(VerifySignature(jws, *key));
  return Verified{provider, std::move(jws)};
}

Result<core::VerifiedSubjectToken> OidcVerifier::Verify(std::string_view token) {
  const TimePoint now = clock_.Now();
  SEPTA_ASSIGN_OR_RETURN(const Verified verified, VerifySigned(token, now));
  const ProviderSettings& settings = verified.provider->settings;
  SEPTA_RETURN_IF_ERROR(CheckClaims(verified.jws.claims, ClaimChecks{.issuer = settings.issuer,
                                                                     .audience = settings.audience,
                                                                     .now = now,
                                                                     .leeway = options_.leeway,
                                                                     .nonce = std::nullopt}));
  core::VerifiedSubjectToken subject;
  subject.issuer = settings.issuer;
  subject.claims = StringClaims(verified.jws.claims);
  if (auto sub = subject.claims.find("sub"); sub != subject.claims.end()) subject.subject = sub->second;
  subject.expire_time = ExpireTime(verified.jws.claims);
  return subject;
}

Result<core::Person> OidcVerifier::VerifyPerson(std::string_view token) { return PersonOf(token, std::nullopt); }

Result<core::Person> OidcVerifier::VerifySignIn(std::string_view token, std::string_view nonce) {
  return PersonOf(token, std::string(nonce));
}

Result<core::Person> OidcVerifier::PersonOf(std::string_view token, const std::optional<std::string>& nonce) {
  const TimePoint now = clock_.Now();
  SEPTA_ASSIGN_OR_RETURN(const Verified verified, VerifySigned(token, now));
  const ProviderSettings& settings = verified.provider->settings;
  if (settings.people_audiences.empty()) {
    return Unauthenticated("the issuer " + settings.issuer +
                           " signs no people in (its oidc_issuers entry has no client_id)");
  }
  // "aud" must name one of Septa's sign-in clients: a token the provider
  // issued to another application is not a sign-in to Septa.
  Status audience = Status::Ok();
  for (const std::string& client : settings.people_audiences) {
    audience = CheckClaims(
        verified.jws.claims,
        ClaimChecks{
            .issuer = settings.issuer, .audience = client, .now = now, .leeway = options_.leeway, .nonce = nonce});
    if (audience.ok()) break;
  }
  SEPTA_RETURN_IF_ERROR(audience);
  SEPTA_ASSIGN_OR_RETURN(Identity identity,
                         ExtractIdentity(verified.jws.claims, settings.username_claim, settings.groups_claim));
  return core::Person{.issuer = settings.issuer,
                      .user = std::move(identity.username),
                      .groups = std::move(identity.groups),
                      .expire_time = ExpireTime(verified.jws.claims)};
}

}  // namespace septa::oidc
