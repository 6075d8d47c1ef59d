// The identity providers of septad's oidc_issuers, as core's
// SubjectTokenVerifier sees them: a token's "iss" picks the provider; its
// keys come from OpenID Connect Discovery (<issuer>/.well-known/
// openid-configuration, whose "issuer" must be the configured one, then
// its jwks_uri) and are cached; the signature, then iss, aud, exp, nbf and
// iat are checked (jws.h, jwk.h, claims.h).
//
// Keys are fetched when first needed, again after keys_max_age, and at
// once when a token names a key id the cache lacks (a rotation), but at
// most once per refetch_interval per provider, so that tokens with made-up
// key ids cannot make septad hammer the provider. A provider that cannot be
// reached leaves its last keys in use (tokens it signed before keep
// verifying while they are valid); with no keys at all its tokens are
// UNAVAILABLE, not refused.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "services/core/token_exchange.h"

namespace septa::oidc {

class KeySet;
struct Jws;

struct ProviderSettings {
  std::string issuer;    // exact "iss"
  std::string audience;  // required in "aud"
  std::string ca_pem;    // the provider's TLS trust; empty: the system's
};

struct VerifierOptions {
  std::chrono::seconds keys_max_age{3600};
  std::chrono::seconds refetch_interval{10};
  std::chrono::milliseconds fetch_timeout{5000};  // per document (discovery, key set)
  std::chrono::seconds leeway{60};                // clock skew allowed on exp, nbf, iat
};

class OidcVerifier final : public core::SubjectTokenVerifier {
 public:
  // kInvalidArgument for a provider whose TLS settings do not load. Nothing
  // is fetched yet.
  static Result<std::unique_ptr<OidcVerifier>> Create(std::vector<ProviderSettings> providers, const Clock& clock,
                                                      VerifierOptions options = {});
  ~OidcVerifier() override;

  Result<core::VerifiedSubjectToken> Verify(std::string_view token) override;

 private:
  struct Provider;
  OidcVerifier(const Clock& clock, VerifierOptions options);  // in verifier.cc, where Provider is complete
  // The keys to verify `jws` of `provider` with, fetched first when due.
  Result<std::shared_ptr<const KeySet>> KeysFor(Provider& provider, const Jws& jws, TimePoint now);

  const Clock& clock_;
  const VerifierOptions options_;
  std::vector<std::unique_ptr<Provider>> providers_;
};

}  // namespace septa::oidc
