// The identity providers of septad's oidc_issuers, as core's
// SubjectTokenVerifier sees them: a token's "iss" picks the provider; its
// keys come from OpenID Connect Discovery (<issuer>/.well-known/
// openid-configuration, whose "issuer" must be the configured one, then
// its jwks_uri) and are cached; the signature, then iss, aud, exp, nbf and
// iat are checked (jws.h, jwk.h, claims.h). People's ID tokens (core's
// PersonTokenVerifier) are verified alike, for the provider's sign-in
// clients' audiences, and name a person by its username and groups claims.
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
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "services/core/people.h"
#include "services/core/token_exchange.h"

namespace septa::oidc {

class KeySet;
struct Jws;

struct ProviderSettings {
  std::string issuer;    // exact "iss"
  std::string audience;  // required in "aud" of a token to exchange
  std::string ca_pem;    // the provider's TLS trust; empty: the system's
  // People's ID tokens: "aud" must hold one of these (Septa's sign-in
  // clients); none: the provider signs no people in.
  std::vector<std::string> people_audiences{};
  std::string username_claim = "sub";
  std::string groups_claim = "groups";
};

struct VerifierOptions {
  std::chrono::seconds keys_max_age{3600};
  std::chrono::seconds refetch_interval{10};
  std::chrono::milliseconds fetch_timeout{5000};  // per document (discovery, key set)
  std::chrono::seconds leeway{60};                // clock skew allowed on exp, nbf, iat
};

class OidcVerifier final : public core::SubjectTokenVerifier, public core::PersonTokenVerifier {
 public:
  // kInvalidArgument for a provider whose TLS settings do not load. Nothing
  // is fetched yet.
  static Result<std::unique_ptr<OidcVerifier>> Create(std::vector<ProviderSettings> providers, const Clock& clock,
                                                      VerifierOptions options = {});
  ~OidcVerifier() override;

  Result<core::VerifiedSubjectToken> Verify(std::string_view token) override;
  // A person's ID token: as Verify, "aud" one of the provider's
  // people_audiences instead, then its username and groups claims
  // (claims.h ExtractIdentity). No "nonce" is checked: it was at sign-in.
  Result<core::Person> VerifyPerson(std::string_view token) override;
  Result<core::Person> VerifySignIn(std::string_view token, std::string_view nonce) override;

 private:
  struct Provider;
  struct Verified;
  // The token's provider found by "iss", its signature checked with the
  // provider's keys.
  Result<Verified> VerifySigned(std::string_view token, TimePoint now);
  // VerifyPerson, with "nonce" checked when set.
  Result<core::Person> PersonOf(std::string_view token, const std::optional<std::string>& nonce);
  OidcVerifier(const Clock& clock, VerifierOptions options);  // in verifier.cc, where Provider is complete
  // The keys to verify `jws` of `provider` with, fetched first when due.
  Result<std::shared_ptr<const KeySet>> KeysFor(Provider& provider, const Jws& jws, TimePoint now);

  const Clock& clock_;
  const VerifierOptions options_;
  std::vector<std::unique_ptr<Provider>> providers_;
};

}  // namespace septa::oidc
