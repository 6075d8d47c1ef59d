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
#include <string>
#include <variant>

#include "common/status.h"
#include "tenancy/sync/pod_translation.h"

namespace septa::tenancy::sync {

inline constexpr std::string_view kEndpointsKind = "Endpoints";

// Whether a virtual service's endpoints are the tenant's to write (and so
// copied): it has no selector and is not an ExternalName service.
bool HasTenantEndpoints(const nlohmann::json& virtual_service);

// The host copy of `virtual_endpoints` of `vcluster`, or why it is not
// synced. `host_pods_by_ip` maps the pod IPs of the virtual cluster's host
// pods (as the host reports them) to those pods' names. Each address keeps
// its IP and hostname and points (targetRef) at the host pod with that IP;
// a tenant's nodeName and targetRef are dropped, since the host knows
// both. Ports are copied with the API server's default protocol.
using HostEndpointsResult = std::variant<nlohmann::json, Refusal>;
Result<HostEndpointsResult> HostEndpoints(const VirtualClusterView& vcluster, const nlohmann::json& virtual_endpoints,
                                          const std::map<std::string, std::string>& host_pods_by_ip);

// Whether `host_endpoints` as read from the host holds what `want` (a
// HostEndpoints) says: labels, annotations and subsets.
bool EndpointsUpToDate(const nlohmann::json& want, const nlohmann::json& host_endpoints);

}  // namespace septa::tenancy::sync
