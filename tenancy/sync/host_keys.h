// Which labels and annotations of a tenant's object may reach its host copy:
// one rule for every synced kind (pods, config maps, secrets, services,
// endpoints, claims), applied where a copy is first made and wherever a
// later patch carries keys down. A key is
//   - the host's (IsHostKey, ReservedByValue): Septa's own bookkeeping
//     (`septa.dev/`, `vcluster.septa.dev/`; not `simulation.septa.dev/`,
//     the simulator's knobs a tenant may set), the schedulers' and device
//     plugins' pod keys (a tenant would pick its own queue, gang or GPU
//     share), the Kubernetes keys that make a host controller act on the
//     object (a Secret's service-account annotations would have the host
//     mint a token of its own; kube-proxy's and the endpoint mirroring's
//     labels), and Septa's ownership label with Septa's value
//     (`app.kubernetes.io/managed-by: septa`, which marks what sleep keeps).
//     Refused, never silently dropped (issue 28, H3 and M5);
//   - a host integration's (IntegrationDomainOf): keys a controller on the
//     host acts on — external-dns publishes names, cloud and MetalLB load
//     balancers take addresses, cert-manager issues certificates, service
//     meshes and secret injectors add containers. Refused unless the
//     tenant's trust tier is allowed that integration (septad's
//     `integration_keys`, host::IntegrationDomainsAllowed);
//   - anything else: copied (the tenant's selectors and downward API need
//     its labels and annotations on the host copy).
// A key's domain matches a listed one when equal to it or a subdomain of it
// ("nginx.ingress.kubernetes.io/x" is ingress.kubernetes.io's).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "tenancy/sync/pod_translation.h"

namespace septa::tenancy::sync {

// Reserved for the host whatever its value.
bool IsHostKey(std::string_view key);
// Reserved for the host with this value (Septa's ownership label).
bool ReservedByValue(std::string_view key, const nlohmann::json& value);

// The integration domain `key` belongs to, or nullopt.
std::optional<std::string_view> IntegrationDomainOf(std::string_view key);
// Whether `domain` is one of the known integration domains (for septad's configuration).
bool IsIntegrationDomain(std::string_view domain);
// Every known integration domain, for error messages and docs.
std::string IntegrationDomainList();

// Whether a tenant's `key` = `value` reaches the host copy, with the
// integration domains `allowed` for its tier.
bool CopiedToHost(std::string_view key, const nlohmann::json& value, const std::set<std::string>& allowed);

// The first label or annotation of `metadata` (an object's metadata) that a
// tenant may not put on a host copy, as the refusal that names it
// ("metadata.annotations[external-dns.alpha.kubernetes.io/hostname]");
// `inputs` are annotation keys the syncer reads itself and does not copy
// (a pod's GPU and gang inputs).
std::optional<Refusal> CheckTenantKeys(const nlohmann::json& metadata, const std::set<std::string>& allowed,
                                       const std::set<std::string, std::less<>>& inputs = {});

}  // namespace septa::tenancy::sync
