// The endpoints of a virtual service without a selector on the host
// (../shared/docs/SYNCER-FACTS.md: endpoints are synced down): the tenant
// writes them in its virtual cluster, and the host copy of the service
// (host_services.h, which keeps no selector for such a service) needs the
// host Endpoints object of its own name to lead anywhere.
//
// What Septa refuses, where vCluster copies: an address that is not one of
// the virtual cluster's own host pods. A host Endpoints object may name any
// IP, so a tenant could point a host service, and whatever on the host
// trusts services (ingress controllers, load balancers), at another
// tenant's pods or at the host's own (CVE-2021-25740). A service that must
// reach something outside the cluster is an ExternalName service.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "common/status.h"
#include "tenancy/sync/pod_translation.h"

namespace septa::tenancy::sync {

inline constexpr std::string_view kEndpointsKind = "Endpoints";

// Whether a virtual service's endpoints are the tenant's to write (and so
// copied): it has no selector and is not an ExternalName service.
bool HasTenantEndpoints(const nlohmann::json& virtual_service);

// The host copy of `virtual_endpoints` of `vcluster`, or why it is not
// synced. `host_pods_by_ip` maps the pod IPs of the virtual cluster's live
// host pods (LivePodIps) to those pods' names; an address outside it is
// refused, and when a pod it names goes the syncer looks again, so the
// copy goes with a refusal. Each address keeps
// its IP and hostname and points (targetRef) at the host pod with that IP;
// a tenant's nodeName and targetRef are dropped, since the host knows
// both. Ports are copied with the API server's default protocol.
using HostEndpointsResult = std::variant<nlohmann::json, Refusal>;
Result<HostEndpointsResult> HostEndpoints(const VirtualClusterView& vcluster, const nlohmann::json& virtual_endpoints,
                                          const std::map<std::string, std::string>& host_pods_by_ip);

// The pod IPs (status.podIP and status.podIPs) of those of `host_pods` (one
// virtual cluster's) that still hold their address, mapped to the pods'
// names: HostEndpoints' `host_pods_by_ip`. A pod that has finished
// (Succeeded, Failed) or is being deleted is left out: its IP goes back to
// the CNI's pool and may be another tenant's pod's next (CVE-2021-25740 by
// IP reuse).
std::map<std::string, std::string> LivePodIps(const std::vector<nlohmann::json>& host_pods);

// Whether host pod `host_pod` holds its IP, as LivePodIps counts it.
bool HoldsItsIp(const nlohmann::json& host_pod);

// The names of the host pods whose addresses `host_endpoints` (a host copy
// HostEndpoints wrote) points at (its targetRefs).
std::set<std::string> PodsNamedBy(const nlohmann::json& host_endpoints);

// Whether `host_endpoints` as read from the host holds what `want` (a
// HostEndpoints) says: labels, annotations and subsets.
bool EndpointsUpToDate(const nlohmann::json& want, const nlohmann::json& host_endpoints);

}  // namespace septa::tenancy::sync
