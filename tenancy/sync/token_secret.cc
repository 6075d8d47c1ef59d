#include "tenancy/sync/token_secret.h"

#include <charconv>
#include <string>

#include "tenancy/sync/bookkeeping.h"

namespace septa::tenancy::sync {

using nlohmann::json;

namespace {

std::string Audience(const json& virtual_pod) {
  const json spec = virtual_pod.value("spec", json::object());
  for (const json& volume : spec.value("volumes", json::array())) {
    for (const json& source : volume.value("projected", json::object()).value("sources", json::array())) {
      const std::string audience = source.value("serviceAccountToken", json::object()).value("audience", "");
      if (!audience.empty()) return audience;
    }
  }
  return "";
}

}  // namespace

std::string ServiceAccountOf(const json& virtual_pod) {
  const std::string name = StringField(virtual_pod, "spec", "serviceAccountName");
  return name.empty() ? "default" : name;
}

json TokenRequestFor(const json& virtual_pod, const TrustTier& tier) {
  const std::string audience = Audience(virtual_pod);
  return {{"apiVersion", "authentication.k8s.io/v1"},
          {"kind", "TokenRequest"},
          {"spec",
           {{"audiences", audience.empty() ? json::array() : json::array({audience})},
            {"expirationSeconds", TokenExpirationSeconds(RequestedTokenExpiration(virtual_pod), tier)},
            {"boundObjectRef",
             {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"name", StringField(virtual_pod, "metadata", "name")},
              {"uid", StringField(virtual_pod, "metadata", "uid")}}}}}};
}

std::int64_t TokenRefreshAfter(std::int64_t issued, std::int64_t expires) {
  return issued + (expires - issued) * 4 / 5;
}

json TokenSecretMetadata(const VirtualClusterView& vcluster, const json& virtual_pod, std::int64_t refresh_after) {
  const std::string uid = StringField(virtual_pod, "metadata", "uid");
  const std::string name = TokenSecretName(uid);
  return {{"name", name},
          {"namespace", vcluster.host_namespace},
          {"labels",
           {{std::string(kSyncedLabel), "true"},
            {std::string(kTenantLabel), vcluster.tenant},
            {std::string(kVclusterLabel), vcluster.vcluster}}},
          {"annotations",
           {{std::string(kVirtualKindAnnotation), std::string(kTokenSecretKind)},
            {std::string(kVirtualNameAnnotation), StringField(virtual_pod, "metadata", "name")},
            {std::string(kVirtualNamespaceAnnotation), StringField(virtual_pod, "metadata", "namespace")},
            {std::string(kVirtualUidAnnotation), uid},
            {std::string(kHostNameAnnotation), name},
            {std::string(kHostNamespaceAnnotation), vcluster.host_namespace},
            {std::string(kTokenRefreshAnnotation), std::to_string(refresh_after)}}}};
}

std::optional<std::int64_t> RecordedTokenRefresh(const json& host_secret) {
  const std::string text = MetadataMapString(host_secret, "annotations", kTokenRefreshAnnotation);
  std::int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace septa::tenancy::sync
