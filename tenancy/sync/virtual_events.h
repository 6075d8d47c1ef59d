// Events of synced pods, copied up (../shared/docs/SYNCER-FACTS.md "Status
// and deletion": events flow host -> virtual for synced objects): the
// scheduler's and kubelet's events about a host pod, shown on its virtual
// pod under its virtual name, with no host name left in them. Pure: the
// syncer writes what these return.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "tenancy/sync/bookkeeping.h"

namespace septa::tenancy::sync {

// On every virtual event the syncer writes: the UID of the host event it
// was copied from. The syncer updates only events that carry it.
inline constexpr std::string_view kHostEventUidAnnotation = "septa.dev/host-event-uid";

// The virtual copy of `host_event`, an event about host pod `host_pod_name`
// in `host_namespace`, which was written from virtual pod `pod`: named
// after the virtual pod (the host name's suffix kept, so repeated events
// stay one object whose count grows), its involvedObject the virtual pod,
// the host pod's names in its message replaced by the virtual ones; its
// reason, type, count, times and source kept. nullopt for an event that is
// not about that pod.
std::optional<nlohmann::json> VirtualEvent(const nlohmann::json& host_event, std::string_view host_namespace,
                                           std::string_view host_pod_name, const VirtualRef& pod);

// Whether `existing` (as read back) shows what `desired` does.
bool VirtualEventUpToDate(const nlohmann::json& existing, const nlohmann::json& desired);

}  // namespace septa::tenancy::sync
