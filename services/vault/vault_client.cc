#include "services/vault/vault_client.h"

#include <algorithm>
#include <array>
#include <limits>

#include "common/documents.h"
#include "services/base/file.h"
#include "services/kube/transport.h"

namespace septa::vault {
namespace {

using nlohmann::json;

// A reply of Vault's, bounded as any document from outside; its size is
// the transport's to bound.
constexpr DocumentLimits kReplyLimits{.max_bytes = std::numeric_limits<std::size_t>::max()};

std::string Trimmed(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.erase(s.begin());
  return s;
}

// Vault's errors joined: its own words, which never carry a token.
std::string ErrorsText(const json& body) {
  std::string out;
  if (body.is_object() && body.contains("errors") && body["errors"].is_array()) {
    for (const auto& e : body["errors"]) {
      if (!e.is_string()) continue;
      out += (out.empty() ? "" : "; ") + e.get<std::string>();
    }
  }
  return out;
}

std::string StringOr(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::vector<std::string> Strings(const json& j) {
  std::vector<std::string> out;
  if (j.is_array()) {
    for (const auto& v : j) {
      if (v.is_string()) out.push_back(v.get<std::string>());
    }
  }
  return out;
}

bool Retryable(int status) { return status == 429 || status == 502 || status == 503; }

}  // namespace

struct VaultClient::Raw {
  int status = 0;
  std::string body;
};

Result<std::unique_ptr<VaultClient>> VaultClient::Create(VaultClientOptions options, const Clock& clock,
                                                         RandomSource& random) {
  if (options.address.empty()) return InvalidField("vault.address", "is required");
  if (options.max_attempts < 1) return InvalidField("vault.max_attempts", "must be at least 1");
  kube::ClientConfig config;
  config.server = options.address;
  if (!options.ca_file.empty()) {
    auto ca = base::ReadFile(options.ca_file);
    if (!ca.ok()) return InvalidField("vault.ca_file", ca.status().message());
    config.ca_pem = *ca;
  }
  switch (options.auth) {
    case AuthMethod::kToken:
      if (options.token_file.empty()) return InvalidField("vault.token_file", "is required with token auth");
      break;
    case AuthMethod::kAppRole:
      if (options.role_id.empty()) return InvalidField("vault.role_id", "is required with AppRole auth");
      if (options.secret_id_file.empty()) return InvalidField("vault.secret_id_file", "is required with AppRole auth");
      break;
    case AuthMethod::kKubernetes:
      if (options.kubernetes_role.empty()) {
        return InvalidField("vault.kubernetes_role", "is required with Kubernetes auth");
      }
      break;
  }
  auto transport = kube::Transport::Create(config, options.timeout);
  if (!transport.ok()) return InvalidField("vault.address", transport.status().message());
  return std::unique_ptr<VaultClient>(new VaultClient(std::move(options), clock, random, std::move(*transport)));
}

VaultClient::VaultClient(VaultClientOptions options, const Clock& clock, RandomSource& random,
                         std::unique_ptr<kube::Transport> transport)
    : options_(std::move(options)), clock_(clock), random_(random), transport_(std::move(transport)) {}

VaultClient::~VaultClient() = default;

Result<VaultClient::Raw> VaultClient::SendWithRetries(const std::string& method, const std::string& path,
                                                      const std::string& body, const std::string& token) {
  std::string last_problem;
  for (int attempt = 0; attempt < options_.max_attempts; ++attempt) {
    if (attempt > 0) {
      std::chrono::milliseconds ceiling =
          std::min(options_.backoff_max, options_.backoff_base * (std::int64_t{1} << std::min(attempt - 1, 20)));
      std::array<std::uint8_t, 4> bytes{};
      std::uint32_t r = random_.Fill(bytes).ok() ? (std::uint32_t{bytes[0]} << 24 | std::uint32_t{bytes[1]} << 16 |
                                                    std::uint32_t{bytes[2]} << 8 | bytes[3])
                                                 : 0;
      auto half = ceiling / 2;
      auto delay = half + std::chrono::milliseconds(half.count() > 0 ? r % (half.count() + 1) : 0);
      clock_.SleepUntil(clock_.Now() + delay, std::stop_token());
    }
    kube::HttpRequest request(method, "/v1/" + path, body, body.empty() ? "" : "application/json");
    auto response = transport_->Send(request, token.empty() ? "" : "Bearer " + token, options_.timeout);
    if (!response.ok()) {
      last_problem = response.status().message();
      continue;
    }
    if (Retryable(response->status)) {
      auto parsed = ParseJson(response->body, kReplyLimits);
      std::string text = ErrorsText(parsed.ok() ? *parsed : json());
      last_problem = "HTTP " + std::to_string(response->status) + (text.empty() ? "" : " " + text);
      continue;
    }
    return Raw{response->status, std::move(response->body)};
  }
  return Unavailable("vault: " + method + " " + path + ": " + last_problem + " (gave up after " +
                     std::to_string(options_.max_attempts) + " attempts)");
}

namespace {

// The envelope of a reply, or the Status its error maps to.
Result<VaultResponse> Decode(const std::string& method, const std::string& path, int status, const std::string& body) {
  VaultResponse out;
  out.status = status;
  if (status == 204 || (body.empty() && status < 400)) return out;
  auto read = ParseJson(body, kReplyLimits);
  if (!read.ok() || !read->is_object()) {
    return Unavailable("vault: " + method + " " + path + ": malformed JSON in the response (HTTP " +
                       std::to_string(status) + ")" + (read.ok() ? "" : ": " + read.status().message()));
  }
  json parsed = *std::move(read);
  if (status >= 400) {
    std::string text = ErrorsText(parsed);
    std::string where = "vault: " + method + " " + path + ": ";
    switch (status) {
      case 400: return InvalidArgument(where + (text.empty() ? "bad request" : text));
      case 401:
      case 403: return PermissionDenied(where + (text.empty() ? "permission denied" : text));
      case 404: return NotFound(where + (text.empty() ? "not found" : text));
      case 405: return InvalidArgument(where + "unsupported operation");
      default: return Internal(where + "HTTP " + std::to_string(status) + (text.empty() ? "" : ": " + text));
    }
  }
  out.data = parsed.value("data", json(nullptr));
  out.auth = parsed.value("auth", json(nullptr));
  out.lease_id = StringOr(parsed, "lease_id");
  if (auto it = parsed.find("lease_duration"); it != parsed.end() && it->is_number_integer()) {
    out.lease_duration = it->get<std::int64_t>();
  }
  if (auto it = parsed.find("renewable"); it != parsed.end() && it->is_boolean()) out.renewable = it->get<bool>();
  out.warnings = Strings(parsed.value("warnings", json(nullptr)));
  return out;
}

}  // namespace

Result<VaultResponse> VaultClient::Call(const std::string& method, const std::string& path, const json* body,
                                        bool authenticated) {
  std::string token;
  if (authenticated) {
    SEPTA_RETURN_IF_ERROR(EnsureToken());
    token = CurrentToken();
  }
  std::string text = body != nullptr ? body->dump() : "";
  auto raw = SendWithRetries(method, path, text, token);
  if (!raw.ok()) return raw.status();
  if (raw->status == 403 && authenticated && options_.auth != AuthMethod::kToken) {
    // The token may have been revoked or expired early: log in once more.
    {
      std::lock_guard lock(token_mu_);
      token_.clear();
    }
    SEPTA_RETURN_IF_ERROR(EnsureToken());
    raw = SendWithRetries(method, path, text, CurrentToken());
    if (!raw.ok()) return raw.status();
  }
  return Decode(method, path, raw->status, raw->body);
}

std::string VaultClient::CurrentToken() {
  std::lock_guard lock(token_mu_);
  return token_;
}

void VaultClient::SetToken(std::string token, std::chrono::seconds ttl, bool renewable) {
  token_ = std::move(token);
  token_obtained_ = clock_.Now();
  token_ttl_ = ttl;
  token_renewable_ = renewable;
}

Status VaultClient::EnsureToken() {
  std::lock_guard lock(token_mu_);
  if (token_.empty()) return Login();
  if (token_ttl_.count() == 0) return Status::Ok();
  if (clock_.Now() < token_obtained_ + token_ttl_ * 2 / 3) return Status::Ok();
  if (token_renewable_ && Renew().ok()) return Status::Ok();
  return Login();
}

// With token_mu_ held.
Status VaultClient::Login() {
  token_.clear();
  std::string method_path;
  json body;
  switch (options_.auth) {
    case AuthMethod::kToken: {
      auto text = base::ReadFile(options_.token_file);
      if (!text.ok()) return Unauthenticated("vault: reading the token file: " + text.status().message());
      std::string token = Trimmed(*text);
      if (token.empty()) return Unauthenticated("vault: the token file " + options_.token_file + " is empty");
      auto raw = SendWithRetries("GET", "auth/token/lookup-self", "", token);
      if (!raw.ok()) return raw.status();
      auto looked = Decode("GET", "auth/token/lookup-self", raw->status, raw->body);
      if (!looked.ok())
        return Unauthenticated("vault: the token of " + options_.token_file +
                               " is not valid: " + looked.status().message());
      std::int64_t ttl = looked->data.is_object() ? looked->data.value("ttl", std::int64_t{0}) : 0;
      bool renewable = looked->data.is_object() && looked->data.value("renewable", false);
      SetToken(std::move(token), std::chrono::seconds(ttl), renewable);
      return Status::Ok();
    }
    case AuthMethod::kAppRole: {
      auto secret = base::ReadFile(options_.secret_id_file);
      if (!secret.ok()) return Unauthenticated("vault: reading the secret_id file: " + secret.status().message());
      method_path = "auth/" + options_.approle_mount + "/login";
      body = {{"role_id", options_.role_id}, {"secret_id", Trimmed(*secret)}};
      break;
    }
    case AuthMethod::kKubernetes: {
      auto jwt = base::ReadFile(options_.jwt_file);
      if (!jwt.ok()) return Unauthenticated("vault: reading the service account token: " + jwt.status().message());
      method_path = "auth/" + options_.kubernetes_mount + "/login";
      body = {{"role", options_.kubernetes_role}, {"jwt", Trimmed(*jwt)}};
      break;
    }
  }
  auto raw = SendWithRetries("POST", method_path, body.dump(), "");
  if (!raw.ok()) return raw.status();
  auto reply = Decode("POST", method_path, raw->status, raw->body);
  if (!reply.ok()) return Unauthenticated("vault: login failed: " + reply.status().message());
  if (!reply->auth.is_object() || StringOr(reply->auth, "client_token").empty()) {
    return Unavailable("vault: POST " + method_path + ": the reply has no auth.client_token");
  }
  SetToken(StringOr(reply->auth, "client_token"),
           std::chrono::seconds(reply->auth.value("lease_duration", std::int64_t{0})),
           reply->auth.value("renewable", false));
  return Status::Ok();
}

// With token_mu_ held.
Status VaultClient::Renew() {
  json body = {{"increment", token_ttl_.count()}};
  auto raw = SendWithRetries("POST", "auth/token/renew-self", body.dump(), token_);
  if (!raw.ok()) return raw.status();
  auto reply = Decode("POST", "auth/token/renew-self", raw->status, raw->body);
  if (!reply.ok()) return reply.status();
  if (!reply->auth.is_object()) return Unavailable("vault: POST auth/token/renew-self: the reply has no auth block");
  std::chrono::seconds ttl(reply->auth.value("lease_duration", std::int64_t{0}));
  // A renewal that no longer reaches far (the token's max TTL is near) counts as failed: log in again.
  if (ttl.count() <= 0 || ttl < token_ttl_ / 3) return FailedPrecondition("vault: the token reached its max TTL");
  token_obtained_ = clock_.Now();
  token_ttl_ = ttl;
  return Status::Ok();
}

Result<VaultResponse> VaultClient::Read(const std::string& path) { return Call("GET", path, nullptr, true); }
Result<VaultResponse> VaultClient::Write(const std::string& path, const json& body) {
  return Call("POST", path, &body, true);
}
Result<VaultResponse> VaultClient::List(const std::string& path) {
  return Call("GET", path + "?list=true", nullptr, true);  // Vault's GET form of LIST
}
Result<VaultResponse> VaultClient::Delete(const std::string& path) { return Call("DELETE", path, nullptr, true); }

namespace {

// Whether `path` is enabled in `table` with `type` (an error when it is
// enabled with another type).
Result<bool> EnabledAs(VaultClient& client, const std::string& table, const std::string& path,
                       const std::string& type) {
  auto listed = client.Read(table);
  if (!listed.ok()) return listed.status();
  const std::string key = path + "/";
  if (!listed->data.is_object() || !listed->data.contains(key)) return false;
  const std::string existing = StringOr(listed->data[key], "type");
  if (existing == type || (type == "kv-v2" && existing == "kv")) return true;
  return FailedPrecondition("vault: " + table + "/" + path + " is already a " + existing + " mount, not " + type);
}

Status EnableIdempotently(VaultClient& client, const std::string& table, const std::string& path,
                          const std::string& type, const json& body) {
  auto enabled = EnabledAs(client, table, path, type);
  if (!enabled.ok() || *enabled) return enabled.status();
  auto written = client.Write(table + "/" + path, body);
  if (written.ok() || written.status().code() != Code::kInvalidArgument) return written.status();
  // Vault's 400 "path is already in use": another writer (a second
  // reconcile, another replica) enabled it since the list. Its type decides.
  enabled = EnabledAs(client, table, path, type);
  if (!enabled.ok()) return enabled.status();
  return *enabled ? Status::Ok() : written.status();
}

}  // namespace

Status VaultClient::EnableSecretsEngine(const std::string& path, const std::string& type,
                                        std::chrono::seconds max_lease_ttl) {
  json body = {{"type", type}};
  if (type == "kv-v2") body = {{"type", "kv"}, {"options", {{"version", "2"}}}};
  if (max_lease_ttl.count() > 0) body["config"] = {{"max_lease_ttl", std::to_string(max_lease_ttl.count()) + "s"}};
  return EnableIdempotently(*this, "sys/mounts", path, type, body);
}

Status VaultClient::EnableAuthMethod(const std::string& path, const std::string& type) {
  return EnableIdempotently(*this, "sys/auth", path, type, json{{"type", type}});
}

Status VaultClient::WritePolicy(const std::string& name, const std::string& hcl) {
  auto r = Write("sys/policies/acl/" + name, json{{"policy", hcl}});
  return r.ok() ? Status::Ok() : r.status();
}

Result<std::string> VaultClient::ReadPolicy(const std::string& name) {
  auto read = Read("sys/policies/acl/" + name);
  if (IsNotFound(read)) return std::string();
  if (!read.ok()) return read.status();
  return read->data.is_object() ? read->data.value("policy", std::string()) : std::string();
}

Status VaultClient::WritePkiRole(const std::string& mount, const std::string& name, const PkiRole& role) {
  json body = {{"allowed_domains", role.allowed_domains},
               {"allow_any_name", role.allow_any_name},
               {"allow_subdomains", role.allow_subdomains},
               {"organization", role.organization},
               {"client_flag", role.client_flag},
               {"server_flag", role.server_flag},
               {"generate_lease", role.generate_lease},
               {"enforce_hostnames", role.enforce_hostnames},
               {"key_type", "ec"},
               {"key_bits", 256}};
  if (role.ttl.count() > 0) body["ttl"] = std::to_string(role.ttl.count()) + "s";
  if (role.max_ttl.count() > 0) body["max_ttl"] = std::to_string(role.max_ttl.count()) + "s";
  auto r = Write(mount + "/roles/" + name, body);
  return r.ok() ? Status::Ok() : r.status();
}

Result<std::string> VaultClient::GenerateRoot(const std::string& mount, const std::string& common_name,
                                              std::chrono::seconds ttl) {
  auto r = Write(mount + "/root/generate/internal",
                 json{{"common_name", common_name}, {"ttl", std::to_string(ttl.count()) + "s"}, {"key_type", "ec"}});
  if (!r.ok()) return r.status();
  std::string cert = r->data.is_object() ? StringOr(r->data, "certificate") : "";
  if (cert.empty()) return Unavailable("vault: " + mount + "/root/generate/internal: no certificate in the reply");
  return cert;
}

Result<std::string> VaultClient::GenerateIntermediate(const std::string& mount, const std::string& common_name) {
  auto r = Write(mount + "/intermediate/generate/internal", json{{"common_name", common_name}, {"key_type", "ec"}});
  if (!r.ok()) return r.status();
  std::string csr = r->data.is_object() ? StringOr(r->data, "csr") : "";
  if (csr.empty()) return Unavailable("vault: " + mount + "/intermediate/generate/internal: no csr in the reply");
  return csr;
}

Result<SignedCertificate> VaultClient::SignIntermediate(const std::string& root_mount, const std::string& csr,
                                                        const std::string& common_name, std::chrono::seconds ttl) {
  auto r = Write(root_mount + "/root/sign-intermediate",
                 json{{"csr", csr}, {"common_name", common_name}, {"ttl", std::to_string(ttl.count()) + "s"}});
  if (!r.ok()) return r.status();
  if (!r->data.is_object()) return Unavailable("vault: " + root_mount + "/root/sign-intermediate: no data");
  return SignedCertificate{StringOr(r->data, "certificate"), StringOr(r->data, "issuing_ca"),
                           StringOr(r->data, "serial_number"), Strings(r->data.value("ca_chain", json(nullptr)))};
}

Status VaultClient::SetSignedIntermediate(const std::string& mount, const std::string& certificate_bundle) {
  auto r = Write(mount + "/intermediate/set-signed", json{{"certificate", certificate_bundle}});
  return r.ok() ? Status::Ok() : r.status();
}

Result<std::string> VaultClient::ReadCaPem(const std::string& mount) {
  auto r = Read(mount + "/cert/ca_chain");
  if (!r.ok()) return r.status();
  std::string pem = r->data.is_object() ? StringOr(r->data, "certificate") : "";
  if (pem.empty()) return NotFound("vault: " + mount + " has no CA yet");
  return pem;
}

Result<IssuedCertificate> VaultClient::Issue(const std::string& mount, const std::string& role,
                                             const IssueRequest& request) {
  json body = {{"common_name", request.common_name}, {"format", "pem"}};
  if (!request.alt_names.empty()) body["alt_names"] = request.alt_names;
  if (!request.ip_sans.empty()) body["ip_sans"] = request.ip_sans;
  if (request.ttl.count() > 0) body["ttl"] = std::to_string(request.ttl.count()) + "s";
  if (request.exclude_cn_from_sans) body["exclude_cn_from_sans"] = true;
  std::string path = mount + "/issue/" + role;
  auto r = Write(path, body);
  if (!r.ok()) return r.status();
  if (!r->data.is_object()) return Unavailable("vault: POST " + path + ": no data in the reply");
  IssuedCertificate out;
  out.certificate = StringOr(r->data, "certificate");
  out.issuing_ca = StringOr(r->data, "issuing_ca");
  out.private_key = StringOr(r->data, "private_key");
  out.private_key_type = StringOr(r->data, "private_key_type");
  out.serial_number = StringOr(r->data, "serial_number");
  out.ca_chain = Strings(r->data.value("ca_chain", json(nullptr)));
  // `expiration` is a JSON number in Vault's code, a string in some of its documentation: accept both.
  const json expiration = r->data.value("expiration", json(nullptr));
  std::int64_t unix = 0;
  if (expiration.is_number_integer()) {
    unix = expiration.get<std::int64_t>();
  } else if (expiration.is_string()) {
    try {
      unix = std::stoll(expiration.get<std::string>());
    } catch (const std::exception&) {
      return Unavailable("vault: POST " + path + ": expiration is not a Unix time");
    }
  }
  out.expiration = TimePoint(std::chrono::seconds(unix));
  out.lease_id = r->lease_id;
  out.warnings = r->warnings;
  if (out.certificate.empty() || out.private_key.empty() || out.serial_number.empty()) {
    return Unavailable("vault: POST " + path + ": the reply lacks the certificate, key or serial number");
  }
  return out;
}

Result<TimePoint> VaultClient::Revoke(const std::string& mount, const std::string& serial_number) {
  auto r = Write(mount + "/revoke", json{{"serial_number", serial_number}});
  if (!r.ok()) return r.status();
  std::int64_t at = r->data.is_object() ? r->data.value("revocation_time", std::int64_t{0}) : 0;
  return TimePoint(std::chrono::seconds(at));
}

}  // namespace septa::vault
