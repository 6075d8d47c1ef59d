// sys/mounts, sys/auth, sys/policy(ies) and sys/leases.
#include <algorithm>
#include <cctype>

#include "services/vaultsim/backend.h"

namespace septa::vaultsim {
namespace {

bool ValidPolicyName(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '-' ||
           c == '_' || c == '.';
  });
}

json MountJson(const Mount& m) {
  json options = json::object();
  for (const auto& [k, v] : m.options) options[k] = v;
  return json{{"type", m.type},
              {"description", m.description},
              {"accessor", m.accessor},
              {"uuid", m.accessor},
              {"config",
               {{"default_lease_ttl", m.default_lease_ttl.count()},
                {"max_lease_ttl", m.max_lease_ttl.count()},
                {"force_no_cache", false}}},
              {"options", options.empty() ? json(nullptr) : options},
              {"local", false},
              {"seal_wrap", false},
              {"external_entropy_access", false}};
}

}  // namespace

ApiReply Backend::Mounts(const ApiRequest& request, bool auth) {
  auto& table = auth ? auth_ : mounts_;
  const auto& s = request.segments;
  if (s.size() == 2) {
    if (request.op != Operation::kRead) return Error(405, "unsupported operation");
    json data = json::object();
    for (const auto& [path, m] : table) data[path + "/"] = MountJson(m);
    json body = data;  // Vault repeats the table at the top level for old clients
    Envelope e;
    e.data = data;
    json reply = json::parse(Reply(e, RequestId()).body);
    body.update(reply);
    return ApiReply{200, body.dump()};
  }
  if (s.size() > 3 && !(s.size() == 4 && s[3] == "tune")) {
    return Error(400, "septa-vaultsim mounts only single-segment paths, not \"" + request.path.substr(11) + "\"");
  }
  const std::string& path = s[2];
  auto it = table.find(path);
  if (s.size() == 4) {  // tune
    if (it == table.end()) return Error(400, "cannot fetch sysview for path \"" + path + "/\"");
    if (request.op == Operation::kWrite) {
      auto max = DurationField(request.body, "max_lease_ttl", it->second.max_lease_ttl);
      auto def = DurationField(request.body, "default_lease_ttl", it->second.default_lease_ttl);
      if (!max.ok()) return BadRequest(max.status());
      if (!def.ok()) return BadRequest(def.status());
      it->second.max_lease_ttl = *max;
      it->second.default_lease_ttl = *def;
      return NoContent();
    }
    return Ok(json{{"default_lease_ttl", it->second.default_lease_ttl.count()},
                   {"max_lease_ttl", it->second.max_lease_ttl.count()},
                   {"force_no_cache", false}});
  }
  if (request.op == Operation::kRead) {
    if (it == table.end()) return Error(400, "No secret engine mount at " + path + "/");
    return Ok(MountJson(it->second));
  }
  if (request.op == Operation::kDelete) {
    if (path == "token" || path == "sys" || path == "cubbyhole" || path == "identity") {
      return Error(400, "cannot unmount \"" + path + "/\"");
    }
    table.erase(path);
    if (auth) {
      auth_state_.erase(path);
      // Vault logs out everyone the method logged in.
      const std::string logins = "auth/" + path + "/";
      std::erase_if(tokens_, [&](const auto& entry) { return entry.second.path.rfind(logins, 0) == 0; });
    } else {
      pki_.erase(path);
      kv_.erase(path);
      std::erase_if(leases_, [&](const auto& entry) { return entry.second.mount == path; });
    }
    return NoContent();
  }
  if (request.op != Operation::kWrite) return Error(405, "unsupported operation");
  if (it != table.end()) return Error(400, "path is already in use at " + path + "/");
  Mount m;
  m.type = request.body.value("type", std::string());
  m.description = request.body.value("description", std::string());
  m.accessor = (auth ? "auth_" : "") + m.type + "_" + RandomId().substr(0, 8);
  if (request.body.contains("options") && request.body["options"].is_object()) {
    for (const auto& [k, v] : request.body["options"].items())
      m.options[k] = v.is_string() ? v.get<std::string>() : v.dump();
  }
  if (m.type == "kv-v2") {
    m.type = "kv";
    m.options["version"] = "2";
  }
  const std::set<std::string> supported =
      auth ? std::set<std::string>{"approle", "kubernetes"} : std::set<std::string>{"pki", "kv"};
  if (!supported.contains(m.type)) {
    return Error(400, std::string(auth ? "unknown auth method" : "unknown secrets engine") + " type: " + m.type +
                          " (septa-vaultsim implements " + (auth ? "approle, kubernetes" : "pki, kv version 2") + ")");
  }
  if (m.type == "kv" && m.options["version"] != "2") {
    return Error(400, "septa-vaultsim implements kv version 2 only: set options.version to \"2\"");
  }
  if (request.body.contains("config") && request.body["config"].is_object()) {
    auto max = DurationField(request.body["config"], "max_lease_ttl", m.max_lease_ttl);
    auto def = DurationField(request.body["config"], "default_lease_ttl", m.default_lease_ttl);
    if (!max.ok()) return BadRequest(max.status());
    if (!def.ok()) return BadRequest(def.status());
    m.max_lease_ttl = *max;
    m.default_lease_ttl = *def;
  }
  table[path] = m;
  return NoContent();
}

ApiReply Backend::Policies(const ApiRequest& request) {
  const auto& s = request.segments;
  // sys/policy[/<name>] (the old API hvac 0.11 uses) or sys/policies/acl[/<name>].
  bool legacy = s[1] == "policy";
  if (!legacy && (s.size() < 3 || s[2] != "acl")) return Error(404, "no handler for route \"" + request.path + "\"");
  std::size_t name_at = legacy ? 2 : 3;
  if (s.size() == name_at) {
    if (request.op != Operation::kList && !(legacy && request.op == Operation::kRead)) {
      return Error(405, "unsupported operation");
    }
    json keys = json::array();
    for (const auto& [name, p] : policies_) keys.push_back(name);
    keys.push_back("root");
    if (legacy) {
      Envelope e;
      e.data = {{"keys", keys}, {"policies", keys}};
      json body = json::parse(Reply(e, RequestId()).body);
      body["policies"] = keys;
      body["keys"] = keys;
      return ApiReply{200, body.dump()};
    }
    return Ok(json{{"keys", keys}});
  }
  if (s.size() != name_at + 1) return Error(404, "no handler for route \"" + request.path + "\"");
  std::string name = s[name_at];
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  if (name == "root") {
    return request.op == Operation::kRead ? Ok(json{{"name", "root"}, {"policy", ""}, {"rules", ""}})
                                          : Error(400, "cannot update \"root\" policy");
  }
  auto it = policies_.find(name);
  switch (request.op) {
    case Operation::kRead:
      if (it == policies_.end()) return Error(404, "");
      return Ok(json{{"name", name}, {legacy ? "rules" : "policy", it->second.text}});
    case Operation::kDelete:
      if (name == "default") return Error(400, "cannot delete \"default\" policy");
      policies_.erase(name);
      return NoContent();
    case Operation::kWrite: {
      if (!ValidPolicyName(name)) return Error(400, "policy name \"" + name + "\" is not valid");
      std::string text = request.body.value("policy", request.body.value("rules", std::string()));
      if (text.empty()) return Error(400, "'policy' parameter not supplied or empty");
      auto parsed = ParsePolicy(name, text);
      if (!parsed.ok()) return BadRequest(parsed.status());
      policies_[name] = std::move(*parsed);
      return NoContent();
    }
    default: return Error(405, "unsupported operation");
  }
}

ApiReply Backend::Leases(const ApiRequest& request) {
  const auto& s = request.segments;
  if (s.size() != 3 || request.op != Operation::kWrite) return Error(405, "unsupported operation");
  std::string id = request.body.value("lease_id", std::string());
  if (id.empty()) return Error(400, "lease_id must be specified");
  auto it = leases_.find(id);
  if (it == leases_.end()) return Error(400, "invalid lease");
  const Lease& lease = it->second;
  TimePoint now = clock_.Now();
  if (s[2] == "lookup") {
    auto ttl = std::max<std::int64_t>(0, UnixSeconds(lease.expires) - UnixSeconds(now));
    return Ok(json{{"id", id},
                   {"issue_time", FormatRfc3339(lease.issued)},
                   {"expire_time", FormatRfc3339(lease.expires)},
                   {"last_renewal", nullptr},
                   {"renewable", lease.renewable},
                   {"ttl", ttl}});
  }
  if (s[2] == "renew") {
    // PKI certificates' leases (the only leases here) are not renewable in Vault either.
    return Error(400, "lease is not renewable");
  }
  if (s[2] == "revoke") {
    auto pki = pki_.find(lease.mount);
    if (pki != pki_.end()) {
      auto cert = pki->second.certificates.find(lease.serial);
      if (cert != pki->second.certificates.end() && !cert->second.revoked_at) cert->second.revoked_at = now;
    }
    leases_.erase(it);
    return NoContent();
  }
  return Error(404, "no handler for route \"" + request.path + "\"");
}

}  // namespace septa::vaultsim
