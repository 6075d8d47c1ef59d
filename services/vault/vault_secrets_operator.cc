#include "services/vault/vault_secrets_operator.h"

#include "services/base/base64.h"
#include "services/kube/resources.h"
#include "services/vault/vault_workload_access.h"

namespace septa::vault {
namespace {

using nlohmann::json;

constexpr std::string_view kGroup = "secrets.hashicorp.com";
constexpr std::string_view kVersion = "v1beta1";
const kube::Resource kCrds{"apiextensions.k8s.io", "v1", "customresourcedefinitions", false};
const kube::Resource kVaultConnections{std::string(kGroup), std::string(kVersion), "vaultconnections", true};
const kube::Resource kVaultAuths{std::string(kGroup), std::string(kVersion), "vaultauths", true};

json Metadata(const std::string& name, const std::string& ns = "") {
  json md = {{"name", name}, {"labels", {{"app.kubernetes.io/managed-by", "septa"}}}};
  if (!ns.empty()) md["namespace"] = ns;
  return md;
}

// A namespaced kind of the operator's API, its schema open: the operator
// validates its own objects.
json Definition(const std::string& kind, const std::string& plural) {
  std::string singular = plural.substr(0, plural.size() - 1);
  return {{"apiVersion", "apiextensions.k8s.io/v1"},
          {"kind", "CustomResourceDefinition"},
          {"metadata", Metadata(plural + "." + std::string(kGroup))},
          {"spec",
           {{"group", std::string(kGroup)},
            {"names", {{"kind", kind}, {"listKind", kind + "List"}, {"plural", plural}, {"singular", singular}}},
            {"scope", "Namespaced"},
            {"versions",
             json::array(
                 {{{"name", std::string(kVersion)},
                   {"served", true},
                   {"storage", true},
                   {"subresources", {{"status", json::object()}}},
                   {"schema",
                    {{"openAPIV3Schema", {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}}}}}}})}}}};
}

// The part of `object` Septa keeps: the Secret's data, anything else's spec.
json KeptPart(const kube::Resource& resource, const json& object) {
  const char* field = resource.resource == kube::kSecrets.resource ? "data" : "spec";
  auto it = object.find(field);
  return it == object.end() ? json(nullptr) : *it;
}

}  // namespace

std::vector<KeptObject> VaultSecretsOperatorObjects(const VaultSecretsOperatorOptions& options,
                                                    const std::string& auth_mount, const std::string& workload_role) {
  const std::string& ns = options.operator_namespace;
  std::vector<KeptObject> out;
  out.push_back({kCrds, Definition("VaultConnection", "vaultconnections"), true});
  out.push_back({kCrds, Definition("VaultAuth", "vaultauths"), true});
  out.push_back({kube::kNamespaces, {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", Metadata(ns)}}, true});
  json connection_spec = {{"address", options.vault_address}, {"skipTLSVerify", false}};
  if (!options.vault_ca_pem.empty()) {
    out.push_back({kube::kSecrets,
                   {{"apiVersion", "v1"},
                    {"kind", "Secret"},
                    {"metadata", Metadata("vault-ca", ns)},
                    {"type", "Opaque"},
                    {"data", {{"ca.crt", base::Base64Encode(options.vault_ca_pem)}}}}});
    connection_spec["caCertSecretRef"] = "vault-ca";
  }
  out.push_back({kVaultConnections,
                 {{"apiVersion", std::string(kGroup) + "/" + std::string(kVersion)},
                  {"kind", "VaultConnection"},
                  {"metadata", Metadata("default", ns)},
                  {"spec", std::move(connection_spec)}}});
  out.push_back({kVaultAuths,
                 {{"apiVersion", std::string(kGroup) + "/" + std::string(kVersion)},
                  {"kind", "VaultAuth"},
                  {"metadata", Metadata("default", ns)},
                  {"spec",
                   {{"vaultConnectionRef", "default"},
                    {"method", "kubernetes"},
                    {"mount", auth_mount},
                    {"allowedNamespaces", json::array({"*"})},
                    {"kubernetes", {{"role", workload_role}, {"serviceAccount", "default"}}}}}}});
  return out;
}

Status EnsureKeptObjects(kube::Client& client, const std::vector<KeptObject>& objects) {
  for (const KeptObject& kept : objects) {
    const json& md = kept.object["metadata"];
    const std::string ns = md.value("namespace", ""), name = md.value("name", "");
    auto current = client.Get(kept.resource, ns, name);
    if (!current.ok() && current.status().code() != Code::kNotFound) return current.status();
    if (!current.ok()) {
      auto created = client.Create(kept.resource, ns, kept.object);
      if (!created.ok() && created.status().code() != Code::kAlreadyExists) return created.status();
      continue;
    }
    if (kept.create_only || KeptPart(kept.resource, *current) == KeptPart(kept.resource, kept.object)) continue;
    json updated = *current;
    updated[kept.resource.resource == kube::kSecrets.resource ? "data" : "spec"] = KeptPart(kept.resource, kept.object);
    auto written = client.Update(kept.resource, ns, updated);  // on the read resourceVersion: a 409 is retried
    if (!written.ok()) return written.status();
  }
  return Status::Ok();
}

}  // namespace septa::vault
