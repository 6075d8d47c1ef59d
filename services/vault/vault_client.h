// Septa's Vault client: a thin REST layer over the kube transport (Beast,
// OpenSSL, pooled keep-alive connections). It authenticates with a token
// file, AppRole (role_id + secret_id file) or Kubernetes (service account
// JWT file + role), renews its own token at 2/3 of its TTL by the injected
// Clock and logs in again when renewal fails. 429, 502 and 503 (rate limit,
// standby, sealed) are retried with bounded, jittered backoff, then
// UNAVAILABLE; 403 is PERMISSION_DENIED, 400 INVALID_ARGUMENT with Vault's
// own text. Tokens and secret IDs never appear in a Status message.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"

namespace septa::kube {
class Transport;
}

namespace septa::vault {

enum class AuthMethod { kToken, kAppRole, kKubernetes };

struct VaultClientOptions {
  std::string address;  // "https://vault.example:8200"
  std::string ca_file;  // PEM; empty: the system trust store
  AuthMethod auth = AuthMethod::kToken;
  std::string token_file;  // kToken: re-read at every login
  std::string approle_mount = "approle";
  std::string role_id;
  std::string secret_id_file;
  std::string kubernetes_mount = "kubernetes";
  std::string kubernetes_role;
  std::string jwt_file = "/var/run/secrets/kubernetes.io/serviceaccount/token";
  // Retries of 429/502/503 and connection failures: attempts in all, and the
  // backoff before attempt n, drawn from [d/2, d] with d = min(max, base * 2^n).
  int max_attempts = 5;
  std::chrono::milliseconds backoff_base{200};
  std::chrono::milliseconds backoff_max{5'000};
  std::chrono::milliseconds timeout{10'000};  // per request
};

// Vault's response envelope.
struct VaultResponse {
  int status = 0;
  nlohmann::json data;  // null when the reply has none
  nlohmann::json auth;
  std::string lease_id;
  std::int64_t lease_duration = 0;
  bool renewable = false;
  std::vector<std::string> warnings;
};

struct PkiRole {
  std::vector<std::string> allowed_domains;
  bool allow_any_name = false;
  bool allow_subdomains = false;
  std::vector<std::string> organization;  // the O of every certificate (Kubernetes groups)
  std::chrono::seconds ttl{0};
  std::chrono::seconds max_ttl{0};
  bool client_flag = true;
  bool server_flag = false;
  bool generate_lease = false;
  // Vault's default: names must be hostnames (or e-mail addresses), even
  // with allow_any_name. Kubernetes user names ("acme:<token id>") are not.
  bool enforce_hostnames = true;
};

struct IssueRequest {
  std::string common_name;
  std::vector<std::string> alt_names;
  std::vector<std::string> ip_sans;
  std::chrono::seconds ttl{0};  // 0: the role's
  // Keep the common name out of the subject alternative names (Vault puts it
  // there by default): a client certificate needs none.
  bool exclude_cn_from_sans = false;
};

struct IssuedCertificate {
  std::string certificate, issuing_ca, private_key, private_key_type, serial_number;
  std::vector<std::string> ca_chain;
  TimePoint expiration;
  std::string lease_id;
  std::vector<std::string> warnings;  // e.g. the TTL was capped at the role's max_ttl
};

struct SignedCertificate {
  std::string certificate, issuing_ca, serial_number;
  std::vector<std::string> ca_chain;
};

class VaultClient {
 public:
  static Result<std::unique_ptr<VaultClient>> Create(VaultClientOptions options, const Clock& clock,
                                                     RandomSource& random);
  ~VaultClient();

  // Paths are relative to /v1/ ("pki/issue/web"). 204 gives an empty
  // response; a 404 from Read/List is NOT_FOUND.
  Result<VaultResponse> Read(const std::string& path);
  Result<VaultResponse> Write(const std::string& path, const nlohmann::json& body);
  Result<VaultResponse> List(const std::string& path);
  Result<VaultResponse> Delete(const std::string& path);

  // Idempotent configuration: an existing mount of the same type is left as
  // it is; one of another type is FAILED_PRECONDITION.
  Status EnableSecretsEngine(const std::string& path, const std::string& type,
                             std::chrono::seconds max_lease_ttl = std::chrono::seconds(0));
  Status EnableAuthMethod(const std::string& path, const std::string& type);
  Status WritePolicy(const std::string& name, const std::string& hcl);
  // The policy's HCL as stored; empty when there is none.
  Result<std::string> ReadPolicy(const std::string& name);
  Status WritePkiRole(const std::string& mount, const std::string& name, const PkiRole& role);

  // The root's certificate.
  Result<std::string> GenerateRoot(const std::string& mount, const std::string& common_name, std::chrono::seconds ttl);
  // The CSR of a new intermediate key kept in `mount`.
  Result<std::string> GenerateIntermediate(const std::string& mount, const std::string& common_name);
  Result<SignedCertificate> SignIntermediate(const std::string& root_mount, const std::string& csr,
                                             const std::string& common_name, std::chrono::seconds ttl);
  Status SetSignedIntermediate(const std::string& mount, const std::string& certificate_bundle);
  // The CA certificate of `mount`; NOT_FOUND when it has none yet.
  Result<std::string> ReadCaPem(const std::string& mount);

  Result<IssuedCertificate> Issue(const std::string& mount, const std::string& role, const IssueRequest& request);
  // The revocation time.
  Result<TimePoint> Revoke(const std::string& mount, const std::string& serial_number);

  // Logs in (or re-reads the token file) when there is no token, renews it
  // when 2/3 of its TTL have passed. Every request calls it first.
  Status EnsureToken();

 private:
  VaultClient(VaultClientOptions options, const Clock& clock, RandomSource& random,
              std::unique_ptr<kube::Transport> transport);
  struct Raw;
  Result<VaultResponse> Call(const std::string& method, const std::string& path, const nlohmann::json* body,
                             bool authenticated);
  Result<Raw> SendWithRetries(const std::string& method, const std::string& path, const std::string& body,
                              const std::string& token);
  Status Login();
  Status Renew();
  void SetToken(std::string token, std::chrono::seconds ttl, bool renewable);
  std::string CurrentToken();

  VaultClientOptions options_;
  const Clock& clock_;
  RandomSource& random_;
  std::unique_ptr<kube::Transport> transport_;
  std::mutex token_mu_;  // held around login and renewal, so one thread does them
  std::string token_;
  TimePoint token_obtained_;
  std::chrono::seconds token_ttl_{0};  // 0: never expires
  bool token_renewable_ = false;
};

}  // namespace septa::vault
