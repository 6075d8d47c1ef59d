// The bookkeeping every host object carries: labels that say who owns it, so
// that the provisioner can list what it manages and never touches anything
// else.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace septa::tenancy::host {

inline constexpr const char* kManagedByLabel = "app.kubernetes.io/managed-by";
inline constexpr const char* kManagedByValue = "septa";
inline constexpr const char* kTenantLabel = "septa.dev/tenant";
inline constexpr const char* kVClusterLabel = "septa.dev/vcluster";
inline constexpr const char* kTrustTierLabel = "septa.dev/trust-tier";
// On cluster-wide objects every virtual cluster renders alike (a tier's KAI
// parent queue, Kueue flavors): they carry no tenant and are never deleted
// with one virtual cluster.
inline constexpr const char* kSharedLabel = "septa.dev/shared";

// The labels of one virtual cluster's objects.
std::map<std::string, std::string> VClusterLabels(std::string_view tenant, std::string_view vcluster);
// The labels of a shared object.
std::map<std::string, std::string> SharedLabels();

// {apiVersion, kind, metadata: {name, namespace (when not empty), labels}}.
nlohmann::json Manifest(std::string_view api_version, std::string_view kind, std::string_view name, std::string_view ns,
                        const std::map<std::string, std::string>& labels);

// A NetworkPolicy egress rule to the host cluster's DNS and nothing else:
// port 53 (UDP and TCP) of the pods labelled k8s-app=kube-dns in
// kube-system, the labels kube-dns and CoreDNS deployments keep. A rule
// naming the port alone would reach any address on it.
nlohmann::json HostDnsEgress();

}  // namespace septa::tenancy::host
