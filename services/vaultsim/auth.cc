// Auth methods: tokens, AppRole and Kubernetes.
#include <algorithm>

#include "common/documents.h"
#include "services/base/base64.h"
#include "services/vaultsim/backend.h"

namespace septa::vaultsim {
namespace {

std::vector<std::string> TokenPolicies(std::vector<std::string> policies) {
  if (std::find(policies.begin(), policies.end(), "root") == policies.end()) policies.push_back("default");
  std::sort(policies.begin(), policies.end());
  policies.erase(std::unique(policies.begin(), policies.end()), policies.end());
  return policies;
}

// Vault reads both the token_* names and the older ones.
std::vector<std::string> PoliciesField(const json& body) {
  if (body.contains("token_policies")) return StringList(body["token_policies"]);
  return StringList(body.value("policies", json(nullptr)));
}

// What a Kubernetes service account JWT claims, read without checking its
// signature (as Vault does unless given pem_keys): "sub" is
// "system:serviceaccount:<namespace>:<name>"; the UID is in the bound
// token's "kubernetes.io" claim or the legacy secret token's flat one.
struct ServiceAccountClaims {
  std::string ns, name, uid;
  std::vector<std::string> audiences;
};

std::optional<ServiceAccountClaims> ClaimsOf(const std::string& jwt) {
  auto first = jwt.find('.');
  auto second = first == std::string::npos ? std::string::npos : jwt.find('.', first + 1);
  if (second == std::string::npos) return std::nullopt;
  auto payload = base::Base64UrlDecode(jwt.substr(first + 1, second - first - 1));
  if (!payload) return std::nullopt;
  auto parsed = ParseJson(*payload);
  const json claims = parsed.ok() ? *std::move(parsed) : json();
  if (!claims.is_object() || !claims.contains("sub") || !claims["sub"].is_string()) return std::nullopt;
  const std::string sub = claims["sub"].get<std::string>();
  static constexpr std::string_view kPrefix = "system:serviceaccount:";
  if (sub.rfind(kPrefix, 0) != 0) return std::nullopt;
  std::string rest = sub.substr(kPrefix.size());
  auto colon = rest.find(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == rest.size()) return std::nullopt;
  ServiceAccountClaims out{rest.substr(0, colon), rest.substr(colon + 1), "", {}};
  auto member = [](const json& object, const char* key) {
    auto it = object.is_object() ? object.find(key) : object.end();
    return it == object.end() ? json(nullptr) : *it;
  };
  if (json uid = member(member(member(claims, "kubernetes.io"), "serviceaccount"), "uid"); uid.is_string()) {
    out.uid = uid.get<std::string>();
  } else if (auto legacy = claims.find("kubernetes.io/serviceaccount/service-account.uid");
             legacy != claims.end() && legacy->is_string()) {
    out.uid = legacy->get<std::string>();
  }
  if (auto aud = claims.find("aud"); aud != claims.end()) {
    if (aud->is_string()) out.audiences.push_back(aud->get<std::string>());
    if (aud->is_array()) out.audiences = StringList(*aud);
  }
  return out;
}

bool Bound(const std::vector<std::string>& allowed, const std::string& value) {
  return std::find(allowed.begin(), allowed.end(), "*") != allowed.end() ||
         std::find(allowed.begin(), allowed.end(), value) != allowed.end();
}

}  // namespace

Token& Backend::NewToken(std::vector<std::string> policies, std::chrono::seconds ttl, std::string path) {
  Token t;
  t.id = "hvs." + RandomId();
  t.accessor = RandomId();
  t.policies = TokenPolicies(std::move(policies));
  t.issued = clock_.Now();
  t.ttl = ttl.count() > 0 ? std::min(ttl, kSystemMaxTtl) : kSystemMaxTtl;
  t.max_ttl = kSystemMaxTtl;
  t.expires = t.issued + t.ttl;
  t.path = std::move(path);
  t.display_name = "token";
  auto& stored = tokens_[t.id];
  stored = std::move(t);
  return stored;
}

json Backend::AuthBlock(const Token& token) const {
  json meta = json::object();
  for (const auto& [k, v] : token.meta) meta[k] = v;
  return json{{"client_token", token.id},
              {"accessor", token.accessor},
              {"policies", token.policies},
              {"token_policies", token.policies},
              {"metadata", meta.empty() ? json(nullptr) : meta},
              {"lease_duration", token.ttl.count()},
              {"renewable", token.renewable},
              {"entity_id", ""},
              {"token_type", "service"},
              {"orphan", token.path != "auth/token/create"},
              {"mfa_requirement", nullptr},
              {"num_uses", 0}};
}

json Backend::TokenData(const Token& token) const {
  std::int64_t ttl = 0;
  if (token.ttl.count() > 0) ttl = std::max<std::int64_t>(0, UnixSeconds(token.expires) - UnixSeconds(clock_.Now()));
  json meta = json::object();
  for (const auto& [k, v] : token.meta) meta[k] = v;
  return json{{"accessor", token.accessor},
              {"creation_time", UnixSeconds(token.issued)},
              {"creation_ttl", token.ttl.count()},
              {"display_name", token.display_name},
              {"entity_id", ""},
              {"expire_time", token.ttl.count() > 0 ? json(FormatRfc3339(token.expires)) : json(nullptr)},
              {"explicit_max_ttl", 0},
              {"id", token.id},
              {"issue_time", FormatRfc3339(token.issued)},
              {"meta", meta.empty() ? json(nullptr) : meta},
              {"num_uses", 0},
              {"orphan", token.path != "auth/token/create"},
              {"path", token.path},
              {"policies", token.policies},
              {"renewable", token.renewable},
              {"ttl", ttl},
              {"type", "service"}};
}

ApiReply Backend::TokenApi(const ApiRequest& request, const Token* token) {
  const auto& s = request.segments;
  const std::string what = s.size() > 2 ? s[2] : "";
  auto with_auth = [&](const Token& t, std::vector<std::string> warnings = {}) {
    Envelope e;
    e.auth = AuthBlock(t);
    e.warnings = std::move(warnings);
    return Reply(e, RequestId());
  };
  if (what == "create" && s.size() == 3 && request.op == Operation::kWrite) {
    auto ttl = DurationField(request.body, "ttl", std::chrono::seconds(0));
    if (!ttl.ok()) return BadRequest(ttl.status());
    std::vector<std::string> policies = PoliciesField(request.body);
    if (policies.empty()) policies = token->policies;
    bool parent_root = std::find(token->policies.begin(), token->policies.end(), "root") != token->policies.end();
    for (const auto& p : policies) {
      if (!parent_root && p != "default" &&
          std::find(token->policies.begin(), token->policies.end(), p) == token->policies.end()) {
        return Error(400, "child policies must be subset of parent");
      }
    }
    if (std::find(policies.begin(), policies.end(), "root") != policies.end() && !parent_root) {
      return Error(400, "root tokens may not be created by a non-root token");
    }
    Token& t = NewToken(policies, *ttl, "auth/token/create");
    t.renewable = request.body.value("renewable", true);
    t.display_name = "token-" + request.body.value("display_name", std::string());
    if (request.body.contains("meta") && request.body["meta"].is_object()) {
      for (const auto& [k, v] : request.body["meta"].items())
        t.meta[k] = v.is_string() ? v.get<std::string>() : v.dump();
    }
    if (std::find(t.policies.begin(), t.policies.end(), "root") != t.policies.end() && ttl->count() == 0) {
      t.ttl = std::chrono::seconds(0);  // a root token without a TTL never expires
      t.renewable = false;
    }
    return with_auth(t);
  }
  if (what == "lookup-self" && request.op == Operation::kRead) return Ok(TokenData(*token));
  if (what == "lookup" && request.op == Operation::kWrite) {
    auto it = tokens_.find(request.body.value("token", std::string()));
    if (it == tokens_.end() || Expired(it->second)) return Error(403, "bad token");
    return Ok(TokenData(it->second));
  }
  if (what == "renew-self" && request.op == Operation::kWrite) {
    Token& t = tokens_.at(token->id);
    if (!t.renewable || t.ttl.count() == 0) return Error(400, "lease is not renewable");
    auto increment = DurationField(request.body, "increment", t.ttl);
    if (!increment.ok()) return BadRequest(increment.status());
    TimePoint now = clock_.Now();
    std::chrono::seconds ttl = std::min(*increment, t.max_ttl);
    std::vector<std::string> warnings;
    TimePoint max_expiry = t.issued + t.max_ttl;
    if (now + ttl > max_expiry) {
      ttl = std::chrono::duration_cast<std::chrono::seconds>(max_expiry - now);
      warnings.push_back("TTL of \"" + GoDuration(*increment) + "\" exceeded the effective max_ttl of \"" +
                         GoDuration(ttl) + "\"; TTL value is capped accordingly");
    }
    t.ttl = ttl;
    t.expires = now + ttl;
    return with_auth(t, warnings);
  }
  if (what == "revoke-self" && request.op == Operation::kWrite) {
    tokens_.erase(token->id);
    return NoContent();
  }
  return Error(405, "unsupported operation");
}

ApiReply Backend::AppRoleApi(const ApiRequest& request, const std::string& mount, AuthMethodState& state) {
  const auto& s = request.segments;
  if (s.size() == 3 && s[2] == "login") {
    if (request.op != Operation::kWrite) return Error(405, "unsupported operation");
    std::string role_id = request.body.value("role_id", std::string());
    std::string secret_id = request.body.value("secret_id", std::string());
    if (role_id.empty()) return Error(400, "missing role_id");
    auto role = std::find_if(state.approles.begin(), state.approles.end(),
                             [&](const auto& entry) { return entry.second.role_id == role_id; });
    if (role == state.approles.end()) return Error(400, "invalid role ID");
    auto sid = role->second.secret_ids.find(secret_id);
    if (sid == role->second.secret_ids.end()) return Error(400, "invalid secret id");
    if (sid->second.ttl.count() > 0 && clock_.Now() >= sid->second.created + sid->second.ttl) {
      role->second.secret_ids.erase(sid);
      return Error(400, "invalid secret id");
    }
    if (sid->second.uses_left > 0 && --sid->second.uses_left == 0) role->second.secret_ids.erase(sid);
    Token& t = NewToken(role->second.policies, role->second.token_ttl, "auth/" + mount + "/login");
    t.meta["role_name"] = role->first;
    t.display_name = mount;
    if (role->second.token_max_ttl.count() > 0) t.max_ttl = role->second.token_max_ttl;
    Envelope e;
    e.auth = AuthBlock(t);
    return Reply(e, RequestId());
  }
  if (s.size() == 3 && s[2] == "role" && request.op == Operation::kList) {
    json keys = json::array();
    for (const auto& [name, r] : state.approles) keys.push_back(name);
    return keys.empty() ? Error(404, "") : Ok(json{{"keys", keys}});
  }
  if (s.size() < 4 || s[2] != "role") return Error(404, "no handler for route \"" + request.path + "\"");
  const std::string& name = s[3];
  auto it = state.approles.find(name);
  if (s.size() == 4) {
    if (request.op == Operation::kDelete) {
      state.approles.erase(name);
      return NoContent();
    }
    if (request.op == Operation::kRead) {
      if (it == state.approles.end()) return Error(404, "");
      return Ok(json{{"token_policies", it->second.policies},
                     {"policies", it->second.policies},
                     {"token_ttl", it->second.token_ttl.count()},
                     {"token_max_ttl", it->second.token_max_ttl.count()},
                     {"secret_id_ttl", it->second.secret_id_ttl.count()},
                     {"bind_secret_id", true}});
    }
    if (request.op != Operation::kWrite) return Error(405, "unsupported operation");
    AppRole role = it == state.approles.end() ? AppRole{} : it->second;
    if (role.role_id.empty()) role.role_id = RandomId();
    if (request.body.contains("role_id")) role.role_id = request.body.value("role_id", role.role_id);
    if (request.body.contains("token_policies") || request.body.contains("policies")) {
      role.policies = PoliciesField(request.body);
    }
    for (auto [field, target] : {std::pair{"token_ttl", &role.token_ttl},
                                 {"token_max_ttl", &role.token_max_ttl},
                                 {"secret_id_ttl", &role.secret_id_ttl}}) {
      auto d = DurationField(request.body, field, *target);
      if (!d.ok()) return BadRequest(d.status());
      *target = *d;
    }
    state.approles[name] = std::move(role);
    return NoContent();
  }
  if (it == state.approles.end()) return Error(400, "role \"" + name + "\" does not exist");
  if (s.size() == 5 && s[4] == "role-id") {
    if (request.op == Operation::kRead) return Ok(json{{"role_id", it->second.role_id}});
    if (request.op == Operation::kWrite) {
      it->second.role_id = request.body.value("role_id", it->second.role_id);
      return NoContent();
    }
  }
  if (s.size() == 5 && s[4] == "secret-id" && request.op == Operation::kWrite) {
    auto ttl = DurationField(request.body, "ttl", it->second.secret_id_ttl);
    if (!ttl.ok()) return BadRequest(ttl.status());
    AppRole::SecretId sid{RandomId(), clock_.Now(), *ttl, request.body.value("num_uses", 0)};
    std::string secret = RandomId();
    it->second.secret_ids[secret] = sid;
    return Ok(json{{"secret_id", secret},
                   {"secret_id_accessor", sid.accessor},
                   {"secret_id_ttl", sid.ttl.count()},
                   {"secret_id_num_uses", sid.uses_left}});
  }
  return Error(405, "unsupported operation");
}

ApiReply Backend::KubernetesApi(const ApiRequest& request, const std::string& mount, AuthMethodState& state) {
  const auto& s = request.segments;
  if (s.size() == 3 && s[2] == "config") {
    if (request.op == Operation::kWrite) {
      if (request.body.value("kubernetes_host", std::string()).empty()) return Error(400, "no host provided");
      state.kubernetes_config = request.body;
      state.kubernetes_reviewer_jwt = request.body.value("token_reviewer_jwt", std::string());
      state.kubernetes_config.erase("token_reviewer_jwt");  // Vault never reads it back
      state.kubernetes_config["token_reviewer_jwt_set"] = !state.kubernetes_reviewer_jwt.empty();
      return NoContent();
    }
    if (request.op == Operation::kRead) {
      return state.kubernetes_config.is_null() ? Error(404, "") : Ok(state.kubernetes_config);
    }
    return Error(405, "unsupported operation");
  }
  if (s.size() == 3 && s[2] == "login") {
    if (request.op != Operation::kWrite) return Error(405, "unsupported operation");
    if (state.kubernetes_config.is_null()) return Error(400, "could not load backend configuration");
    std::string role_name = request.body.value("role", std::string());
    auto role = state.kubernetes_roles.find(role_name);
    if (role_name.empty()) return Error(400, "missing role");
    if (role == state.kubernetes_roles.end()) return Error(400, "invalid role name \"" + role_name + "\"");
    const std::string jwt = request.body.value("jwt", std::string());
    auto sa = ClaimsOf(jwt);
    if (!sa) return Error(400, "missing or malformed jwt: not a Kubernetes service account token");
    const KubernetesRole& bound = role->second;
    if (!bound.audience.empty() &&
        std::find(sa->audiences.begin(), sa->audiences.end(), bound.audience) == sa->audiences.end()) {
      return Error(403, "invalid audience (aud) claim: audience claim does not match any expected audience");
    }
    if (!Bound(bound.service_account_names, sa->name)) return Error(403, "service account name not authorized");
    if (!Bound(bound.service_account_namespaces, sa->ns)) return Error(403, "namespace not authorized");
    if (token_reviewer_) {
      // Vault's lookup: the cluster must vouch for the JWT, for the role's
      // audience or else the JWT's own, as the very account it claims.
      TokenReviewRequest review{state.kubernetes_config.value("kubernetes_host", std::string()),
                                state.kubernetes_config.value("kubernetes_ca_cert", std::string()),
                                state.kubernetes_reviewer_jwt.empty() ? jwt : state.kubernetes_reviewer_jwt, jwt,
                                bound.audience.empty() ? sa->audiences : std::vector{bound.audience}};
      auto reviewed = token_reviewer_(review);
      if (!reviewed.ok() || reviewed->ns != sa->ns || reviewed->name != sa->name ||
          (!sa->uid.empty() && reviewed->uid != sa->uid)) {
        return Error(403, "permission denied");
      }
    }
    Token& t = NewToken(bound.policies, bound.token_ttl, "auth/" + mount + "/login");
    const std::string& ns = sa->ns;
    const std::string& name = sa->name;
    t.meta = {{"role", role_name},
              {"service_account_name", name},
              {"service_account_namespace", ns},
              {"service_account_uid", sa->uid}};
    t.display_name = mount + "-" + ns + "-" + name;
    Envelope e;
    e.auth = AuthBlock(t);
    return Reply(e, RequestId());
  }
  if (s.size() == 4 && s[2] == "role") {
    const std::string& name = s[3];
    auto it = state.kubernetes_roles.find(name);
    if (request.op == Operation::kDelete) {
      state.kubernetes_roles.erase(name);
      return NoContent();
    }
    if (request.op == Operation::kRead) {
      if (it == state.kubernetes_roles.end()) return Error(404, "");
      return Ok(json{{"bound_service_account_names", it->second.service_account_names},
                     {"bound_service_account_namespaces", it->second.service_account_namespaces},
                     {"token_policies", it->second.policies},
                     {"policies", it->second.policies},
                     {"token_ttl", it->second.token_ttl.count()},
                     {"audience", it->second.audience}});
    }
    if (request.op != Operation::kWrite) return Error(405, "unsupported operation");
    KubernetesRole role;
    role.service_account_names = StringList(request.body.value("bound_service_account_names", json(nullptr)));
    role.service_account_namespaces = StringList(request.body.value("bound_service_account_namespaces", json(nullptr)));
    if (role.service_account_names.empty()) return Error(400, "\"bound_service_account_names\" can not be empty");
    if (role.service_account_namespaces.empty()) {
      return Error(400, "\"bound_service_account_namespaces\" can not be empty");
    }
    role.policies = PoliciesField(request.body);
    auto ttl =
        DurationField(request.body, request.body.contains("token_ttl") ? "token_ttl" : "ttl", std::chrono::seconds(0));
    if (!ttl.ok()) return BadRequest(ttl.status());
    role.token_ttl = *ttl;
    role.audience = request.body.value("audience", std::string());
    state.kubernetes_roles[name] = std::move(role);
    return NoContent();
  }
  if (s.size() == 3 && s[2] == "role" && request.op == Operation::kList) {
    json keys = json::array();
    for (const auto& [name, r] : state.kubernetes_roles) keys.push_back(name);
    return keys.empty() ? Error(404, "") : Ok(json{{"keys", keys}});
  }
  return Error(404, "no handler for route \"" + request.path + "\"");
}

}  // namespace septa::vaultsim
