#include "services/hostcp/host_control_planes.h"

#include <array>

#include "services/base/base64.h"
#include "services/base/secure_random.h"
#include "services/core/kubeconfig.h"
#include "services/http/tls.h"
#include "services/reconcile/host_kinds.h"
#include "services/store/database_admin.h"
#include "tenancy/host/names.h"
#include "tenancy/names.h"
#include "tenancy/virtual_cluster_ref.h"

namespace septa::hostcp {

namespace {

using nlohmann::json;
using namespace std::chrono_literals;
namespace host = tenancy::host;

const kube::Resource kServiceAccounts{"", "v1", "serviceaccounts", true};
const kube::Resource kSecrets{"", "v1", "secrets", true};
const kube::Resource kConfigMaps{"", "v1", "configmaps", true};
const kube::Resource kServices{"", "v1", "services", true};
const kube::Resource kNetworkPolicies{"networking.k8s.io", "v1", "networkpolicies", true};
const kube::Resource kStatefulSets{"apps", "v1", "statefulsets", true};
const kube::Resource kDeployments{"apps", "v1", "deployments", true};
const kube::Resource kJobs{"batch", "v1", "jobs", true};

// The kinds RenderControlPlane writes, by apiVersion and kind.
struct Kind {
  const char* api_version;
  const char* kind;
  const kube::Resource* resource;
};
const std::array<Kind, 8> kKinds = {{
    {"v1", "ServiceAccount", &kServiceAccounts},
    {"v1", "Secret", &kSecrets},
    {"v1", "ConfigMap", &kConfigMaps},
    {"v1", "Service", &kServices},
    {"networking.k8s.io/v1", "NetworkPolicy", &kNetworkPolicies},
    {"apps/v1", "StatefulSet", &kStatefulSets},
    {"apps/v1", "Deployment", &kDeployments},
    {"batch/v1", "Job", &kJobs},
}};

const kube::Resource* ResourceOf(const json& object) {
  for (const Kind& k : kKinds) {
    if (object.value("apiVersion", "") == k.api_version && object.value("kind", "") == k.kind) return k.resource;
  }
  return nullptr;
}

// What Remove deletes, in reverse apply order.
struct Named {
  const kube::Resource* resource;
  std::string_view name;
};
const std::array<Named, 13> kObjects = {{
    {&kJobs, host::kBootstrapName},
    {&kDeployments, host::kCoreDnsName},
    {&kStatefulSets, host::kControlPlaneName},
    {&kNetworkPolicies, host::kCoreDnsName},
    {&kNetworkPolicies, host::kControlPlaneName},
    {&kServices, host::kCoreDnsName},
    {&kServices, host::kApiServerServiceName},
    {&kConfigMaps, host::kCoreDnsName},
    {&kSecrets, host::kBootstrapName},
    {&kSecrets, host::kCoreDnsSecretName},
    {&kSecrets, host::kKineSecretName},
    {&kSecrets, host::kCertificatesSecretName},
    {&kServiceAccounts, host::kControlPlaneName},
}};

// The API server turns stringData into data on write; applying data keeps
// what Septa applies comparable with what it reads back.
json AsData(json object) {
  if (object.value("kind", "") != "Secret" || !object.contains("stringData")) return object;
  json data = json::object();
  for (const auto& [key, value] : object["stringData"].items()) {
    data[key] = base::Base64Encode(value.get<std::string>());
  }
  object.erase("stringData");
  object["data"] = std::move(data);
  return object;
}

// The Secret's keys decoded; nullopt when it is absent or a key is missing.
std::optional<std::map<std::string, std::string>> SecretData(const Result<json>& secret,
                                                             std::initializer_list<std::string_view> keys) {
  if (!secret.ok() || !secret->contains("data") || !(*secret)["data"].is_object()) return std::nullopt;
  std::map<std::string, std::string> out;
  for (std::string_view key : keys) {
    const json& data = (*secret)["data"];
    auto it = data.find(std::string(key));
    if (it == data.end() || !it->is_string()) return std::nullopt;
    auto decoded = base::Base64Decode(it->get<std::string>());
    if (!decoded || decoded->empty()) return std::nullopt;
    out[std::string(key)] = *std::move(decoded);
  }
  return out;
}

Result<std::string> NewPassword(RandomSource& random) {
  std::array<std::uint8_t, 24> bytes{};
  SEPTA_RETURN_IF_ERROR(random.Fill(bytes));
  // URL-safe without padding: it goes into kine's postgres:// URL as is.
  return base::Base64UrlEncode(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

// A non-OK result of a read, unless it is NOT_FOUND.
Status UnlessNotFound(const Status& status) { return status.ok() || IsNotFound(status) ? Status::Ok() : status; }

}  // namespace

Status ValidateHostControlPlanesOptions(const HostControlPlanesOptions& options) {
  SEPTA_RETURN_IF_ERROR(host::ValidateControlPlaneConfig(options.config));
  SEPTA_RETURN_IF_ERROR(host::ValidateRenderConfig(options.render));
  if (options.database_admin_url.empty()) return InvalidField("database_admin_url", "is required");
  const std::string& address = options.database_address;
  const auto colon = address.rfind(':');
  if (address.empty() || colon == std::string::npos || colon == 0 || colon + 1 == address.size() ||
      address.find_first_of("/@?# ") != std::string::npos) {
    return InvalidField("control_plane_database_address",
                        "must be host:port, the PostgreSQL server as the host cluster's pods reach it");
  }
  if (options.certificate_validity < 1h) return InvalidField("certificate_validity", "must be at least 1h");
  if (!options.host_namespace_of) return InvalidField("host_namespace_of", "is required");
  return Status::Ok();
}

HostControlPlanes::HostControlPlanes(kube::Client& host, core::VirtualObjectStore& store,
                                     HostControlPlanesOptions options)
    : host_(host),
      store_(store),
      options_(std::move(options)),
      system_random_(options_.random ? nullptr : std::make_unique<base::SecureRandom>()),
      clock_(options_.clock ? *options_.clock : system_clock_),
      random_(options_.random ? *options_.random : *system_random_) {}

HostControlPlanes::~HostControlPlanes() = default;

Result<core::StoredControlPlane> HostControlPlanes::EnsureCa(const core::VirtualClusterKey& key) {
  auto stored = store_.GetControlPlane(key);
  SEPTA_RETURN_IF_ERROR(stored);
  if (stored->has_value()) return **stored;
  const TimePoint now = clock_.Now();
  auto ca = http::IssueCertificate(
      {"septa-vcluster-ca " + key.ToString(), {}, {}, {}, now - 1h, now + 24h * 3650, true}, nullptr);
  SEPTA_RETURN_IF_ERROR(ca);
  auto created = store_.CreateControlPlane(key, {ca->certificate, ca->private_key, 0});
  SEPTA_RETURN_IF_ERROR(created);
  return created->first;  // another replica's, when it stored one first
}

Result<host::ControlPlaneCertificates> HostControlPlanes::IssueCertificates(const core::StoredControlPlane& stored,
                                                                            const std::string& host_namespace) {
  const http::KeyPairPem ca{stored.ca_certificate, stored.ca_private_key};
  const TimePoint now = clock_.Now();
  const TimePoint until = now + options_.certificate_validity;
  auto issue = [&](std::string cn, std::vector<std::string> orgs, std::vector<std::string> names,
                   std::vector<std::string> ips) {
    return http::IssueCertificate({std::move(cn), std::move(orgs), std::move(names), std::move(ips), now - 1h, until},
                                  &ca);
  };
  auto serving = issue("kube-apiserver", {}, host::ApiServerNames(host_namespace, options_.config), {"127.0.0.1"});
  SEPTA_RETURN_IF_ERROR(serving);
  auto manager = issue("system:kube-controller-manager", {}, {}, {});
  SEPTA_RETURN_IF_ERROR(manager);
  auto dns = issue(std::string(host::kCoreDnsUser), {}, {}, {});
  SEPTA_RETURN_IF_ERROR(dns);
  auto bootstrap = issue(std::string(host::kBootstrapUser), {"system:masters"}, {}, {});
  SEPTA_RETURN_IF_ERROR(bootstrap);
  // Only the key matters: kube-apiserver reads the public half from it.
  auto account = http::IssueCertificate({"service-accounts", {}, {}, {}, now - 1h, until}, nullptr);
  SEPTA_RETURN_IF_ERROR(account);
  return host::ControlPlaneCertificates{.ca_certificate = ca.certificate,
                                        .apiserver_certificate = serving->certificate,
                                        .apiserver_key = serving->private_key,
                                        .service_account_key = account->private_key,
                                        .controller_manager_certificate = manager->certificate,
                                        .controller_manager_key = manager->private_key,
                                        .coredns_certificate = dns->certificate,
                                        .coredns_key = dns->private_key,
                                        .bootstrap_certificate = bootstrap->certificate,
                                        .bootstrap_key = bootstrap->private_key};
}

Status HostControlPlanes::ApplyObject(const json& rendered) {
  const json object = AsData(rendered);
  const kube::Resource* resource = ResourceOf(object);
  if (!resource) return Internal("hostcp: no resource for kind " + object.value("kind", ""));
  const std::string ns = object["metadata"].value("namespace", ""), name = object["metadata"].value("name", "");
  auto live = host_.Get(*resource, ns, name);
  if (live.ok() && reconcile::Covers(*live, object)) return Status::Ok();
  SEPTA_RETURN_IF_ERROR(UnlessNotFound(live.status()));
  if (live.ok() && resource == &kJobs) {
    // A Job's pod template cannot be changed: it is replaced (and so runs again).
    kube::DeleteOptions background;
    background.propagation_policy = "Background";
    background.precondition_uid = (*live)["metadata"].value("uid", "");
    SEPTA_RETURN_IF_ERROR(UnlessNotFound(host_.Delete(*resource, ns, name, background)));
  }
  auto applied = host_.Apply(*resource, ns, object, options_.render.field_manager, true);
  SEPTA_RETURN_IF_ERROR(applied);
  if (!reconcile::Covers(*applied, object)) {
    return Internal("hostcp: the host did not keep " + object.value("kind", "") + " " + ns + "/" + name);
  }
  return Status::Ok();
}

Result<core::ControlPlaneState> HostControlPlanes::Ensure(const std::string& tenant, const std::string& vcluster) {
  SEPTA_RETURN_IF_ERROR(tenancy::ValidateTenantName("tenant", tenant));
  SEPTA_RETURN_IF_ERROR(tenancy::ValidateVirtualClusterName("vcluster", vcluster));
  const core::VirtualClusterKey key{tenant, vcluster};
  auto host_namespace = options_.host_namespace_of(key);
  SEPTA_RETURN_IF_ERROR(host_namespace);
  const std::string& ns = *host_namespace;

  // The CA first: List finds the control plane from here on, so a crash
  // after any later step leaves nothing Remove cannot find.
  auto ca = EnsureCa(key);
  SEPTA_RETURN_IF_ERROR(ca);

  // What the host keeps from an earlier Ensure.
  auto certs = host_.Get(kSecrets, ns, std::string(host::kCertificatesSecretName));
  SEPTA_RETURN_IF_ERROR(UnlessNotFound(certs.status()));
  auto dns = host_.Get(kSecrets, ns, std::string(host::kCoreDnsSecretName));
  SEPTA_RETURN_IF_ERROR(UnlessNotFound(dns.status()));
  auto kine = host_.Get(kSecrets, ns, std::string(host::kKineSecretName));
  SEPTA_RETURN_IF_ERROR(UnlessNotFound(kine.status()));
  auto bootstrap = host_.Get(kSecrets, ns, std::string(host::kBootstrapName));
  SEPTA_RETURN_IF_ERROR(UnlessNotFound(bootstrap.status()));

  host::ControlPlaneInputs inputs{.tenant = tenant,
                                  .vcluster = vcluster,
                                  .host_namespace = ns,
                                  .certificates = {},
                                  .kine_endpoint = {},
                                  .extra_client_ca = {}};
  auto kept = SecretData(
      certs, {host::kCaCertificateKey, host::kApiServerCertificateKey, host::kApiServerKeyKey,
              host::kServiceAccountKeyKey, host::kControllerManagerCertificateKey, host::kControllerManagerKeyKey});
  auto kept_dns = SecretData(dns, {host::kCoreDnsCertificateKey, host::kCoreDnsKeyKey});
  auto kept_bootstrap = SecretData(bootstrap, {host::kBootstrapCertificateKey, host::kBootstrapKeyKey});
  // Certificates of another CA (the stored one was lost and made anew) are issued again.
  if (kept && kept_dns && kept_bootstrap && (*kept)[std::string(host::kCaCertificateKey)] == ca->ca_certificate) {
    auto& k = *kept;
    inputs.certificates = {.ca_certificate = k[std::string(host::kCaCertificateKey)],
                           .apiserver_certificate = k[std::string(host::kApiServerCertificateKey)],
                           .apiserver_key = k[std::string(host::kApiServerKeyKey)],
                           .service_account_key = k[std::string(host::kServiceAccountKeyKey)],
                           .controller_manager_certificate = k[std::string(host::kControllerManagerCertificateKey)],
                           .controller_manager_key = k[std::string(host::kControllerManagerKeyKey)],
                           .coredns_certificate = (*kept_dns)[std::string(host::kCoreDnsCertificateKey)],
                           .coredns_key = (*kept_dns)[std::string(host::kCoreDnsKeyKey)],
                           .bootstrap_certificate = (*kept_bootstrap)[std::string(host::kBootstrapCertificateKey)],
                           .bootstrap_key = (*kept_bootstrap)[std::string(host::kBootstrapKeyKey)]};
  } else {
    auto issued = IssueCertificates(*ca, ns);
    SEPTA_RETURN_IF_ERROR(issued);
    inputs.certificates = *std::move(issued);
  }

  // kine's database: the password in the Secret while it still fits the
  // configured address; a new one (set on the role) otherwise.
  const std::string database = host::KineDatabaseName(options_.config, tenant, vcluster);
  std::string password;
  bool reset_password = false;
  if (auto endpoint = SecretData(kine, {host::kKineEndpointKey})) {
    const std::string& text = (*endpoint)[std::string(host::kKineEndpointKey)];
    const std::string prefix = "postgres://" + database + ":";
    const auto at = text.find('@');
    if (text.rfind(prefix, 0) == 0 && at != std::string::npos && at > prefix.size()) {
      password = text.substr(prefix.size(), at - prefix.size());
      if (host::KineEndpoint(options_.config, database, password, options_.database_address, database) != text) {
        password.clear();
      }
    }
  }
  if (password.empty()) {
    auto made = NewPassword(random_);
    SEPTA_RETURN_IF_ERROR(made);
    password = *std::move(made);
    reset_password = true;
  }
  SEPTA_RETURN_IF_ERROR(
      store::EnsureOwnedDatabase(options_.database_admin_url, database, database, password, reset_password));
  inputs.kine_endpoint = host::KineEndpoint(options_.config, database, password, options_.database_address, database);
  if (options_.client_ca) {
    auto client_ca = options_.client_ca(key);
    SEPTA_RETURN_IF_ERROR(client_ca);
    inputs.extra_client_ca = *std::move(client_ca);
  }

  auto objects = host::RenderControlPlane(inputs, options_.config, options_.render);
  SEPTA_RETURN_IF_ERROR(objects);
  for (const json& object : *objects) SEPTA_RETURN_IF_ERROR(ApplyObject(object));

  auto plane = host_.Get(kStatefulSets, ns, std::string(host::kControlPlaneName));
  SEPTA_RETURN_IF_ERROR(plane);
  const std::int64_t ready = plane->contains("status") ? (*plane)["status"].value("readyReplicas", 0) : 0;
  if (ready < 1) {
    return core::ControlPlaneState{.serving = false,
                                   .endpoint = "",
                                   .message = "waiting for the control plane pod " +
                                              std::string(host::kControlPlaneName) + "-0 in " + ns +
                                              " to be ready (kube-apiserver's /readyz)"};
  }
  return core::ControlPlaneState{.serving = true,
                                 .endpoint = host::ControlPlaneEndpoint(ns, options_.config),
                                 .message = "the control plane pod is ready"};
}

Status HostControlPlanes::Remove(const std::string& tenant, const std::string& vcluster) {
  SEPTA_RETURN_IF_ERROR(tenancy::ValidateTenantName("tenant", tenant));
  SEPTA_RETURN_IF_ERROR(tenancy::ValidateVirtualClusterName("vcluster", vcluster));
  auto host_namespace = options_.host_namespace_of({tenant, vcluster});
  SEPTA_RETURN_IF_ERROR(host_namespace);
  const std::string& ns = *host_namespace;
  kube::DeleteOptions background;
  background.propagation_policy = "Background";  // the pods go with their StatefulSet and Deployment
  for (const Named& object : kObjects) {
    Status deleted = host_.Delete(*object.resource, ns, std::string(object.name), background);
    SEPTA_RETURN_IF_ERROR(UnlessNotFound(deleted));
  }
  const std::string database = host::KineDatabaseName(options_.config, tenant, vcluster);
  SEPTA_RETURN_IF_ERROR(store::DropOwnedDatabase(options_.database_admin_url, database, database));
  return store_.RemoveControlPlane({tenant, vcluster});
}

Result<std::vector<std::pair<std::string, std::string>>> HostControlPlanes::List() {
  auto keys = store_.ListControlPlanes();
  SEPTA_RETURN_IF_ERROR(keys);
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& key : *keys) out.emplace_back(key.tenant, key.vcluster);
  return out;
}

// The syncer reaches the API server at its Service, as tenants do: septad
// runs inside the host cluster (or has its Service network routed). Its
// identity is a client certificate of the virtual cluster's CA in
// system:masters, which grants no more than the CA key septad holds; a
// stock kube-apiserver cannot revoke it, so it is made at each call and
// lives only in the syncer's memory.
Result<std::string> HostControlPlanes::SyncerKubeconfig(const std::string& tenant, const std::string& vcluster) {
  SEPTA_RETURN_IF_ERROR(tenancy::ValidateTenantName("tenant", tenant));
  SEPTA_RETURN_IF_ERROR(tenancy::ValidateVirtualClusterName("vcluster", vcluster));
  auto stored = store_.GetControlPlane({tenant, vcluster});
  SEPTA_RETURN_IF_ERROR(stored);
  if (!stored->has_value()) {
    return FailedPrecondition("virtual cluster " + tenancy::VirtualClusterText(tenant, vcluster) +
                              " has no control plane yet");
  }
  const http::KeyPairPem ca{(*stored)->ca_certificate, (*stored)->ca_private_key};
  const TimePoint now = clock_.Now();
  auto certificate = http::IssueCertificate(
      {std::string(kSyncerUser), {"system:masters"}, {}, {}, now - 1h, now + options_.certificate_validity}, &ca);
  SEPTA_RETURN_IF_ERROR(certificate);
  auto host_namespace = options_.host_namespace_of({tenant, vcluster});
  SEPTA_RETURN_IF_ERROR(host_namespace);
  return core::RenderKubeconfig(
      {.name = tenant + "-" + vcluster,
       .server = host::ControlPlaneEndpoint(*host_namespace, options_.config),
       .server_ca = ca.certificate,
       .user = std::string(kSyncerUser),
       .credential = core::KubeconfigClientCertificate{certificate->certificate, certificate->private_key}});
}

// The cluster IPs of the API server's and CoreDNS's Services: the
// virtual cluster's pods reach their API server and resolve its names
// there, as a virtual cluster's own pods would (KUBERNETES_SERVICE_HOST is
// an address, and CoreDNS knows the virtual cluster's services).
Result<std::optional<core::WorkloadEndpoints>> HostControlPlanes::WorkloadEndpointsOf(const std::string& tenant,
                                                                                      const std::string& vcluster) {
  SEPTA_RETURN_IF_ERROR(tenancy::ValidateTenantName("tenant", tenant));
  SEPTA_RETURN_IF_ERROR(tenancy::ValidateVirtualClusterName("vcluster", vcluster));
  auto host_namespace = options_.host_namespace_of({tenant, vcluster});
  SEPTA_RETURN_IF_ERROR(host_namespace);
  const std::string& ns = *host_namespace;
  auto cluster_ip = [&](std::string_view name) -> Result<std::string> {
    auto service = host_.Get(kServices, ns, std::string(name));
    SEPTA_RETURN_IF_ERROR(service);
    const std::string ip = (*service)["spec"].value("clusterIP", "");
    if (ip.empty() || ip == "None") {
      return Unavailable("the Service " + ns + "/" + std::string(name) + " has no cluster IP yet");
    }
    return ip;
  };
  auto api = cluster_ip(host::kApiServerServiceName);
  SEPTA_RETURN_IF_ERROR(api);
  auto dns = cluster_ip(host::kCoreDnsName);
  SEPTA_RETURN_IF_ERROR(dns);
  return std::optional<core::WorkloadEndpoints>(
      core::WorkloadEndpoints{.api_host = *api, .api_port = 443, .dns_nameserver = *dns});
}

}  // namespace septa::hostcp
