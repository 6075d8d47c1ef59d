#include "services/kubesim/auth.h"

#include <algorithm>

namespace septa::kubesim {

using nlohmann::json;

void Authenticator::AddToken(std::string token, UserInfo user, std::optional<TimePoint> expires) {
  std::lock_guard lock(mu_);
  tokens_[std::move(token)] = Token{std::move(user), expires};
}

std::optional<UserInfo> Authenticator::Authenticate(const http::ConnectionInfo& conn,
                                                    std::string_view authorization) const {
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization.size() > kBearer.size() && authorization.substr(0, kBearer.size()) == kBearer) {
    const std::string_view token = authorization.substr(kBearer.size());
    {
      std::lock_guard lock(mu_);
      auto it = tokens_.find(token);
      if (it != tokens_.end()) {
        if (it->second.expires && clock_.Now() >= *it->second.expires) return std::nullopt;
        return it->second.user;
      }
    }
    return verify_ ? verify_(token) : std::nullopt;
  }
  if (conn.peer && !conn.peer->common_name.empty()) {
    return UserInfo{conn.peer->common_name, conn.peer->organizations};
  }
  return std::nullopt;
}

namespace {

bool Contains(const json& list, std::string_view value) {
  if (!list.is_array()) return false;
  return std::any_of(list.begin(), list.end(), [&](const json& v) {
    return v.is_string() && (v.get<std::string>() == "*" || v.get<std::string>() == value);
  });
}

bool RuleAllows(const json& rule, const AccessRequest& r) {
  std::string resource = r.subresource.empty() ? r.resource : r.resource + "/" + r.subresource;
  if (!Contains(rule.value("verbs", json::array()), r.verb)) return false;
  if (!Contains(rule.value("apiGroups", json::array()), r.group)) return false;
  if (!Contains(rule.value("resources", json::array()), resource)) return false;
  const json names = rule.value("resourceNames", json::array());
  return names.empty() || Contains(names, r.name);
}

bool SubjectMatches(const json& binding, const UserInfo& user) {
  for (const auto& s : binding.value("subjects", json::array())) {
    std::string kind = s.value("kind", ""), name = s.value("name", "");
    if (kind == "User" && name == user.name) return true;
    if (kind == "ServiceAccount" && user.name == "system:serviceaccount:" + s.value("namespace", "") + ":" + name) {
      return true;
    }
    if (kind == "Group" && (std::find(user.groups.begin(), user.groups.end(), name) != user.groups.end() ||
                            name == "system:authenticated")) {
      return true;
    }
  }
  return false;
}

bool RoleAllows(const Storage& storage, const json& binding, const std::string& binding_ns, const AccessRequest& r) {
  const json ref = binding.value("roleRef", json::object());
  std::string kind = ref.value("kind", ""), name = ref.value("name", "");
  ObjectPtr role = kind == "Role" ? storage.Get("roles.rbac.authorization.k8s.io", binding_ns, name)
                                  : storage.Get("clusterroles.rbac.authorization.k8s.io", "", name);
  if (!role) return false;
  for (const auto& rule : role->value("rules", json::array())) {
    if (RuleAllows(rule, r)) return true;
  }
  return false;
}

json Rule(std::vector<std::string> groups, std::vector<std::string> resources, std::vector<std::string> verbs) {
  return {{"apiGroups", groups}, {"resources", resources}, {"verbs", verbs}};
}

json ClusterRole(const std::string& name, json rules) {
  return {{"apiVersion", "rbac.authorization.k8s.io/v1"},
          {"kind", "ClusterRole"},
          {"metadata", {{"name", name}, {"labels", {{"kubernetes.io/bootstrapping", "rbac-defaults"}}}}},
          {"rules", std::move(rules)}};
}

}  // namespace

bool Authorize(const UserInfo& user, const AccessRequest& r, const Storage& storage) {
  if (std::find(user.groups.begin(), user.groups.end(), kAdminGroup) != user.groups.end()) return true;
  auto cluster_bindings = storage.List("clusterrolebindings.rbac.authorization.k8s.io", "", nullptr, 0, "");
  for (const auto& b : cluster_bindings.items) {
    if (SubjectMatches(*b, user) && RoleAllows(storage, *b, "", r)) return true;
  }
  if (r.ns.empty()) return false;
  auto bindings = storage.List("rolebindings.rbac.authorization.k8s.io", r.ns, nullptr, 0, "");
  for (const auto& b : bindings.items) {
    if (SubjectMatches(*b, user) && RoleAllows(storage, *b, r.ns, r)) return true;
  }
  return false;
}

std::vector<json> BuiltinClusterRoles() {
  const std::vector<std::string> read = {"get", "list", "watch"};
  const std::vector<std::string> write = {"get",    "list",  "watch",  "create",
                                          "update", "patch", "delete", "deletecollection"};
  const std::vector<std::string> workload_groups = {"",      "apps",   "networking.k8s.io", "coordination.k8s.io",
                                                    "batch", "policy", "autoscaling"};
  const std::vector<std::string> workloads = {"pods",
                                              "pods/status",
                                              "pods/log",
                                              "services",
                                              "endpoints",
                                              "configmaps",
                                              "serviceaccounts",
                                              "events",
                                              "persistentvolumeclaims",
                                              "deployments",
                                              "deployments/scale",
                                              "statefulsets",
                                              "statefulsets/scale",
                                              "replicasets",
                                              "networkpolicies",
                                              "leases",
                                              "jobs",
                                              "cronjobs",
                                              "poddisruptionbudgets",
                                              "horizontalpodautoscalers"};
  const std::vector<std::string> quota = {"resourcequotas", "limitranges", "namespaces"};
  json view = json::array({Rule(workload_groups, workloads, read), Rule({""}, quota, read)});
  // As Kubernetes' edit role: whoever may run pods may mint their service accounts' tokens.
  json edit = json::array({Rule(workload_groups, workloads, write), Rule({""}, {"secrets"}, write),
                           Rule({""}, {"serviceaccounts/token"}, {"create"}), Rule({""}, quota, read)});
  json admin = edit;
  admin.push_back(Rule({"rbac.authorization.k8s.io"}, {"roles", "rolebindings"}, write));
  // What Vault's Kubernetes auth binds its reviewer to.
  json auth_delegator = json::array({Rule({"authentication.k8s.io"}, {"tokenreviews"}, {"create"}),
                                     Rule({"authorization.k8s.io"}, {"subjectaccessreviews"}, {"create"})});
  return {ClusterRole("cluster-admin", json::array({Rule({"*"}, {"*"}, {"*"})})), ClusterRole("admin", admin),
          ClusterRole("edit", edit), ClusterRole("view", view),
          ClusterRole("system:auth-delegator", std::move(auth_delegator))};
}

}  // namespace septa::kubesim
