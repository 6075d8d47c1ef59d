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
// (CVE-2020-8554), and a NodePort or LoadBalancer service unless the
// tenant's tier allows one (VirtualClusterView::external_services): such a
// service is refused, never silently changed.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <variant>

#include "common/status.h"
#include "tenancy/sync/pod_translation.h"

namespace septa::tenancy::sync {

inline constexpr std::string_view kServiceKind = "Service";

// While the syncer gives a virtual service the host's cluster IP, the host
// copy holds the virtual service as it will be (JSON, its UID included).
// The field is immutable, so the syncer moves the service to ExternalName
// (kReaddressingExternalName), which frees its address, then back with the
// host's: two updates of the same object, never a delete, so a service
// gone from the virtual cluster is always one the tenant deleted. A syncer
// killed between the two finds the record and the marker and finishes.
inline constexpr std::string_view kServiceRecreateAnnotation = "septa.dev/service-recreate";
inline constexpr std::string_view kReaddressingExternalName = "readdressing.septa.invalid";

// Whether `virtual_service` is between the syncer's two updates.
bool Readdressing(const nlohmann::json& virtual_service);
// The first update: `virtual_service` as ExternalName at the marker, its
// address dropped (resourceVersion kept: a precondition).
nlohmann::json ReleasedService(const nlohmann::json& virtual_service);

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

// `virtual_service` as it is to be with the host service's cluster IP (its
// type, ports and address; the record kept on the host copy and the second
// update); nullopt when it has it already (or the host has none yet, or
// none is due: headless, ExternalName).
std::optional<nlohmann::json> VirtualServiceWithHostIp(const nlohmann::json& virtual_service,
                                                       const nlohmann::json& host_service);

// The virtual service's status to write when the host's differs (a load
// balancer's ingress); nullopt when they agree.
std::optional<nlohmann::json> ServiceStatusUp(const nlohmann::json& virtual_service,
                                              const nlohmann::json& host_service);

}  // namespace septa::tenancy::sync
