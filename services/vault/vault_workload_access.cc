#include "services/vault/vault_workload_access.h"

namespace septa::vault {
namespace {

using nlohmann::json;

bool StringIs(const json& object, const char* key, const std::string& want) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() && it->get<std::string>() == want;
}

bool ListIs(const json& object, const char* key, const std::vector<std::string>& want) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_array() || it->size() != want.size()) return false;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (!(*it)[i].is_string() || (*it)[i].get<std::string>() != want[i]) return false;
  }
  return true;
}

// A read that found nothing is no error here: the caller writes it.
Result<json> ReadOrNull(VaultClient& client, const std::string& path) {
  auto read = client.Read(path);
  if (IsNotFound(read)) return json(nullptr);
  if (!read.ok()) return read.status();
  return read->data.is_object() ? read->data : json(nullptr);
}

}  // namespace

std::string VirtualClusterAuthMount(std::string_view host_namespace) {
  return std::string(host_namespace) + "-kubernetes";
}

std::string WorkloadPolicyName(std::string_view host_namespace) { return std::string(host_namespace) + "-workloads"; }

Result<std::string> VaultWorkloadAccess::AuthMountOf(const std::string& tenant, const std::string& vcluster) const {
  auto host_namespace = host_namespace_of_({tenant, vcluster});
  SEPTA_RETURN_IF_ERROR(host_namespace);
  return VirtualClusterAuthMount(*host_namespace);
}

Result<std::string> RenderWorkloadPolicy(const std::string& policy_template, const std::string& tenant,
                                         const std::string& vcluster, const std::string& field) {
  if (policy_template.find_first_not_of(" \t\r\n") == std::string::npos) return InvalidField(field, "is empty");
  std::string out;
  for (std::size_t i = 0; i < policy_template.size();) {
    if (policy_template[i] != '{') {
      out += policy_template[i++];
      continue;
    }
    const std::size_t close = policy_template.find('}', i);
    const std::string name = close == std::string::npos ? "" : policy_template.substr(i + 1, close - i - 1);
    if (name == "tenant" || name == "vcluster") {
      out += name == "tenant" ? tenant : vcluster;
      i = close + 1;
    } else if (!name.empty() && name.find_first_not_of("abcdefghijklmnopqrstuvwxyz_") == std::string::npos) {
      return InvalidField(field, "has the placeholder {" + name + "}; only {tenant} and {vcluster} are replaced");
    } else {
      out += policy_template[i++];  // an HCL brace
    }
  }
  return out;
}

Status VaultWorkloadAccess::Ensure(const std::string& tenant, const std::string& vcluster,
                                   const std::string& kubernetes_host, const std::string& kubernetes_ca_pem) {
  auto host_namespace = host_namespace_of_({tenant, vcluster});
  SEPTA_RETURN_IF_ERROR(host_namespace);
  const std::string policy = WorkloadPolicyName(*host_namespace);
  auto hcl = RenderWorkloadPolicy(options_.policy_template, tenant, vcluster);
  SEPTA_RETURN_IF_ERROR(hcl);
  SEPTA_RETURN_IF_ERROR(EnsurePolicy(policy, *hcl));
  const std::string mount = VirtualClusterAuthMount(*host_namespace);
  SEPTA_RETURN_IF_ERROR(client_.EnableAuthMethod(mount, "kubernetes"));
  SEPTA_RETURN_IF_ERROR(EnsureConfig(mount, kubernetes_host, kubernetes_ca_pem));
  return EnsureRole(mount, policy);
}

Status VaultWorkloadAccess::EnsurePolicy(const std::string& name, const std::string& hcl) {
  auto stored = client_.ReadPolicy(name);
  SEPTA_RETURN_IF_ERROR(stored);
  return *stored == hcl ? Status::Ok() : client_.WritePolicy(name, hcl);
}

Status VaultWorkloadAccess::EnsureConfig(const std::string& mount, const std::string& kubernetes_host,
                                         const std::string& kubernetes_ca_pem) {
  const std::string path = "auth/" + mount + "/config";
  auto stored = ReadOrNull(client_, path);
  SEPTA_RETURN_IF_ERROR(stored);
  if (stored->is_object() && StringIs(*stored, "kubernetes_host", kubernetes_host) &&
      StringIs(*stored, "kubernetes_ca_cert", kubernetes_ca_pem) && stored->value("disable_local_ca_jwt", false) &&
      !stored->value("token_reviewer_jwt_set", false)) {
    return Status::Ok();
  }
  // token_reviewer_jwt "" clears one set by hand: each login's JWT reviews itself.
  auto written = client_.Write(path, json{{"kubernetes_host", kubernetes_host},
                                          {"kubernetes_ca_cert", kubernetes_ca_pem},
                                          {"token_reviewer_jwt", ""},
                                          {"disable_local_ca_jwt", true}});
  return written.ok() ? Status::Ok() : written.status();
}

Status VaultWorkloadAccess::EnsureRole(const std::string& mount, const std::string& policy) {
  const std::string path = "auth/" + mount + "/role/" + options_.role;
  auto stored = ReadOrNull(client_, path);
  SEPTA_RETURN_IF_ERROR(stored);
  const std::vector<std::string> every{"*"};
  if (stored->is_object() && ListIs(*stored, "bound_service_account_names", every) &&
      ListIs(*stored, "bound_service_account_namespaces", every) && ListIs(*stored, "token_policies", {policy}) &&
      stored->value("token_ttl", std::int64_t{-1}) == options_.token_ttl.count()) {
    return Status::Ok();
  }
  auto written = client_.Write(path, json{{"bound_service_account_names", every},
                                          {"bound_service_account_namespaces", every},
                                          {"token_policies", json::array({policy})},
                                          {"token_ttl", options_.token_ttl.count()}});
  return written.ok() ? Status::Ok() : written.status();
}

Status VaultWorkloadAccess::Remove(const std::string& tenant, const std::string& vcluster) {
  auto host_namespace = host_namespace_of_({tenant, vcluster});
  SEPTA_RETURN_IF_ERROR(host_namespace);
  const std::string mount = VirtualClusterAuthMount(*host_namespace);
  auto methods = client_.Read("sys/auth");
  SEPTA_RETURN_IF_ERROR(methods);
  if (methods->data.is_object() && methods->data.contains(mount + "/")) {
    auto disabled = client_.Delete("sys/auth/" + mount);
    SEPTA_RETURN_IF_ERROR(disabled);
  }
  const std::string policy = WorkloadPolicyName(*host_namespace);
  auto stored = client_.ReadPolicy(policy);
  SEPTA_RETURN_IF_ERROR(stored);
  if (stored->empty()) return Status::Ok();
  auto deleted = client_.Delete("sys/policies/acl/" + policy);
  if (!deleted.ok() && deleted.status().code() != Code::kNotFound) return deleted.status();
  return Status::Ok();
}

}  // namespace septa::vault
