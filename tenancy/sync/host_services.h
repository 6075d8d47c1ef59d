// A virtual cluster's services on the host (../shared/docs/SYNCER-FACTS.md
// "What a virtual cluster gets from the host"): each virtual Service has a
// host copy named HostObjectName, whose selector picks the host pods of the
// virtual pods it selects; the host allocates the cluster IP, which is
// authoritative: the virtual service is created again with it (the field
// is immutable), so an address a pod reads from virtual DNS or the
// environment reaches the host service.
//
// What Septa does not copy, where vCluster does: spec.externalIPs, which
// would let a tenant capture traffic to any address in the host cluster
// (CVE-2020-8554): such a service is refused, never silently changed.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <variant>

#include "common/status.h"
#include "tenancy/sync/pod_translation.h"

namespace septa::tenancy::sync {

inline constexpr std::string_view kServiceKind = "Service";

// While the syncer gives a virtual service the host's cluster IP (delete,
// then create), the host copy holds the virtual service as it will be
// created (JSON): a syncer killed between the two finds it there and
// creates it, so the tenant's service is never lost.
inline constexpr std::string_view kServiceRecreateAnnotation = "septa.dev/service-recreate";

// The host copy of `virtual_service` of `vcluster`, or why it is not synced
// (the field and the rule). Copied: type, ports (without node ports: the
// host allocates its own), the selector with the virtual cluster's and the
// namespace's labels added (so it picks that namespace's host pods only),
// session affinity, publishNotReadyAddresses, externalName, the traffic
// policies and load balancer source ranges; the cluster IP only when it is
// "None" (headless). A service without a selector keeps none.
using HostServiceResult = std::variant<nlohmann::json, Refusal>;
Result<HostServiceResult> HostService(const VirtualClusterView& vcluster, const nlohmann::json& virtual_service);

// Whether `host_service` as read from the host holds what `want` (a
// HostService) says: labels, annotations and the copied spec fields
// (ports compared without node ports, defaults the API server fills in
// counted as given).
bool ServiceUpToDate(const nlohmann::json& want, const nlohmann::json& host_service);

// Whether `want` can be written over `host_service` in place: a headless
// or ExternalName service and one with an address cannot become each other
// (the host's cluster IP is immutable, and an API server need not allocate
// one on update), so the host copy is replaced.
bool ServiceUpdatableInPlace(const nlohmann::json& want, const nlohmann::json& host_service);

// The virtual service to create in place of `virtual_service` so that it
// has the host service's cluster IP; nullopt when it has it already (or the
// host has none yet, or none is due: headless, ExternalName). Its metadata
// is the virtual object's less what the API server assigns.
std::optional<nlohmann::json> VirtualServiceWithHostIp(const nlohmann::json& virtual_service,
                                                       const nlohmann::json& host_service);

// The virtual service's status to write when the host's differs (a load
// balancer's ingress); nullopt when they agree.
std::optional<nlohmann::json> ServiceStatusUp(const nlohmann::json& virtual_service,
                                              const nlohmann::json& host_service);

}  // namespace septa::tenancy::sync
