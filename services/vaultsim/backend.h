// vaultsim's Vault API without the HTTP: state (tokens, auth methods,
// mounts, policies, PKI, KV, leases) and one Handle() per request. All state
// is behind one mutex; every call is short (the slowest is a P-256 key).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/clock.h"
#include "services/http/tls.h"
#include "services/vaultsim/api.h"
#include "services/vaultsim/policy.h"

namespace septa::vaultsim {

// Vault's default max_lease_ttl, for tokens and mounts.
inline constexpr std::chrono::seconds kSystemMaxTtl{768 * 3600};

struct Token {
  std::string id, accessor, display_name;
  std::vector<std::string> policies;
  std::map<std::string, std::string> meta;
  TimePoint issued;
  std::chrono::seconds ttl{0};  // at issue or last renewal; 0: never expires
  std::chrono::seconds max_ttl{0};
  TimePoint expires;  // meaningful when ttl > 0
  bool renewable = true;
  std::string path;  // "auth/token/create", "auth/approle/login"
};

struct Mount {
  std::string type;  // "pki", "kv", "approle", "kubernetes", "token", ...
  std::string accessor, description;
  std::map<std::string, std::string> options;  // kv: version
  std::chrono::seconds max_lease_ttl{768 * 3600};
  std::chrono::seconds default_lease_ttl{768 * 3600};
};

struct AppRole {
  std::string role_id;
  std::vector<std::string> policies;
  std::chrono::seconds token_ttl{0}, token_max_ttl{0}, secret_id_ttl{0};
  struct SecretId {
    std::string accessor;
    TimePoint created;
    std::chrono::seconds ttl{0};
    int uses_left = 0;  // 0: unlimited
  };
  std::map<std::string, SecretId> secret_ids;
};

struct KubernetesRole {
  std::vector<std::string> service_account_names, service_account_namespaces, policies;
  std::chrono::seconds token_ttl{0};
  std::string audience;  // empty: any; else the JWT must carry it
};

struct AuthMethodState {
  std::map<std::string, AppRole> approles;
  std::map<std::string, KubernetesRole> kubernetes_roles;
  json kubernetes_config = nullptr;     // as read back: without token_reviewer_jwt
  std::string kubernetes_reviewer_jwt;  // empty: the login's own JWT reviews itself
};

// What Vault's Kubernetes auth asks the cluster at a login: a TokenReview of
// `jwt` for `audiences`, POSTed to `kubernetes_host` (trusting
// `kubernetes_ca_cert`; the system store when empty) with `bearer`, the
// configured token_reviewer_jwt or else the login's own JWT.
struct TokenReviewRequest {
  std::string kubernetes_host, kubernetes_ca_cert, bearer, jwt;
  std::vector<std::string> audiences;
};
// Whom the cluster says the JWT belongs to.
struct ReviewedServiceAccount {
  std::string ns, name, uid;
};
// PERMISSION_DENIED or UNAVAILABLE when the review does not authenticate the
// JWT (every failure is Vault's 403 "permission denied" to the client).
using TokenReviewer = std::function<Result<ReviewedServiceAccount>(const TokenReviewRequest&)>;

struct PkiRole {
  json settings;  // as Vault reads it back, defaults filled in
};

struct IssuedCertificate {
  std::string pem;
  TimePoint not_after;
  std::optional<TimePoint> revoked_at;
  bool is_ca = false;
};

struct PkiState {
  std::optional<http::KeyPairPem> ca;          // the issuing CA
  std::vector<std::string> ca_chain;           // issuing CA first, then its issuers
  std::optional<std::string> pending_key_pem;  // intermediate/generate, before set-signed
  std::map<std::string, PkiRole> roles;
  std::map<std::string, IssuedCertificate> certificates;  // by serial
};

struct KvSecret {
  struct Version {
    json data;
    TimePoint created;
  };
  std::vector<Version> versions;
};

struct Lease {
  std::string mount;  // the PKI mount, to revoke the certificate with it
  std::string serial;
  TimePoint issued, expires;
  bool renewable = false;
};

// Faults a test sets on the server.
struct Faults {
  bool sealed = false;
  bool standby = false;
  bool uninitialized = false;
  int rate_limit_next = 0;  // answer this many requests 429
  int malformed_next = 0;   // answer this many requests with a truncated JSON body
  std::chrono::milliseconds delay{0};
};

class Backend {
 public:
  Backend(const Clock& clock, RandomSource& random, std::string root_token);

  ApiReply Handle(const ApiRequest& request);

  // Test switches (also at POST /vaultsim/faults).
  Faults faults() const;
  void SetFaults(const Faults& faults);
  // Consumes one request's share of the delay fault: how long to hold it.
  std::chrono::milliseconds TakeDelay();
  const std::string& root_token() const { return root_token_; }
  // Kubernetes logins are checked with `reviewer` as Vault checks them;
  // without one, the JWT's claims are believed (docs/vaultsim.md). Set
  // before serving. The review runs with the state locked: vaultsim is a
  // test server and a review is one short request.
  void SetTokenReviewer(TokenReviewer reviewer) { token_reviewer_ = std::move(reviewer); }

 private:
  // Every handler runs with mu_ held.
  ApiReply Dispatch(const ApiRequest& request, const Token* token);
  std::optional<ApiReply> Authorize(const ApiRequest& request, const Token*& token);
  ApiReply Sys(const ApiRequest& request, const Token* token);
  ApiReply Health(const ApiRequest& request);
  ApiReply Mounts(const ApiRequest& request, bool auth);
  ApiReply Policies(const ApiRequest& request);
  ApiReply Leases(const ApiRequest& request);
  ApiReply FaultsApi(const ApiRequest& request);
  ApiReply TokenApi(const ApiRequest& request, const Token* token);
  ApiReply AppRoleApi(const ApiRequest& request, const std::string& mount, AuthMethodState& state);
  ApiReply KubernetesApi(const ApiRequest& request, const std::string& mount, AuthMethodState& state);
  ApiReply Pki(const ApiRequest& request, const std::string& mount, PkiState& pki);
  ApiReply PkiIssue(const ApiRequest& request, const std::string& mount, PkiState& pki, bool sign);
  ApiReply PkiRoot(const ApiRequest& request, PkiState& pki, const std::string& kind);
  ApiReply Kv(const ApiRequest& request, const std::string& mount);

  // Auth blocks and tokens.
  Token& NewToken(std::vector<std::string> policies, std::chrono::seconds ttl, std::string path);
  json AuthBlock(const Token& token) const;
  json TokenData(const Token& token) const;
  bool Expired(const Token& token) const;

  std::string RandomId();  // a UUID-shaped random string
  std::string RequestId() { return RandomId(); }
  ApiReply Ok(json data, std::vector<std::string> warnings = {});
  ApiReply BadRequest(const Status& status) { return Error(400, status.message()); }

  const Clock& clock_;
  RandomSource& random_;
  const std::string root_token_;
  mutable std::mutex mu_;
  Faults faults_;
  std::map<std::string, Token> tokens_;  // by id
  std::map<std::string, Mount> mounts_;  // secrets engines, by path without '/'
  std::map<std::string, Mount> auth_;    // auth methods, by path
  std::map<std::string, AuthMethodState> auth_state_;
  std::map<std::string, Policy> policies_;
  std::map<std::string, PkiState> pki_;
  std::map<std::string, std::map<std::string, KvSecret>> kv_;
  std::map<std::string, Lease> leases_;
  TokenReviewer token_reviewer_;
};

}  // namespace septa::vaultsim
