// Services as kube-apiserver stores them: the defaults it fills in and the
// cluster IPs it hands out from its service CIDR (IPv4, single stack). What
// the syncer relies on (../shared/docs/SYNCER-FACTS.md "What a virtual
// cluster gets from the host"): the host's IP is authoritative, and a
// virtual API server with the same range accepts it when a service is
// created with it.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "services/kubesim/api_error.h"

namespace septa::kubesim {

// kube-apiserver's default --service-cluster-ip-range. Its network address
// is never handed out, nor its first address: that one is the `kubernetes`
// service's on a real cluster.
inline constexpr std::string_view kServiceCidr = "10.96.0.0/12";

// "10.96.0.10" -> its 32-bit value; nullopt for anything but a dotted quad.
std::optional<std::uint32_t> ParseIpv4(std::string_view text);

// Fills in the defaults of a Service (type ClusterIP, sessionAffinity None,
// each port's protocol TCP and targetPort its port) and returns the causes
// of what is wrong with it: an unknown type, a port out of 1..65535, an
// ExternalName without externalName, a ClusterIP service without ports.
std::vector<StatusCause> DefaultAndValidateService(nlohmann::json& service);

// A new service's spec.clusterIP and clusterIPs: the one it asks for (in
// range and not in `used`), none for ExternalName, "None" kept (headless),
// otherwise a random free address of the range. The causes name
// spec.clusterIPs, in the API server's words.
std::vector<StatusCause> AllocateClusterIp(nlohmann::json& service, const std::set<std::uint32_t>& used,
                                           RandomSource& random);

// An update of `current` to `proposed`: a cluster IP or node port the update
// leaves out is kept (as kube-apiserver does for a PUT without them); one
// that differs is refused (the field is immutable).
std::vector<StatusCause> KeepAllocatedServiceValues(const nlohmann::json& current, nlohmann::json& proposed);

// An update that moves a service across ExternalName, as kube-apiserver
// does: to ExternalName its cluster IPs (and IP families) are dropped,
// which frees them; from ExternalName it is given one as a new service is
// (AllocateClusterIp: the one asked for, if in range and free). Nothing
// for other updates.
std::vector<StatusCause> ReallocateOnTypeChange(const nlohmann::json& current, nlohmann::json& proposed,
                                                const std::set<std::uint32_t>& used, RandomSource& random);

// The cluster IPs `service` holds (none for headless and ExternalName).
std::vector<std::uint32_t> ClusterIpsOf(const nlohmann::json& service);

}  // namespace septa::kubesim
