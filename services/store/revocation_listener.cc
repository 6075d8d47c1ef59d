#include "services/store/revocation_listener.h"

namespace septa::store {

namespace {

constexpr std::string_view kTokenPrefix = "token:", kPrincipalPrefix = "principal:";

}  // namespace

std::string RevocationPayload(const core::Revocation& r) {
  return r.token_id.empty() ? std::string(kPrincipalPrefix) + r.principal : std::string(kTokenPrefix) + r.token_id;
}

core::Revocation ParseRevocationPayload(std::string_view payload) {
  if (payload.starts_with(kTokenPrefix)) return {std::string(payload.substr(kTokenPrefix.size())), ""};
  if (payload.starts_with(kPrincipalPrefix)) return {"", std::string(payload.substr(kPrincipalPrefix.size()))};
  return {};
}

RevocationListener::RevocationListener(std::string database_url,
                                       std::function<void(const core::Revocation&)> on_revocation)
    : listener_(
          std::move(database_url), std::string(kRevocationChannel),
          [on_revocation](const std::string& payload) { on_revocation(ParseRevocationPayload(payload)); },
          // Whatever was revoked while nobody listened is unknown: caches start over.
          [on_revocation] { on_revocation(core::Revocation{}); }) {}

}  // namespace septa::store
