// The stock control plane of one virtual cluster on a real host cluster, as
// Kubernetes objects in its host namespace (docs/ARCHITECTURE.md "Virtual
// control plane on a real host"): a StatefulSet whose pod runs kube-apiserver,
// kine (etcd's API on a PostgreSQL database Septa creates) and a reduced
// kube-controller-manager; CoreDNS (Deployment, Corefile, Service); the API
// server's Service; Secrets with the certificates; network policies that open
// the default-deny namespace just enough; a Job that gives CoreDNS its rights
// inside the virtual cluster once the API server answers. Pure: certificates, the database
// endpoint and every setting are passed in (services/hostcp makes them).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "tenancy/host/config.h"

namespace septa::tenancy::host {

struct ContainerResources {
  std::int64_t cpu_request_milli = 0;
  std::int64_t memory_request_mib = 0;
  std::int64_t cpu_limit_milli = 0;
  std::int64_t memory_limit_mib = 0;
};

// Images, versions and sizes. Defaults follow vCluster's chart (SYNCER-FACTS
// "The virtual control plane"): about 200m CPU and 256 Mi for the control
// plane pod, 20m/64 Mi for CoreDNS.
struct ControlPlaneConfig {
  std::string kube_apiserver_image = "registry.k8s.io/kube-apiserver:v1.34.2";
  std::string kube_controller_manager_image = "registry.k8s.io/kube-controller-manager:v1.34.2";
  std::string kine_image = "docker.io/rancher/kine:v0.14.3";
  std::string coredns_image = "registry.k8s.io/coredns/coredns:v1.12.4";
  std::string kubectl_image = "registry.k8s.io/kubectl:v1.34.2";  // the bootstrap Job
  ContainerResources apiserver{150, 256, 1000, 2048};
  ContainerResources controller_manager{30, 128, 500, 1024};
  ContainerResources kine{20, 64, 500, 512};
  ContainerResources coredns{20, 64, 200, 256};
  ContainerResources bootstrap{10, 32, 200, 128};
  // The workload controllers tenants rely on; none that needs nodes, cloud
  // or volumes (node IPAM and lifecycle, attach/detach, PV binding), which
  // the host cluster runs for the synced pods.
  std::vector<std::string> controllers = {"serviceaccount-token-controller",
                                          "serviceaccount-controller",
                                          "root-ca-certificate-publisher-controller",
                                          "namespace-controller",
                                          "garbage-collector-controller",
                                          "deployment-controller",
                                          "replicaset-controller",
                                          "statefulset-controller",
                                          "job-controller",
                                          "cronjob-controller",
                                          "ttl-after-finished-controller",
                                          "endpoints-controller",
                                          "endpointslice-controller",
                                          "resourcequota-controller",
                                          "disruption-controller",
                                          "pod-garbage-collector-controller"};
  std::string service_cluster_ip_range = "10.96.0.0/12";  // the virtual cluster's service IPs
  std::string cluster_domain = "cluster.local";           // inside the virtual cluster
  std::string host_cluster_domain = "cluster.local";      // of the host cluster: the endpoint's name
  int database_port = 5432;                               // kine's egress (network policy)
  std::string database_sslmode = "require";               // in kine's endpoint
  // PostgreSQL names: databases and roles are "<prefix><24 hex digits>",
  // one server may hold several septad installations' (or tests') planes.
  std::string database_prefix = "septa_vc_";
};

// Every field in range; violations name the field ("control_plane.kine_image", ...).
Status ValidateControlPlaneConfig(const ControlPlaneConfig& config);

// What Septa's issuer made for the virtual cluster (PEM).
struct ControlPlaneCertificates {
  std::string ca_certificate;
  std::string apiserver_certificate;  // serving, for ApiServerNames and 127.0.0.1
  std::string apiserver_key;
  std::string service_account_key;             // signs and verifies service account tokens
  std::string controller_manager_certificate;  // client: system:kube-controller-manager
  std::string controller_manager_key;
  std::string coredns_certificate;  // client: kCoreDnsUser
  std::string coredns_key;
  std::string bootstrap_certificate;  // client in system:masters, for the bootstrap Job
  std::string bootstrap_key;
};

struct ControlPlaneInputs {
  std::string tenant;
  std::string vcluster;
  std::string host_namespace;  // stored with the virtual cluster (names.h), never derived here
  ControlPlaneCertificates certificates;
  // postgres://role:password@host:port/database?sslmode=...: stored in a
  // Secret, read by kine from the environment, never in the pod spec.
  std::string kine_endpoint;
  // Another CA (PEM) whose client certificates the API server accepts
  // besides the virtual cluster's own: with issuer vault, the virtual
  // cluster's Vault intermediate, which signs tenants' kubeconfigs. Empty
  // otherwise.
  std::string extra_client_ca;
};

// Names inside the host namespace.
inline constexpr std::string_view kControlPlaneName = "septa-control-plane";  // StatefulSet, its SA and policy
inline constexpr std::string_view kApiServerServiceName = "septa-apiserver";
inline constexpr std::string_view kCertificatesSecretName = "septa-control-plane-certs";
inline constexpr std::string_view kKineSecretName = "septa-control-plane-kine";
inline constexpr std::string_view kCoreDnsName = "septa-coredns";  // Deployment, ConfigMap, Service, policy
inline constexpr std::string_view kCoreDnsSecretName = "septa-coredns-kubeconfig";
inline constexpr std::string_view kBootstrapName = "septa-control-plane-bootstrap";  // Job and its Secret
// Keys of the Secrets.
inline constexpr std::string_view kKineEndpointKey = "endpoint";
inline constexpr std::string_view kCaCertificateKey = "ca.crt";
inline constexpr std::string_view kClientCaKey = "client-ca.crt";  // the CA and extra_client_ca: --client-ca-file
inline constexpr std::string_view kApiServerCertificateKey = "apiserver.crt";
inline constexpr std::string_view kApiServerKeyKey = "apiserver.key";
inline constexpr std::string_view kServiceAccountKeyKey = "sa.key";
inline constexpr std::string_view kControllerManagerCertificateKey = "controller-manager.crt";
inline constexpr std::string_view kControllerManagerKeyKey = "controller-manager.key";
inline constexpr std::string_view kCoreDnsCertificateKey = "coredns.crt";
inline constexpr std::string_view kCoreDnsKeyKey = "coredns.key";
inline constexpr std::string_view kBootstrapCertificateKey = "bootstrap.crt";
inline constexpr std::string_view kBootstrapKeyKey = "bootstrap.key";
inline constexpr std::string_view kBootstrapObjectsKey = "objects.json";
// On the bootstrap Job's pod template: the SHA-256 of what it applies.
inline constexpr std::string_view kBootstrapObjectsHashAnnotation = "septa.dev/objects-sha256";
// Who CoreDNS is to the virtual API server.
inline constexpr std::string_view kCoreDnsUser = "septa:coredns";
// Who the bootstrap Job is: in system:masters, as holding the
// service-account signing key already amounts to.
inline constexpr std::string_view kBootstrapUser = "septa:bootstrap";
inline constexpr int kApiServerPort = 6443;  // in the pod; the Service exposes 443

// The DNS names the API server's serving certificate must hold: its Service
// as the host's pods and tenants reach it, and `kubernetes.default...` as
// the virtual cluster's own pods do.
std::vector<std::string> ApiServerNames(std::string_view host_namespace, const ControlPlaneConfig& config);
// The ClusterRoleBindings every virtual cluster holds, whichever control
// plane serves it (the simulated one seeds them at each load, the bootstrap
// Job applies them on the host): each credential role's group
// (kVclusterRoles) bound to its built-in ClusterRole as "septa-<role>"
// (Kubernetes would take the group's own name; kubesim refuses a colon in
// any name), and every service account to system:auth-delegator as
// "septa-token-review", so that a workload's own token can ask for its
// TokenReview: Vault's Kubernetes auth checks a login that way when it has
// no reviewer token (vault::VaultWorkloadAccess). That lets a service
// account check tokens and permissions of its own virtual cluster only.
std::vector<nlohmann::json> VirtualClusterRoleBindings();
// The URL tenants' kubeconfigs point at: the Service, inside the host cluster.
std::string ControlPlaneEndpoint(std::string_view host_namespace, const ControlPlaneConfig& config);
// The PostgreSQL database and role of kine for tenant/vcluster.
std::string KineDatabaseName(const ControlPlaneConfig& config, std::string_view tenant, std::string_view vcluster);
// kine's endpoint; `address` is "host:port" as the host cluster's pods reach
// the server, `password` URL-safe.
std::string KineEndpoint(const ControlPlaneConfig& config, std::string_view role, std::string_view password,
                         std::string_view address, std::string_view database);

// The control plane's objects in apply order (delete in reverse). Secrets
// carry `stringData` (readable in golden files); the shell applies them as
// `data`. Errors: INVALID_ARGUMENT naming the field of a bad config, name or
// missing certificate.
Result<std::vector<nlohmann::json>> RenderControlPlane(const ControlPlaneInputs& inputs,
                                                       const ControlPlaneConfig& config, const RenderConfig& render);

}  // namespace septa::tenancy::host
