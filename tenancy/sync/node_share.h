// How a GPU node's CPU and memory are shared among its GPUs' holders
// (issue 28, H2). A reservation is the admission to a GPU node: a tenant's
// pod that uses no GPU runs on the platform's CPU pool (tier_patches.h), and
// its GPU pods on a GPU node may together request at most the tenant's
// share of that node's allocatable CPU and memory, in proportion to what
// it holds of the node's GPUs: whole GPUs of all GPUs, MIG memory slices of
// all the node's memory slices, milli-GPU of the node's time-shared GPUs,
// all of an exclusive node. So a tenant holding one of eight GPUs cannot
// take the node's CPU or memory from the holders of the other seven, whose
// pods would otherwise stay Pending on the node their reservation names.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <variant>

#include "gpu/inventory.h"
#include "tenancy/reservation.h"
#include "tenancy/sync/pod_translation.h"

namespace septa::tenancy::sync {

struct PodResources {
  std::int64_t cpu_milli = 0;
  std::int64_t memory_mib = 0;  // rounded up
  bool operator==(const PodResources&) const = default;
};

// The CPU and memory the scheduler reserves for `pod`: its effective
// requests by Kubernetes' rule (common/pod_requests.h, sidecars included)
// plus its overhead. A container's request defaults to its limit, as the
// API server does. A value that is not a quantity is a refusal naming its
// field.
std::variant<PodResources, Refusal> EffectiveRequests(const nlohmann::json& pod);

// `reservation`'s share of `node`'s allocatable CPU and memory (rounded
// down), and the fraction it is of, for messages ("1 of 8 GPUs").
struct NodeShare {
  PodResources share;
  std::string held;
};
NodeShare ShareOf(const gpu::InventoryNode& node, const Reservation& reservation);

}  // namespace septa::tenancy::sync
