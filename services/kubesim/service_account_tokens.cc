#include "services/kubesim/service_account_tokens.h"

#include <nlohmann/json.hpp>

#include "common/documents.h"
#include "services/base/base64.h"
#include "services/base/mac.h"

namespace septa::kubesim {

using nlohmann::json;

namespace {

std::string HeaderSegment() { return base::Base64UrlEncode(R"({"alg":"HS256","typ":"JWT"})"); }

std::string Signature(std::string_view signed_part, std::string_view key) {
  return base::Base64UrlEncode(base::HmacSha256(key, signed_part));
}

const json* Object(const json& parent, const char* field) {
  auto it = parent.find(field);
  return it != parent.end() && it->is_object() ? &*it : nullptr;
}

std::optional<std::string> String(const json* parent, const char* field) {
  if (parent == nullptr) return std::nullopt;
  auto it = parent->find(field);
  if (it == parent->end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

}  // namespace

std::string SignServiceAccountToken(const ServiceAccountClaims& claims, std::string_view key) {
  json kubernetes = {{"namespace", claims.ns},
                     {"serviceaccount", {{"name", claims.service_account}, {"uid", claims.service_account_uid}}}};
  if (!claims.pod.empty()) kubernetes["pod"] = {{"name", claims.pod}, {"uid", claims.pod_uid}};
  const json payload = {{"aud", claims.audiences},
                        {"exp", claims.expires_at},
                        {"iat", claims.issued_at},
                        {"nbf", claims.issued_at},
                        {"iss", std::string(kApiAudience)},
                        {"jti", claims.id},
                        {"kubernetes.io", std::move(kubernetes)},
                        {"sub", "system:serviceaccount:" + claims.ns + ":" + claims.service_account}};
  std::string signed_part = HeaderSegment() + "." + base::Base64UrlEncode(payload.dump());
  std::string signature = Signature(signed_part, key);
  return signed_part + "." + signature;
}

std::optional<ServiceAccountClaims> VerifiedServiceAccountClaims(std::string_view token, std::string_view key) {
  if (key.empty()) return std::nullopt;
  const std::size_t first = token.find('.');
  const std::size_t last = token.rfind('.');
  if (first == std::string_view::npos || first == last) return std::nullopt;
  const std::string_view signed_part = token.substr(0, last);
  if (token.substr(0, first) != HeaderSegment()) return std::nullopt;
  if (!base::ConstantTimeEquals(token.substr(last + 1), Signature(signed_part, key))) return std::nullopt;
  auto payload_text = base::Base64UrlDecode(token.substr(first + 1, last - first - 1));
  if (!payload_text) return std::nullopt;
  auto parsed = ParseJson(*payload_text);
  if (!parsed.ok() || !parsed->is_object()) return std::nullopt;
  const json& payload = *parsed;
  const json* kubernetes = Object(payload, "kubernetes.io");
  const json* account = kubernetes ? Object(*kubernetes, "serviceaccount") : nullptr;
  const json* pod = kubernetes ? Object(*kubernetes, "pod") : nullptr;
  ServiceAccountClaims claims;
  auto ns = String(kubernetes, "namespace");
  auto name = String(account, "name");
  auto uid = String(account, "uid");
  auto id = String(&payload, "jti");
  if (!ns || !name || !uid || !id) return std::nullopt;
  claims.ns = *ns;
  claims.service_account = *name;
  claims.service_account_uid = *uid;
  claims.id = *id;
  if (pod) {
    auto pod_name = String(pod, "name");
    auto pod_uid = String(pod, "uid");
    if (!pod_name || !pod_uid) return std::nullopt;
    claims.pod = *pod_name;
    claims.pod_uid = *pod_uid;
  }
  auto aud = payload.find("aud");
  if (aud == payload.end() || !aud->is_array()) return std::nullopt;
  for (const json& audience : *aud) {
    if (!audience.is_string()) return std::nullopt;
    claims.audiences.push_back(audience.get<std::string>());
  }
  for (auto [field, out] : {std::pair{"iat", &claims.issued_at}, std::pair{"exp", &claims.expires_at}}) {
    auto it = payload.find(field);
    if (it == payload.end() || !it->is_number_integer()) return std::nullopt;
    *out = it->get<std::int64_t>();
  }
  return claims;
}

}  // namespace septa::kubesim
