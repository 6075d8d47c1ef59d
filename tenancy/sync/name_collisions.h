// HostObjectName is vCluster's SafeConcat and not injective: "q-x-r" in
// namespace "s" and "q" in "r-x-s" both map to "q-x-r-x-s-x-<vcluster>"
// (and a hashed name may equal a plain one). The names stay vCluster's;
// instead the syncer never writes over or deletes a host object that is
// another virtual object's copy, and refuses the newcomer while that one
// is there (../shared/docs/HOSTILE-TENANT-FINDINGS.md M3).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "tenancy/sync/bookkeeping.h"
#include "tenancy/sync/pod_translation.h"

namespace septa::tenancy::sync {

// The virtual object a host object was written from, with its kind.
struct HostNameHolder {
  std::string kind;  // kVirtualKindAnnotation: "Pod", "ConfigMap", "Secret", "Service", ...
  VirtualRef ref;
  bool operator==(const HostNameHolder&) const = default;
};

// The virtual object whose copy `host_object` is, when that is not the
// `kind` object `ns`/`name` whose host name it has: nullopt when it is that
// object's copy (of whatever UID: an earlier object of that name is stale
// and replaced) or records no virtual object of `tenant`/`vcluster` (which
// every caller leaves alone anyway).
std::optional<HostNameHolder> OtherHolder(const nlohmann::json& host_object, std::string_view kind, std::string_view ns,
                                          std::string_view name, std::string_view tenant, std::string_view vcluster);

// Why the `kind` object `ns`/`name` gets no copy: its host name `host_name`
// is `holder`'s copy (field metadata.name).
Refusal HostNameTaken(std::string_view kind, std::string_view ns, std::string_view name, std::string_view host_name,
                      const HostNameHolder& holder);

// Why the `kind` object `ns`/`name` gets no copy: a pod of another
// namespace, `user_ns`/`user_pod`, uses the host name `host_name` for its
// own `user_name` (field metadata.name).
Refusal HostNameUsed(std::string_view kind, std::string_view ns, std::string_view name, std::string_view host_name,
                     std::string_view user_ns, std::string_view user_pod, std::string_view user_name);

// Why a pod does not run: the `kind` object `name` of its namespace `ns`
// that it uses cannot be copied (`why`, one of the refusals above); field spec.
Refusal ReferenceRefused(std::string_view kind, std::string_view ns, std::string_view name, const Refusal& why);

// The name in `virtual_pod`'s namespace of the `kind` object ("ConfigMap",
// "Secret", "PersistentVolumeClaim") it uses whose host name in virtual
// cluster `vcluster` is `host_name`; "" when it uses none.
std::string ReferenceWithHostName(const nlohmann::json& virtual_pod, std::string_view kind, std::string_view host_name,
                                  std::string_view vcluster);

}  // namespace septa::tenancy::sync
