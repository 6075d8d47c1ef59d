#include "tenancy/sync/virtual_nodes.h"

#include <algorithm>
#include <array>

#include "tenancy/host/gpu_holdings.h"
#include "tenancy/host/quantity.h"

namespace septa::tenancy::sync {

using nlohmann::json;

namespace {

// Host labels that describe the machine, not the host cluster's
// bookkeeping (pools, taints' reasons, other tenants' reservations).
constexpr std::array<std::string_view, 7> kShownLabels = {"kubernetes.io/arch",
                                                          "kubernetes.io/os",
                                                          "node.kubernetes.io/instance-type",
                                                          "topology.kubernetes.io/zone",
                                                          "topology.kubernetes.io/region",
                                                          host::kGpuProductLabel,
                                                          "nvidia.com/gpu.memory"};

// What `reservation` holds on node `name` alone.
Reservation OnNode(const Reservation& reservation, std::string_view name) {
  Reservation out;
  out.tier = reservation.tier;
  for (const auto& share : reservation.shares)
    if (share.node == name) out.shares.push_back(share);
  for (const auto& mig : reservation.mig)
    if (mig.node == name) out.mig.push_back(mig);
  for (const auto& gpu : reservation.gpus)
    if (gpu.node == name) out.gpus.push_back(gpu);
  for (const auto& node : reservation.nodes)
    if (node == name) out.nodes.push_back(node);
  return out;
}

json ReadyCondition(const char* status, const char* reason, const char* message) {
  return {{"type", "Ready"}, {"status", status}, {"reason", reason}, {"message", message}};
}

json ReadyConditionOf(gpu::NodeHealth health) {
  switch (health) {
    case gpu::NodeHealth::kReady: return ReadyCondition("True", "HostNodeReady", "the host node is ready");
    case gpu::NodeHealth::kNotReady: return ReadyCondition("False", "HostNodeNotReady", "the host node is not ready");
    case gpu::NodeHealth::kGone: break;
  }
  return ReadyCondition("Unknown", "HostNodeGone", "the host node is gone");
}

const json& NestedOrEmpty(const json& object, const char* a, const char* b) {
  static const json kEmpty = json::object();
  auto outer = object.find(a);
  if (outer == object.end() || !outer->is_object()) return kEmpty;
  auto inner = outer->find(b);
  return inner != outer->end() && !inner->is_null() ? *inner : kEmpty;
}

const json& MemberOrEmpty(const json& object, const char* key) {
  static const json kEmpty = json::object();
  auto it = object.find(key);
  return it != object.end() && !it->is_null() ? *it : kEmpty;
}

}  // namespace

bool BoundToNode(const json& virtual_pod) {
  const json& name = NestedOrEmpty(virtual_pod, "spec", "nodeName");
  if (!name.is_string() || name.get_ref<const std::string&>().empty()) return false;
  const json& conditions = NestedOrEmpty(virtual_pod, "status", "conditions");
  if (!conditions.is_array()) return false;
  return std::any_of(conditions.begin(), conditions.end(), [](const json& c) {
    return c.is_object() && c.value("type", json()) == "PodScheduled" && c.value("status", json()) == "True";
  });
}

std::set<std::string> NodesInUse(const std::vector<json>& virtual_pods) {
  std::set<std::string> nodes;
  for (const json& pod : virtual_pods) {
    if (!BoundToNode(pod)) continue;
    const json& name = NestedOrEmpty(pod, "spec", "nodeName");
    if (name.is_string() && !name.get_ref<const std::string&>().empty()) nodes.insert(name.get<std::string>());
  }
  return nodes;
}

json VirtualNode(const Reservation& reservation, std::string_view name, const gpu::InventoryNode* node) {
  json labels = {{"kubernetes.io/hostname", std::string(name)}, {std::string(kVirtualNodeLabel), "true"}};
  json annotations = json::object();
  json capacity = json::object();
  json ready = ReadyCondition("Unknown", "HostNodeUnknown", "the host node is not in Septa's inventory");
  if (node != nullptr) {
    for (std::string_view key : kShownLabels) {
      if (auto it = node->labels.find(std::string(key)); it != node->labels.end())
        labels[std::string(key)] = it->second;
    }
    if (node->cpu_milli > 0) capacity["cpu"] = host::CpuQuantity(node->cpu_milli);
    if (node->memory_mib > 0) capacity["memory"] = host::MemoryQuantity(node->memory_mib);
    ready = ReadyConditionOf(node->health);
    const Reservation held = OnNode(reservation, name);
    if (held.tier == gpu::Tier::kShared && !held.shares.empty()) {
      std::set<int> gpus;
      int milli = 0;
      for (const auto& share : held.shares) {
        gpus.insert(share.gpu);
        milli += share.milli_gpu;
      }
      capacity[host::kGpuResource] = std::to_string(gpus.size());
      annotations[std::string(kGpuMilliAnnotation)] = std::to_string(milli);
    } else if (auto holdings = host::HoldingsOf(held, {*node}, false); holdings.ok()) {
      for (const auto& [resource, count] : holdings->resources) {
        if (count > 0) capacity[resource] = std::to_string(count);
      }
    }
  }
  json status = {{"conditions", json::array({ready})}};
  if (!capacity.empty()) {
    status["capacity"] = capacity;
    status["allocatable"] = capacity;
  }
  json metadata = {{"name", std::string(name)}, {"labels", labels}};
  if (!annotations.empty()) metadata["annotations"] = annotations;
  return {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", metadata}, {"spec", json::object()}, {"status", status}};
}

bool VirtualNodeUpToDate(const json& existing, const json& desired) {
  return NestedOrEmpty(existing, "metadata", "labels") == NestedOrEmpty(desired, "metadata", "labels") &&
         NestedOrEmpty(existing, "metadata", "annotations") == NestedOrEmpty(desired, "metadata", "annotations") &&
         MemberOrEmpty(existing, "spec") == MemberOrEmpty(desired, "spec") &&
         MemberOrEmpty(existing, "status") == MemberOrEmpty(desired, "status");
}

}  // namespace septa::tenancy::sync
