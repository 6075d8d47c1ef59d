#include "services/vault/vault_pki.h"

#include <algorithm>
#include <sstream>
#include <vector>

#include "tenancy/vcluster_roles.h"
#include "tenancy/virtual_cluster_ref.h"

namespace septa::vault {
namespace {

using nlohmann::json;

constexpr std::string_view kPemEnd = "-----END CERTIFICATE-----";

// The role as Vault reads it back equals what Septa wants: only the fields
// Septa sets are compared, so Vault's other defaults never cause a write.
bool RoleMatches(const json& stored, const PkiRole& want) {
  if (!stored.is_object()) return false;
  auto flag = [&](const char* key, bool value) {
    auto it = stored.find(key);
    return it != stored.end() && it->is_boolean() && it->get<bool>() == value;
  };
  auto number = [&](const char* key, std::int64_t value) {
    auto it = stored.find(key);
    return it != stored.end() && it->is_number_integer() && it->get<std::int64_t>() == value;
  };
  auto organization = stored.find("organization");
  return flag("allow_any_name", want.allow_any_name) && flag("enforce_hostnames", want.enforce_hostnames) &&
         flag("client_flag", want.client_flag) && flag("server_flag", want.server_flag) &&
         flag("generate_lease", want.generate_lease) && number("max_ttl", want.max_ttl.count()) &&
         number("key_bits", 256) && stored.value("key_type", std::string()) == "ec" && organization != stored.end() &&
         organization->is_array() && organization->get<std::vector<std::string>>() == want.organization;
}

// The tenant policy's lines about `mount`: one `path` stanza per line, so a
// mount's lines are found (and removed) by their prefix.
std::vector<std::string> PolicyLinesOf(const std::string& mount) {
  return {"path \"" + mount + "/issue/*\" { capabilities = [\"update\"] }",
          "path \"" + mount + "/cert/ca_chain\" { capabilities = [\"read\"] }",
          "path \"" + mount + "/crl\" { capabilities = [\"read\"] }"};
}

bool IsLineOf(const std::string& line, const std::string& mount) { return line.rfind("path \"" + mount + "/", 0) == 0; }

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

std::string Joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& line : lines) out += line + "\n";
  return out;
}

}  // namespace

std::string VirtualClusterPkiMount(std::string_view host_namespace) { return std::string(host_namespace) + "-pki"; }

Result<std::string> VaultPki::MountOf(const std::string& tenant, const std::string& vcluster) const {
  auto host_namespace = host_namespace_of_({tenant, vcluster});
  SEPTA_RETURN_IF_ERROR(host_namespace);
  return VirtualClusterPkiMount(*host_namespace);
}

std::string TenantPolicyName(const std::string& tenant) { return "septa-tenant-" + tenant; }

std::string FirstPemCertificate(const std::string& pem) {
  const std::size_t end = pem.find(kPemEnd);
  if (end == std::string::npos) return "";
  const std::size_t begin = pem.find("-----BEGIN CERTIFICATE-----");
  if (begin == std::string::npos || begin > end) return "";
  return pem.substr(begin, end + kPemEnd.size() - begin) + "\n";
}

Status VaultPki::EnsureRoot() {
  SEPTA_RETURN_IF_ERROR(client_.EnableSecretsEngine(options_.root_mount, "pki", options_.root_ttl));
  auto ca = client_.ReadCaPem(options_.root_mount);
  if (ca.ok()) return Status::Ok();
  if (ca.status().code() != Code::kNotFound) return ca.status();
  auto root = client_.GenerateRoot(options_.root_mount, "Septa client certificates root", options_.root_ttl);
  return root.ok() ? Status::Ok() : root.status();
}

Result<std::string> VaultPki::EnsureVirtualClusterCa(const std::string& tenant, const std::string& vcluster) {
  auto mount_of = MountOf(tenant, vcluster);
  SEPTA_RETURN_IF_ERROR(mount_of);
  const std::string& mount = *mount_of;
  SEPTA_RETURN_IF_ERROR(client_.EnableSecretsEngine(mount, "pki", options_.intermediate_ttl));
  if (auto ca = ClientCaPem(tenant, vcluster); ca.ok() || ca.status().code() != Code::kNotFound) return ca;
  // No CA yet (or a run stopped before set-signed: its pending key is replaced).
  const std::string common_name = tenancy::VirtualClusterText(tenant, vcluster) + " client CA";
  auto csr = client_.GenerateIntermediate(mount, common_name);
  if (!csr.ok()) return csr.status();
  auto signed_ca = client_.SignIntermediate(options_.root_mount, *csr, common_name, options_.intermediate_ttl);
  if (!signed_ca.ok()) return signed_ca.status();
  SEPTA_RETURN_IF_ERROR(client_.SetSignedIntermediate(mount, signed_ca->certificate + "\n" + signed_ca->issuing_ca));
  return ClientCaPem(tenant, vcluster);
}

Status VaultPki::EnsureRoles(const std::string& tenant, const std::string& vcluster, std::chrono::seconds max_ttl) {
  if (max_ttl.count() <= 0) return InvalidField("max_ttl", "must be positive");
  auto mount_of = MountOf(tenant, vcluster);
  SEPTA_RETURN_IF_ERROR(mount_of);
  const std::string& mount = *mount_of;
  for (const auto& role : tenancy::kVclusterRoles) {
    PkiRole want;
    want.allow_any_name = true;
    want.enforce_hostnames = false;
    want.organization = {std::string(role.group)};
    want.max_ttl = max_ttl;
    want.client_flag = true;
    want.server_flag = false;
    const std::string name(role.name);
    auto stored = client_.Read(mount + "/roles/" + name);
    if (stored.ok() && RoleMatches(stored->data, want)) continue;
    if (!stored.ok() && stored.status().code() != Code::kNotFound) return stored.status();
    SEPTA_RETURN_IF_ERROR(client_.WritePkiRole(mount, name, want));
  }
  return Status::Ok();
}

Status VaultPki::EnsureTenantPolicy(const std::string& tenant, const std::string& vcluster) {
  const std::string name = TenantPolicyName(tenant);
  auto text = client_.ReadPolicy(name);
  SEPTA_RETURN_IF_ERROR(text);
  std::vector<std::string> lines = Lines(*text);
  bool changed = false;
  auto mount = MountOf(tenant, vcluster);
  SEPTA_RETURN_IF_ERROR(mount);
  for (auto& line : PolicyLinesOf(*mount)) {
    if (std::find(lines.begin(), lines.end(), line) != lines.end()) continue;
    lines.push_back(std::move(line));
    changed = true;
  }
  return changed ? client_.WritePolicy(name, Joined(lines)) : Status::Ok();
}

Result<std::string> VaultPki::EnsureVirtualClusterPki(const std::string& tenant, const std::string& vcluster,
                                                      std::optional<std::chrono::seconds> max_ttl) {
  SEPTA_RETURN_IF_ERROR(EnsureRoot());
  auto ca = EnsureVirtualClusterCa(tenant, vcluster);
  if (!ca.ok()) return ca.status();
  if (max_ttl) SEPTA_RETURN_IF_ERROR(EnsureRoles(tenant, vcluster, *max_ttl));
  SEPTA_RETURN_IF_ERROR(EnsureTenantPolicy(tenant, vcluster));
  return ca;
}

Status VaultPki::RemoveVirtualClusterPki(const std::string& tenant, const std::string& vcluster) {
  auto mount_of = MountOf(tenant, vcluster);
  SEPTA_RETURN_IF_ERROR(mount_of);
  const std::string& mount = *mount_of;
  // The policy first: a run that stops after it leaves the mount, which the next run removes.
  const std::string name = TenantPolicyName(tenant);
  auto text = client_.ReadPolicy(name);
  SEPTA_RETURN_IF_ERROR(text);
  std::vector<std::string> lines = Lines(*text);
  const std::size_t before = lines.size();
  std::erase_if(lines, [&](const std::string& line) { return IsLineOf(line, mount); });
  if (lines.empty() && before > 0) {
    auto deleted = client_.Delete("sys/policies/acl/" + name);
    if (!deleted.ok() && deleted.status().code() != Code::kNotFound) return deleted.status();
  } else if (lines.size() != before) {
    SEPTA_RETURN_IF_ERROR(client_.WritePolicy(name, Joined(lines)));
  }
  auto mounts = client_.Read("sys/mounts");
  if (!mounts.ok()) return mounts.status();
  if (!mounts->data.is_object() || !mounts->data.contains(mount + "/")) return Status::Ok();
  auto unmounted = client_.Delete("sys/mounts/" + mount);
  return unmounted.ok() ? Status::Ok() : unmounted.status();
}

Result<std::string> VaultPki::ClientCaPem(const std::string& tenant, const std::string& vcluster) {
  auto mount = MountOf(tenant, vcluster);
  SEPTA_RETURN_IF_ERROR(mount);
  auto chain = client_.ReadCaPem(*mount);
  if (!chain.ok()) return chain.status();
  std::string first = FirstPemCertificate(*chain);
  if (first.empty()) return NotFound("vault: " + *mount + " has no CA yet");
  return first;
}

}  // namespace septa::vault
