#include "services/vaultsim/backend.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace septa::vaultsim {
namespace {

constexpr char kVersion[] = "1.14.0+septa-vaultsim";
constexpr char kFaultsPath[] = "sys/vaultsim/faults";

// Paths Vault serves without a token.
bool Unauthenticated(const ApiRequest& r, const std::map<std::string, Mount>& mounts) {
  const auto& s = r.segments;
  if (r.path == "sys/health" || r.path == "sys/seal-status" || r.path == "sys/unseal") return true;
  if (s.size() == 3 && s[0] == "auth" && s[2] == "login" && s[1] != "token") return true;
  if (s.size() >= 2) {
    auto it = mounts.find(s[0]);
    if (it != mounts.end() && it->second.type == "pki" && r.op == Operation::kRead) {
      const std::string& what = s[1];
      if (what == "ca" || what == "ca_chain" || what == "crl" || what == "cert") return true;
    }
  }
  return false;
}

// The capability a request needs: Vault's mapping of HTTP verbs.
std::vector<std::string> NeededCapabilities(Operation op) {
  switch (op) {
    case Operation::kRead:
    case Operation::kHead: return {"read"};
    case Operation::kList: return {"list"};
    case Operation::kDelete: return {"delete"};
    case Operation::kWrite:
      return {"create", "update"};  // create for a new object, update for an existing one: either is accepted
  }
  return {};
}

}  // namespace

Backend::Backend(const Clock& clock, RandomSource& random, std::string root_token)
    : clock_(clock), random_(random), root_token_(std::move(root_token)) {
  Token root;
  root.id = root_token_;
  root.accessor = RandomId();
  root.display_name = "root";
  root.policies = {"root"};
  root.issued = clock_.Now();
  root.renewable = false;
  root.path = "auth/token/root";
  tokens_[root.id] = root;
  policies_["default"] = DefaultPolicy();
  for (const auto& [path, type] : {std::pair{"cubbyhole", "cubbyhole"}, {"identity", "identity"}, {"sys", "system"}}) {
    mounts_[path] = Mount{type, RandomId(), "", {}};
  }
  auth_["token"] = Mount{"token", RandomId(), "token based credentials", {}};
}

std::string Backend::RandomId() {
  std::array<std::uint8_t, 16> bytes{};
  if (!random_.Fill(bytes).ok()) return "00000000-0000-0000-0000-000000000000";
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += kHex[bytes[i] >> 4];
    out += kHex[bytes[i] & 15];
  }
  return out;
}

ApiReply Backend::Ok(json data, std::vector<std::string> warnings) {
  Envelope e;
  e.data = std::move(data);
  e.warnings = std::move(warnings);
  return Reply(e, RequestId());
}

Faults Backend::faults() const {
  std::lock_guard lock(mu_);
  return faults_;
}

void Backend::SetFaults(const Faults& faults) {
  std::lock_guard lock(mu_);
  faults_ = faults;
}

std::chrono::milliseconds Backend::TakeDelay() {
  std::lock_guard lock(mu_);
  return faults_.delay;
}

ApiReply Backend::Handle(const ApiRequest& request) {
  std::lock_guard lock(mu_);
  const bool faults_endpoint = request.path == kFaultsPath;
  const bool health = request.path == "sys/health" || request.path == "sys/seal-status";
  if (!faults_endpoint && !health) {
    if (faults_.uninitialized) return Error(503, "Vault is not initialized");
    if (faults_.sealed && request.path != "sys/unseal") return Error(503, "Vault is sealed");
    if (faults_.standby) return Error(503, "node is in standby mode");
    if (faults_.rate_limit_next > 0) {
      --faults_.rate_limit_next;
      return Error(429, "request path \"" + request.path + "\": rate limit quota exceeded");
    }
  }
  const Token* token = nullptr;
  if (auto denied = Authorize(request, token)) return *denied;
  ApiReply reply;
  try {
    reply = Dispatch(request, token);
  } catch (const json::exception& e) {
    // A field of the wrong JSON type: the client's mistake (nlohmann names the type, not the field).
    return Error(400, std::string("invalid request body for \"") + request.path + "\": " + e.what());
  }
  if (!faults_endpoint && faults_.malformed_next > 0 && reply.content_type == "application/json" &&
      !reply.body.empty()) {
    --faults_.malformed_next;
    reply.body = reply.body.substr(0, reply.body.size() / 2);
  }
  return reply;
}

bool Backend::Expired(const Token& token) const { return token.ttl.count() > 0 && clock_.Now() >= token.expires; }

std::optional<ApiReply> Backend::Authorize(const ApiRequest& request, const Token*& token) {
  if (!request.token.empty()) {
    auto it = tokens_.find(request.token);
    if (it != tokens_.end() && Expired(it->second)) {
      tokens_.erase(it);
      it = tokens_.end();
    }
    if (it != tokens_.end()) token = &it->second;
  }
  if (Unauthenticated(request, mounts_)) return std::nullopt;
  if (token == nullptr) return PermissionDenied();
  std::set<std::string> granted = Capabilities(policies_, token->policies, request.path);
  if (granted.contains("deny")) return PermissionDenied();
  for (const auto& needed : NeededCapabilities(request.op)) {
    if (granted.contains(needed)) return std::nullopt;
  }
  return PermissionDenied();
}

ApiReply Backend::Dispatch(const ApiRequest& request, const Token* token) {
  const auto& s = request.segments;
  if (s.empty()) return Error(404, "no handler for route \"\". route entry not found.");
  if (s[0] == "sys") return Sys(request, token);
  if (s[0] == "auth" && s.size() >= 2) {
    if (s[1] == "token") return TokenApi(request, token);
    auto it = auth_.find(s[1]);
    if (it != auth_.end() && it->second.type == "approle") return AppRoleApi(request, s[1], auth_state_[s[1]]);
    if (it != auth_.end() && it->second.type == "kubernetes") return KubernetesApi(request, s[1], auth_state_[s[1]]);
  }
  auto it = mounts_.find(s[0]);
  if (it != mounts_.end() && it->second.type == "pki") return Pki(request, s[0], pki_[s[0]]);
  if (it != mounts_.end() && it->second.type == "kv") return Kv(request, s[0]);
  return Error(404, "no handler for route \"" + request.path + "\". route entry not found.");
}

ApiReply Backend::Sys(const ApiRequest& request, const Token* token) {
  const auto& s = request.segments;
  const std::string& what = s.size() > 1 ? s[1] : std::string();
  if (request.path == "sys/health") return Health(request);
  if (request.path == kFaultsPath) return FaultsApi(request);
  if (request.path == "sys/seal-status" || (request.path == "sys/unseal" && request.op == Operation::kWrite)) {
    if (request.path == "sys/unseal") {
      if (request.body.value("reset", false)) {
        // nothing is kept between keys: the threshold is 1
      } else if (request.body.value("key", std::string()).empty()) {
        return Error(400, "'key' must be specified in request body as JSON, or 'reset' set to true");
      } else {
        faults_.sealed = false;
      }
    }
    return ApiReply{200, json{{"type", "shamir"},
                              {"initialized", !faults_.uninitialized},
                              {"sealed", faults_.sealed},
                              {"t", 1},
                              {"n", 1},
                              {"progress", 0},
                              {"nonce", ""},
                              {"version", kVersion},
                              {"migration", false},
                              {"recovery_seal", false},
                              {"storage_type", "inmem"}}
                             .dump()};
  }
  if (request.path == "sys/seal" && request.op == Operation::kWrite) {
    faults_.sealed = true;
    return NoContent();
  }
  if (what == "mounts") return Mounts(request, false);
  if (what == "auth") return Mounts(request, true);
  if (what == "policy" || what == "policies") return Policies(request);
  if (what == "leases") return Leases(request);
  (void)token;
  return Error(404, "no handler for route \"" + request.path + "\". route entry not found.");
}

ApiReply Backend::Health(const ApiRequest& request) {
  auto code = [&](const char* param, int fallback) {
    auto it = request.query.find(param);
    if (it == request.query.end()) return fallback;
    try {
      return std::stoi(it->second);
    } catch (const std::exception&) {
      return fallback;
    }
  };
  int status = code("activecode", 200);
  if (faults_.uninitialized) {
    status = code("uninitcode", 501);
  } else if (faults_.sealed) {
    status = code("sealedcode", 503);
  } else if (faults_.standby) {
    auto ok = request.query.find("standbyok");
    bool standby_ok =
        ok != request.query.end() && (ok->second == "true" || ok->second == "True" || ok->second == "TRUE" ||
                                      ok->second == "t" || ok->second == "1");  // Go's ParseBool
    status = standby_ok ? code("activecode", 200) : code("standbycode", 429);
  }
  std::int64_t now = std::chrono::duration_cast<std::chrono::seconds>(clock_.Now().time_since_epoch()).count();
  json body = {{"initialized", !faults_.uninitialized},
               {"sealed", faults_.sealed},
               {"standby", faults_.standby},
               {"performance_standby", false},
               {"replication_performance_mode", "disabled"},
               {"replication_dr_mode", "disabled"},
               {"server_time_utc", now},
               {"version", kVersion},
               {"cluster_name", "septa-vaultsim"}};
  return ApiReply{status, request.op == Operation::kHead ? "" : body.dump()};
}

ApiReply Backend::FaultsApi(const ApiRequest& request) {
  if (request.op == Operation::kWrite) {
    const json& b = request.body;
    faults_.sealed = b.value("sealed", faults_.sealed);
    faults_.standby = b.value("standby", faults_.standby);
    faults_.uninitialized = b.value("uninitialized", faults_.uninitialized);
    faults_.rate_limit_next = b.value("rate_limit_next", faults_.rate_limit_next);
    faults_.malformed_next = b.value("malformed_next", faults_.malformed_next);
    faults_.delay = std::chrono::milliseconds(b.value("delay_ms", static_cast<std::int64_t>(faults_.delay.count())));
  } else if (request.op != Operation::kRead) {
    return Error(405, "unsupported operation");
  }
  return Ok(json{{"sealed", faults_.sealed},
                 {"standby", faults_.standby},
                 {"uninitialized", faults_.uninitialized},
                 {"rate_limit_next", faults_.rate_limit_next},
                 {"malformed_next", faults_.malformed_next},
                 {"delay_ms", faults_.delay.count()}});
}

}  // namespace septa::vaultsim
