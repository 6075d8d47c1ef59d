// The tenant's service account token on the host: what the syncer asks the
// virtual API for (a TokenRequest bound to the virtual pod) and the
// bookkeeping of the host Secret TokenSecretName(uid) it writes the token
// into (pod_translation.h mounts it). ../shared/docs/SYNCER-FACTS.md
// "service account": Septa honours the requested expiration, capped by the tier.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "tenancy/sync/pod_translation.h"

namespace septa::tenancy::sync {

// A token secret's kVirtualKindAnnotation: the virtual object it is written
// for is the pod (ObjectCopier's copies say "ConfigMap" or "Secret").
inline constexpr std::string_view kTokenSecretKind = "Pod";
// When the token is due to be minted again: Unix seconds, at 80 % of its
// lifetime, as the kubelet refreshes projected tokens.
inline constexpr std::string_view kTokenRefreshAnnotation = "septa.dev/token-refresh-after";

// The TokenRequest for the virtual pod's service account: bound to the pod
// (name and UID), for the audience of its serviceAccountToken projection (the
// first that names one; else the API server's own), for
// TokenExpirationSeconds(RequestedTokenExpiration, tier).
nlohmann::json TokenRequestFor(const nlohmann::json& virtual_pod, const TrustTier& tier);

// The service account the pod runs as ("default" when it names none).
std::string ServiceAccountOf(const nlohmann::json& virtual_pod);

// When a token issued at `issued` that expires at `expires` (Unix seconds)
// is minted again: 80 % of the way.
std::int64_t TokenRefreshAfter(std::int64_t issued, std::int64_t expires);

// The metadata of the virtual pod's token secret in `vcluster`'s host
// namespace: the syncer's labels and the bookkeeping VirtualRefOf reads
// (kind kTokenSecretKind), and kTokenRefreshAnnotation. Nothing of the
// pod's own labels or annotations.
nlohmann::json TokenSecretMetadata(const VirtualClusterView& vcluster, const nlohmann::json& virtual_pod,
                                   std::int64_t refresh_after);

// A host secret's kTokenRefreshAnnotation; nullopt when absent or not a number.
std::optional<std::int64_t> RecordedTokenRefresh(const nlohmann::json& host_secret);

}  // namespace septa::tenancy::sync
