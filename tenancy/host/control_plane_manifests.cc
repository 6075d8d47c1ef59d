#include "tenancy/host/control_plane_manifests.h"

#include "common/text.h"
#include "tenancy/host/manifest.h"
#include "tenancy/host/names.h"
#include "tenancy/host/quantity.h"
#include "tenancy/names.h"
#include "tenancy/vcluster_roles.h"
#include "tenancy/virtual_cluster_ref.h"

namespace septa::tenancy::host {

namespace {

using nlohmann::json;
using Labels = std::map<std::string, std::string>;

constexpr const char* kNameLabel = "app.kubernetes.io/name";
constexpr const char* kPkiDir = "/etc/septa/pki";
constexpr const char* kCoreDnsKubeconfigDir = "/etc/coredns/kubeconfig";
constexpr const char* kBootstrapDir = "/etc/septa/bootstrap";
constexpr int kNonRootUid = 65532;  // distroless "nonroot"
constexpr int kCoreDnsHealthPort = 8080;
constexpr int kCoreDnsReadyPort = 8181;

std::string Path(const char* dir, std::string_view file) { return std::string(dir) + "/" + std::string(file); }

json Resources(const ContainerResources& r) {
  return {{"requests", {{"cpu", CpuQuantity(r.cpu_request_milli)}, {"memory", MemoryQuantity(r.memory_request_mib)}}},
          {"limits", {{"cpu", CpuQuantity(r.cpu_limit_milli)}, {"memory", MemoryQuantity(r.memory_limit_mib)}}}};
}

// What the restricted Pod Security level asks of a container (and so every
// lower level accepts): non-root, no privilege escalation, no capabilities,
// the runtime's seccomp profile. The root filesystem is never written.
json ContainerSecurity() {
  return {{"allowPrivilegeEscalation", false},
          {"capabilities", {{"drop", json::array({"ALL"})}}},
          {"readOnlyRootFilesystem", true},
          {"runAsNonRoot", true},
          {"seccompProfile", {{"type", "RuntimeDefault"}}}};
}

json PodSecurity() {
  return {{"runAsNonRoot", true},
          {"runAsUser", kNonRootUid},
          {"runAsGroup", kNonRootUid},
          {"fsGroup", kNonRootUid},
          {"seccompProfile", {{"type", "RuntimeDefault"}}}};
}

json Container(std::string_view name, const std::string& image, json args, const ContainerResources& resources) {
  return {{"name", name},
          {"image", image},
          {"imagePullPolicy", "IfNotPresent"},
          {"args", std::move(args)},
          {"resources", Resources(resources)},
          {"securityContext", ContainerSecurity()},
          {"terminationMessagePolicy", "FallbackToLogsOnError"}};
}

json SecretVolume(std::string_view volume, std::string_view secret) {
  // 0440 with fsGroup: readable by the non-root user, by nobody else.
  return {{"name", volume}, {"secret", {{"secretName", secret}, {"defaultMode", 0440}}}};
}

json HttpsProbe(std::string_view path, int port, int period, int failures) {
  return {{"httpGet", {{"path", path}, {"port", port}, {"scheme", "HTTPS"}}},
          {"periodSeconds", period},
          {"timeoutSeconds", 5},
          {"failureThreshold", failures}};
}

json HttpProbe(std::string_view path, int port, int period, int failures) {
  return {{"httpGet", {{"path", path}, {"port", port}, {"scheme", "HTTP"}}},
          {"periodSeconds", period},
          {"timeoutSeconds", 5},
          {"failureThreshold", failures}};
}

// A kubeconfig (JSON is YAML) with a client certificate from files.
std::string Kubeconfig(const std::string& server, const std::string& ca_file, const std::string& cert_file,
                       const std::string& key_file, std::string_view user) {
  json config = {
      {"apiVersion", "v1"},
      {"kind", "Config"},
      {"clusters",
       json::array({{{"name", "virtual"}, {"cluster", {{"server", server}, {"certificate-authority", ca_file}}}}})},
      {"users",
       json::array({{{"name", user}, {"user", {{"client-certificate", cert_file}, {"client-key", key_file}}}}})},
      {"contexts", json::array({{{"name", "virtual"}, {"context", {{"cluster", "virtual"}, {"user", user}}}}})},
      {"current-context", "virtual"}};
  return config.dump(2) + "\n";
}

json Secret(std::string_view name, const std::string& ns, const Labels& labels, json string_data) {
  json out = Manifest("v1", "Secret", name, ns, labels);
  out["type"] = "Opaque";
  out["stringData"] = std::move(string_data);
  return out;
}

std::string Join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (const std::string& p : parts) {
    if (!out.empty()) out += separator;
    out += p;
  }
  return out;
}

json ClusterRoleBinding(std::string_view name, std::string_view cluster_role, std::string_view kind,
                        std::string_view subject) {
  json binding =
      Manifest("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", name, "", {{kManagedByLabel, kManagedByValue}});
  binding["roleRef"] = {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", cluster_role}};
  binding["subjects"] = json::array({{{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", kind}, {"name", subject}}});
  return binding;
}

// What the bootstrap Job applies inside the virtual cluster: the role
// bindings every virtual cluster holds, and what CoreDNS's kubernetes
// plugin reads.
json BootstrapObjects() {
  json items = json::array();
  for (json& binding : VirtualClusterRoleBindings()) items.push_back(std::move(binding));
  json role =
      Manifest("rbac.authorization.k8s.io/v1", "ClusterRole", kCoreDnsUser, "", {{kManagedByLabel, kManagedByValue}});
  role["rules"] = json::array({{{"apiGroups", json::array({""})},
                                {"resources", json::array({"endpoints", "namespaces", "pods", "services"})},
                                {"verbs", json::array({"list", "watch"})}},
                               {{"apiGroups", json::array({"discovery.k8s.io"})},
                                {"resources", json::array({"endpointslices"})},
                                {"verbs", json::array({"list", "watch"})}}});
  items.push_back(std::move(role));
  items.push_back(ClusterRoleBinding(kCoreDnsUser, kCoreDnsUser, "User", kCoreDnsUser));
  return {{"apiVersion", "v1"}, {"kind", "List"}, {"items", std::move(items)}};
}

// The CAs whose client certificates the API server accepts: the virtual
// cluster's own (its components', and the built-in issuer's), and the
// issuer's other CA when there is one (the Vault intermediate).
std::string ClientCaBundle(const ControlPlaneInputs& in) {
  std::string bundle = in.certificates.ca_certificate;
  if (in.extra_client_ca.empty()) return bundle;
  if (!bundle.ends_with('\n')) bundle += '\n';
  return bundle + in.extra_client_ca;
}

std::vector<json> Secrets(const ControlPlaneInputs& in, const std::string& ns, const Labels& labels,
                          const ControlPlaneConfig& config, const std::string& bootstrap_objects) {
  const ControlPlaneCertificates& c = in.certificates;
  const std::string cm_kubeconfig =
      Kubeconfig("https://127.0.0.1:" + std::to_string(kApiServerPort), Path(kPkiDir, kCaCertificateKey),
                 Path(kPkiDir, kControllerManagerCertificateKey), Path(kPkiDir, kControllerManagerKeyKey),
                 "system:kube-controller-manager");
  json certs = {{kCaCertificateKey, c.ca_certificate},
                {kClientCaKey, ClientCaBundle(in)},
                {kApiServerCertificateKey, c.apiserver_certificate},
                {kApiServerKeyKey, c.apiserver_key},
                {kServiceAccountKeyKey, c.service_account_key},
                {kControllerManagerCertificateKey, c.controller_manager_certificate},
                {kControllerManagerKeyKey, c.controller_manager_key},
                {"controller-manager.conf", cm_kubeconfig}};
  // CoreDNS reaches the API server through its Service, with its own
  // credentials only: it never sees the server's keys.
  const std::string dns_kubeconfig = Kubeconfig(
      ControlPlaneEndpoint(ns, config), Path(kCoreDnsKubeconfigDir, kCaCertificateKey),
      Path(kCoreDnsKubeconfigDir, kCoreDnsCertificateKey), Path(kCoreDnsKubeconfigDir, kCoreDnsKeyKey), kCoreDnsUser);
  json dns = {{kCaCertificateKey, c.ca_certificate},
              {kCoreDnsCertificateKey, c.coredns_certificate},
              {kCoreDnsKeyKey, c.coredns_key},
              {"kubeconfig", dns_kubeconfig}};
  const std::string bootstrap_kubeconfig =
      Kubeconfig(ControlPlaneEndpoint(ns, config), Path(kBootstrapDir, kCaCertificateKey),
                 Path(kBootstrapDir, kBootstrapCertificateKey), Path(kBootstrapDir, kBootstrapKeyKey), kBootstrapUser);
  json bootstrap = {{kCaCertificateKey, c.ca_certificate},
                    {kBootstrapCertificateKey, c.bootstrap_certificate},
                    {kBootstrapKeyKey, c.bootstrap_key},
                    {"kubeconfig", bootstrap_kubeconfig},
                    {kBootstrapObjectsKey, bootstrap_objects}};
  return {Secret(kCertificatesSecretName, ns, labels, std::move(certs)),
          Secret(kKineSecretName, ns, labels, {{kKineEndpointKey, in.kine_endpoint}}),
          Secret(kCoreDnsSecretName, ns, labels, std::move(dns)),
          Secret(kBootstrapName, ns, labels, std::move(bootstrap))};
}

json Service(std::string_view name, const std::string& ns, const Labels& labels, std::string_view app, json ports) {
  json out = Manifest("v1", "Service", name, ns, labels);
  out["spec"] = {{"type", "ClusterIP"}, {"selector", {{kNameLabel, app}}}, {"ports", std::move(ports)}};
  return out;
}

json Corefile(const std::string& ns, const ControlPlaneConfig& config, const RenderConfig& render,
              const Labels& labels) {
  const std::string text = ".:" + std::to_string(render.dns_port) + " {\n" +
                           "    errors\n"
                           "    health :" +
                           std::to_string(kCoreDnsHealthPort) + "\n    ready :" + std::to_string(kCoreDnsReadyPort) +
                           "\n    kubernetes " + config.cluster_domain +
                           " in-addr.arpa ip6.arpa {\n"
                           "        kubeconfig " +
                           Path(kCoreDnsKubeconfigDir, "kubeconfig") +
                           "\n"
                           "        pods insecure\n"
                           "        fallthrough in-addr.arpa ip6.arpa\n"
                           "        ttl 30\n"
                           "    }\n"
                           "    forward . /etc/resolv.conf\n"
                           "    cache 30\n"
                           "    loop\n"
                           "    reload\n"
                           "    loadbalance\n"
                           "}\n";
  json out = Manifest("v1", "ConfigMap", kCoreDnsName, ns, labels);
  out["data"] = {{"Corefile", text}};
  return out;
}

// The pods' labels: who they belong to and what they are, without
// managed-by, which marks the objects the provisioner keeps (not pods).
json PodLabels(const ControlPlaneInputs& in, std::string_view app) {
  return {{kNameLabel, app}, {kTenantLabel, in.tenant}, {kVClusterLabel, in.vcluster}};
}

json PodSpec(json containers, json volumes) {
  return {{"serviceAccountName", kControlPlaneName},
          {"automountServiceAccountToken", false},  // the control plane never calls the host's API
          {"enableServiceLinks", false},
          {"securityContext", PodSecurity()},
          {"containers", std::move(containers)},
          {"volumes", std::move(volumes)}};
}

json ControlPlaneStatefulSet(const ControlPlaneInputs& in, const std::string& ns, const Labels& labels,
                             const ControlPlaneConfig& config) {
  auto pki = [](std::string_view file) { return Path(kPkiDir, file); };
  json apiserver = Container(
      "kube-apiserver", config.kube_apiserver_image,
      {"--advertise-address=$(POD_IP)", "--bind-address=0.0.0.0", "--secure-port=" + std::to_string(kApiServerPort),
       "--etcd-servers=http://127.0.0.1:2379", "--client-ca-file=" + pki(kClientCaKey),
       "--tls-cert-file=" + pki(kApiServerCertificateKey), "--tls-private-key-file=" + pki(kApiServerKeyKey),
       "--service-account-issuer=https://kubernetes.default.svc." + config.cluster_domain,
       "--service-account-key-file=" + pki(kServiceAccountKeyKey),
       "--service-account-signing-key-file=" + pki(kServiceAccountKeyKey),
       "--service-cluster-ip-range=" + config.service_cluster_ip_range, "--authorization-mode=RBAC",
       "--allow-privileged=false", "--profiling=false"},
      config.apiserver);
  apiserver["env"] =
      json::array({{{"name", "POD_IP"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "status.podIP"}}}}}}});
  apiserver["ports"] = json::array({{{"name", "https"}, {"containerPort", kApiServerPort}, {"protocol", "TCP"}}});
  apiserver["readinessProbe"] = HttpsProbe("/readyz", kApiServerPort, 5, 3);
  apiserver["livenessProbe"] = HttpsProbe("/livez", kApiServerPort, 10, 8);
  apiserver["volumeMounts"] = json::array({{{"name", "pki"}, {"mountPath", kPkiDir}, {"readOnly", true}}});

  // kine speaks etcd's API on loopback only; the API server is its one client.
  json kine = Container("kine", config.kine_image, {"--endpoint=$(KINE_ENDPOINT)", "--listen-address=127.0.0.1:2379"},
                        config.kine);
  kine["env"] =
      json::array({{{"name", "KINE_ENDPOINT"},
                    {"valueFrom", {{"secretKeyRef", {{"name", kKineSecretName}, {"key", kKineEndpointKey}}}}}}});

  const std::string cm_kubeconfig = pki("controller-manager.conf");
  json manager = Container(
      "kube-controller-manager", config.kube_controller_manager_image,
      {"--kubeconfig=" + cm_kubeconfig, "--authentication-kubeconfig=" + cm_kubeconfig,
       "--authorization-kubeconfig=" + cm_kubeconfig, "--bind-address=127.0.0.1",
       "--controllers=" + Join(config.controllers, ","), "--leader-elect=false",
       "--root-ca-file=" + pki(kCaCertificateKey), "--service-account-private-key-file=" + pki(kServiceAccountKeyKey),
       "--use-service-account-credentials=true", "--profiling=false"},
      config.controller_manager);
  manager["volumeMounts"] = apiserver["volumeMounts"];

  json template_spec = PodSpec(json::array({std::move(kine), std::move(apiserver), std::move(manager)}),
                               json::array({SecretVolume("pki", kCertificatesSecretName)}));
  json out = Manifest("apps/v1", "StatefulSet", kControlPlaneName, ns, labels);
  out["spec"] = {{"replicas", 1},
                 {"serviceName", kApiServerServiceName},
                 {"podManagementPolicy", "OrderedReady"},
                 {"selector", {{"matchLabels", {{kNameLabel, kControlPlaneName}}}}},
                 {"template", {{"metadata", {{"labels", PodLabels(in, kControlPlaneName)}}}, {"spec", template_spec}}}};
  return out;
}

json CoreDnsDeployment(const ControlPlaneInputs& in, const std::string& ns, const Labels& labels,
                       const ControlPlaneConfig& config, const RenderConfig& render) {
  json dns = Container("coredns", config.coredns_image, {"-conf", "/etc/coredns/Corefile"}, config.coredns);
  // No container ports: they only inform, and the Service targets dns_port
  // by number (UDP and TCP on one port, which kubesim's apply would merge).
  dns["readinessProbe"] = HttpProbe("/ready", kCoreDnsReadyPort, 5, 3);
  dns["livenessProbe"] = HttpProbe("/health", kCoreDnsHealthPort, 10, 5);
  dns["volumeMounts"] =
      json::array({{{"name", "corefile"}, {"mountPath", "/etc/coredns"}, {"readOnly", true}},
                   {{"name", "kubeconfig"}, {"mountPath", kCoreDnsKubeconfigDir}, {"readOnly", true}}});
  json volumes = json::array({{{"name", "corefile"}, {"configMap", {{"name", kCoreDnsName}}}},
                              SecretVolume("kubeconfig", kCoreDnsSecretName)});
  json out = Manifest("apps/v1", "Deployment", kCoreDnsName, ns, labels);
  out["spec"] = {{"replicas", 1},
                 {"selector", {{"matchLabels", {{kNameLabel, kCoreDnsName}}}}},
                 {"template",
                  {{"metadata", {{"labels", PodLabels(in, kCoreDnsName)}}},
                   {"spec", PodSpec(json::array({std::move(dns)}), std::move(volumes))}}}};
  return out;
}

// Applies BootstrapObjects to the virtual cluster; fails (and is retried
// with the Job's backoff) until the API server answers. The objects' hash
// on the pod template makes a change of them a new template, which the
// shell applies by replacing the Job, so it runs again.
json BootstrapJob(const ControlPlaneInputs& in, const std::string& ns, const Labels& labels,
                  const ControlPlaneConfig& config, const std::string& bootstrap_objects) {
  json kubectl = Container("kubectl", config.kubectl_image,
                           {"--kubeconfig=" + Path(kBootstrapDir, "kubeconfig"), "--cache-dir=/tmp/kube-cache", "apply",
                            "--server-side", "--field-manager=septa", "-f", Path(kBootstrapDir, kBootstrapObjectsKey)},
                           config.bootstrap);
  kubectl["volumeMounts"] = json::array({{{"name", "bootstrap"}, {"mountPath", kBootstrapDir}, {"readOnly", true}},
                                         {{"name", "tmp"}, {"mountPath", "/tmp"}}});
  json spec = PodSpec(json::array({std::move(kubectl)}),
                      json::array({SecretVolume("bootstrap", kBootstrapName),
                                   {{"name", "tmp"}, {"emptyDir", {{"sizeLimit", "16Mi"}}}}}));
  spec["restartPolicy"] = "OnFailure";
  json out = Manifest("batch/v1", "Job", kBootstrapName, ns, labels);
  out["spec"] = {{"backoffLimit", 30},
                 {"template",
                  {{"metadata",
                    {{"labels", PodLabels(in, kBootstrapName)},
                     {"annotations", {{kBootstrapObjectsHashAnnotation, Sha256Hex(bootstrap_objects)}}}}},
                   {"spec", std::move(spec)}}}};
  return out;
}

// The namespace denies everything but its own pods, DNS and the simulated
// API server (render.cc): the API server takes tenants' requests from
// anywhere and kine reaches PostgreSQL; CoreDNS forwards to the host's DNS.
std::vector<json> NetworkPolicies(const std::string& ns, const Labels& labels, const ControlPlaneConfig& config) {
  json plane = Manifest("networking.k8s.io/v1", "NetworkPolicy", kControlPlaneName, ns, labels);
  plane["spec"] = {
      {"podSelector", {{"matchLabels", {{kNameLabel, kControlPlaneName}}}}},
      {"policyTypes", json::array({"Ingress", "Egress"})},
      {"ingress", json::array({{{"ports", json::array({{{"protocol", "TCP"}, {"port", kApiServerPort}}})}}})},
      {"egress", json::array({{{"ports", json::array({{{"protocol", "TCP"}, {"port", config.database_port}}})}}})}};
  json dns = Manifest("networking.k8s.io/v1", "NetworkPolicy", kCoreDnsName, ns, labels);
  dns["spec"] = {{"podSelector", {{"matchLabels", {{kNameLabel, kCoreDnsName}}}}},
                 {"policyTypes", json::array({"Egress"})},
                 {"egress", json::array({HostDnsEgress()})}};
  return {std::move(plane), std::move(dns)};
}

Status ValidateResources(const std::string& field, const ContainerResources& r) {
  if (r.cpu_request_milli < 1 || r.memory_request_mib < 1) {
    return InvalidField(field, "requests must be at least 1m CPU and 1 MiB");
  }
  if (r.cpu_limit_milli < r.cpu_request_milli || r.memory_limit_mib < r.memory_request_mib) {
    return InvalidField(field, "limits must not be below the requests");
  }
  return Status::Ok();
}

Status RequireText(const std::string& field, const std::string& value) {
  if (value.empty()) return InvalidField(field, "is required");
  return ValidateText(field, value, 1024);
}

bool IsIdentifierPrefix(std::string_view prefix) {
  if (prefix.empty() || prefix.size() > 30 || !(prefix[0] >= 'a' && prefix[0] <= 'z')) return false;
  for (char c : prefix) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
  }
  return true;
}

Status ValidateCertificates(const ControlPlaneCertificates& c) {
  const std::pair<const char*, const std::string*> pems[] = {
      {"certificates.ca_certificate", &c.ca_certificate},
      {"certificates.apiserver_certificate", &c.apiserver_certificate},
      {"certificates.apiserver_key", &c.apiserver_key},
      {"certificates.service_account_key", &c.service_account_key},
      {"certificates.controller_manager_certificate", &c.controller_manager_certificate},
      {"certificates.controller_manager_key", &c.controller_manager_key},
      {"certificates.coredns_certificate", &c.coredns_certificate},
      {"certificates.coredns_key", &c.coredns_key},
      {"certificates.bootstrap_certificate", &c.bootstrap_certificate},
      {"certificates.bootstrap_key", &c.bootstrap_key}};
  for (const auto& [field, pem] : pems) {
    if (pem->find("-----BEGIN ") == std::string::npos) return InvalidField(field, "must be PEM");
  }
  return Status::Ok();
}

}  // namespace

Status ValidateControlPlaneConfig(const ControlPlaneConfig& config) {
  SEPTA_RETURN_IF_ERROR(RequireText("control_plane.kube_apiserver_image", config.kube_apiserver_image));
  SEPTA_RETURN_IF_ERROR(
      RequireText("control_plane.kube_controller_manager_image", config.kube_controller_manager_image));
  SEPTA_RETURN_IF_ERROR(RequireText("control_plane.kine_image", config.kine_image));
  SEPTA_RETURN_IF_ERROR(RequireText("control_plane.coredns_image", config.coredns_image));
  SEPTA_RETURN_IF_ERROR(RequireText("control_plane.kubectl_image", config.kubectl_image));
  SEPTA_RETURN_IF_ERROR(ValidateResources("control_plane.apiserver", config.apiserver));
  SEPTA_RETURN_IF_ERROR(ValidateResources("control_plane.controller_manager", config.controller_manager));
  SEPTA_RETURN_IF_ERROR(ValidateResources("control_plane.kine", config.kine));
  SEPTA_RETURN_IF_ERROR(ValidateResources("control_plane.coredns", config.coredns));
  SEPTA_RETURN_IF_ERROR(ValidateResources("control_plane.bootstrap", config.bootstrap));
  if (config.controllers.empty()) return InvalidField("control_plane.controllers", "must name at least one");
  for (const std::string& c : config.controllers) {
    if (!IsDns1123Label(c, 63)) return InvalidField("control_plane.controllers", "\"" + c + "\" is not a name");
  }
  SEPTA_RETURN_IF_ERROR(RequireText("control_plane.service_cluster_ip_range", config.service_cluster_ip_range));
  for (const auto& [field, domain] : {std::pair{"control_plane.cluster_domain", &config.cluster_domain},
                                      std::pair{"control_plane.host_cluster_domain", &config.host_cluster_domain}}) {
    if (!IsDns1123Subdomain(*domain)) return InvalidField(field, "must be a DNS-1123 subdomain");
  }
  if (config.database_port < 1 || config.database_port > 65535) {
    return InvalidField("control_plane.database_port", "must be a port in 1..65535");
  }
  const std::string& ssl = config.database_sslmode;
  if (ssl != "disable" && ssl != "require" && ssl != "verify-ca" && ssl != "verify-full") {
    return InvalidField("control_plane.database_sslmode", "must be one of disable, require, verify-ca, verify-full");
  }
  if (!IsIdentifierPrefix(config.database_prefix)) {
    return InvalidField("control_plane.database_prefix", "must be 1-30 of a-z, 0-9 and '_', starting with a letter");
  }
  return Status::Ok();
}

std::vector<std::string> ApiServerNames(std::string_view host_namespace, const ControlPlaneConfig& config) {
  const std::string service(kApiServerServiceName), ns(host_namespace);
  return {service,
          service + "." + ns,
          service + "." + ns + ".svc",
          service + "." + ns + ".svc." + config.host_cluster_domain,
          "kubernetes",
          "kubernetes.default",
          "kubernetes.default.svc",
          "kubernetes.default.svc." + config.cluster_domain,
          "localhost"};
}

std::vector<json> VirtualClusterRoleBindings() {
  std::vector<json> out;
  for (const VclusterRole& role : kVclusterRoles) {
    out.push_back(ClusterRoleBinding("septa-" + std::string(role.name), role.cluster_role, "Group", role.group));
  }
  out.push_back(ClusterRoleBinding("septa-token-review", "system:auth-delegator", "Group", "system:serviceaccounts"));
  return out;
}

std::string ControlPlaneEndpoint(std::string_view host_namespace, const ControlPlaneConfig& config) {
  return "https://" + std::string(kApiServerServiceName) + "." + std::string(host_namespace) + ".svc." +
         config.host_cluster_domain;
}

std::string KineDatabaseName(const ControlPlaneConfig& config, std::string_view tenant, std::string_view vcluster) {
  return config.database_prefix + Sha256Hex(VirtualClusterText(tenant, vcluster)).substr(0, 24);
}

std::string KineEndpoint(const ControlPlaneConfig& config, std::string_view role, std::string_view password,
                         std::string_view address, std::string_view database) {
  return "postgres://" + std::string(role) + ":" + std::string(password) + "@" + std::string(address) + "/" +
         std::string(database) + "?sslmode=" + config.database_sslmode;
}

Result<std::vector<json>> RenderControlPlane(const ControlPlaneInputs& inputs, const ControlPlaneConfig& config,
                                             const RenderConfig& render) {
  SEPTA_RETURN_IF_ERROR(ValidateControlPlaneConfig(config));
  SEPTA_RETURN_IF_ERROR(ValidateRenderConfig(render));
  SEPTA_RETURN_IF_ERROR(ValidateTenantName("tenant", inputs.tenant));
  SEPTA_RETURN_IF_ERROR(ValidateVirtualClusterName("vcluster", inputs.vcluster));
  if (!IsDns1123Label(inputs.host_namespace)) {
    return InvalidField("host_namespace", "must be the DNS-1123 label the virtual cluster was given");
  }
  SEPTA_RETURN_IF_ERROR(ValidateCertificates(inputs.certificates));
  if (inputs.kine_endpoint.rfind("postgres://", 0) != 0) {
    return InvalidField("kine_endpoint", "must be a postgres:// URL");
  }
  if (!inputs.extra_client_ca.empty() && inputs.extra_client_ca.find("-----BEGIN ") == std::string::npos) {
    return InvalidField("extra_client_ca", "must be PEM");
  }
  const std::string& ns = inputs.host_namespace;
  const Labels labels = VClusterLabels(inputs.tenant, inputs.vcluster);

  std::vector<json> out;
  json account = Manifest("v1", "ServiceAccount", kControlPlaneName, ns, labels);
  account["automountServiceAccountToken"] = false;
  out.push_back(std::move(account));
  const std::string bootstrap_objects = BootstrapObjects().dump(2) + "\n";
  for (json& s : Secrets(inputs, ns, labels, config, bootstrap_objects)) out.push_back(std::move(s));
  out.push_back(Corefile(ns, config, render, labels));
  out.push_back(
      Service(kApiServerServiceName, ns, labels, kControlPlaneName,
              json::array({{{"name", "https"}, {"port", 443}, {"targetPort", kApiServerPort}, {"protocol", "TCP"}}})));
  json dns_ports = json::array();
  for (const char* protocol : {"UDP", "TCP"}) {
    dns_ports.push_back({{"name", std::string("dns-") + (protocol[0] == 'U' ? "udp" : "tcp")},
                         {"port", 53},
                         {"targetPort", render.dns_port},
                         {"protocol", protocol}});
  }
  out.push_back(Service(kCoreDnsName, ns, labels, kCoreDnsName, std::move(dns_ports)));
  for (json& p : NetworkPolicies(ns, labels, config)) out.push_back(std::move(p));
  out.push_back(ControlPlaneStatefulSet(inputs, ns, labels, config));
  out.push_back(CoreDnsDeployment(inputs, ns, labels, config, render));
  out.push_back(BootstrapJob(inputs, ns, labels, config, bootstrap_objects));
  return out;
}

}  // namespace septa::tenancy::host
