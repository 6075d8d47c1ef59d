// Service account tokens as kube-apiserver mints them through the
// TokenRequest API (POST /api/v1/namespaces/<ns>/serviceaccounts/<name>/token,
// served by ApiServer) and accepts them as bearer tokens: JWTs with
// Kubernetes' claims (iss, sub "system:serviceaccount:<ns>:<name>", aud,
// exp, iat, nbf, jti, and "kubernetes.io": namespace, service account and
// the pod the token is bound to), valid while they have not expired and the
// service account and bound pod with the recorded UIDs exist.
//
// Signed HS256 under the cluster's service_account_key. kube-apiserver signs
// RS256 or ES256 with a key pair and publishes the public key (OIDC
// discovery) so that others verify without asking it; kubesim serves no
// discovery, only it verifies, and a symmetric key is all that needs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace septa::kubesim {

// The audience and issuer of the tokens the API server accepts itself.
inline constexpr std::string_view kApiAudience = "https://kubernetes.default.svc";

struct ServiceAccountClaims {
  std::string ns;
  std::string service_account, service_account_uid;
  std::string pod, pod_uid;  // empty: not bound to a pod
  std::string id;            // jti
  std::vector<std::string> audiences;
  std::int64_t issued_at = 0, expires_at = 0;  // Unix seconds
};

std::string SignServiceAccountToken(const ServiceAccountClaims& claims, std::string_view key);

// The claims of a token signed under `key` (HS256, with every claim
// SignServiceAccountToken writes); nullopt for anything else. Expiry and
// the objects it names are the caller's to check.
std::optional<ServiceAccountClaims> VerifiedServiceAccountClaims(std::string_view token, std::string_view key);

}  // namespace septa::kubesim
