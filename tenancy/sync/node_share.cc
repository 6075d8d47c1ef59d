#include "tenancy/sync/node_share.h"

#include <algorithm>
#include <limits>
#include <map>
#include <string_view>
#include <utility>
#include <vector>

#include "common/pod_requests.h"
#include "common/quantity.h"
#include "gpu/catalog.h"

namespace septa::tenancy::sync {
namespace {

using nlohmann::json;

constexpr std::int64_t kMilliPerMib = 1000LL * 1024 * 1024;

// Saturating: a tenant's absurd quantities must not wrap around to small ones.
struct Saturating {
  std::int64_t value = 0;
  Saturating& operator+=(const Saturating& o) {
    if (__builtin_add_overflow(value, o.value, &value)) value = std::numeric_limits<std::int64_t>::max();
    return *this;
  }
  bool operator<(const Saturating& o) const { return value < o.value; }
};

// One resource of a resource map (requests, limits, overhead): 0 when absent.
std::variant<std::int64_t, Refusal> Quantity(const json& map, const char* resource, const std::string& field) {
  if (!map.is_object()) return std::int64_t{0};
  auto it = map.find(resource);
  if (it == map.end() || it->is_null()) return std::int64_t{0};
  auto parsed = it->is_string()   ? ParseQuantityMilli(it->get<std::string>())
                : it->is_number() ? ParseQuantityMilli(it->dump())
                                  : Result<long long>(InvalidArgument("not a quantity"));
  if (!parsed.ok()) return Refusal{field + "[" + resource + "]", "is not a quantity"};
  return static_cast<std::int64_t>(*parsed);
}

// A container's CPU and memory requests, its limits where it requests nothing.
std::variant<ContainerAmounts<Saturating>, Refusal> ContainerAsk(const json& container, ContainerRole role,
                                                                 const std::string& at) {
  const json resources = container.is_object() ? container.value("resources", json::object()) : json::object();
  ContainerAmounts<Saturating> out{role, {}};
  for (const char* resource : {"cpu", "memory"}) {
    for (const char* kind : {"requests", "limits"}) {
      const json map = resources.is_object() ? resources.value(kind, json()) : json();
      if (!map.is_object() || !map.contains(resource)) continue;
      auto value = Quantity(map, resource, at + ".resources." + kind);
      if (auto* refusal = std::get_if<Refusal>(&value)) return *refusal;
      out.amounts[resource] = Saturating{std::get<std::int64_t>(value)};
      break;
    }
  }
  return out;
}

std::int64_t FloorShare(std::int64_t total, std::int64_t part, std::int64_t whole) {
  return whole <= 0 ? 0 : static_cast<std::int64_t>((static_cast<__int128>(total) * part) / whole);
}

}  // namespace

std::variant<PodResources, Refusal> EffectiveRequests(const json& pod) {
  const json spec = pod.is_object() ? pod.value("spec", json::object()) : json::object();
  std::vector<ContainerAmounts<Saturating>> containers;
  for (const char* list : {"containers", "initContainers"}) {
    const json entries = spec.is_object() ? spec.value(list, json::array()) : json::array();
    if (!entries.is_array()) return Refusal{"spec." + std::string(list), "is not a list"};
    const bool init = std::string_view(list) == "initContainers";
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const std::string restart = entries[i].is_object() ? entries[i].value("restartPolicy", "") : "";
      auto ask =
          ContainerAsk(entries[i], RoleOf(init, restart), "spec." + std::string(list) + "[" + std::to_string(i) + "]");
      if (auto* refusal = std::get_if<Refusal>(&ask)) return *refusal;
      containers.push_back(std::get<ContainerAmounts<Saturating>>(std::move(ask)));
    }
  }
  std::map<std::string, Saturating> total = EffectivePodAmounts(containers);
  for (const char* resource : {"cpu", "memory"}) {
    auto overhead = Quantity(spec.is_object() ? spec.value("overhead", json()) : json(), resource, "spec.overhead");
    if (auto* refusal = std::get_if<Refusal>(&overhead)) return *refusal;
    total[resource] += Saturating{std::get<std::int64_t>(overhead)};
  }
  // A quantity in thousandths is millicores of CPU and thousandths of a byte
  // of memory; memory rounds up to whole MiB.
  const std::int64_t memory = total["memory"].value;
  return PodResources{total["cpu"].value, memory / kMilliPerMib + (memory % kMilliPerMib != 0 ? 1 : 0)};
}

NodeShare ShareOf(const gpu::InventoryNode& node, const Reservation& reservation) {
  std::int64_t part = 0, whole = 0;
  std::string unit;
  switch (reservation.tier) {
    case gpu::Tier::kExclusive:
      part = whole = 1;
      unit = "the whole node";
      break;
    case gpu::Tier::kDedicated:
      whole = static_cast<std::int64_t>(node.gpus.size());
      part = std::count_if(reservation.gpus.begin(), reservation.gpus.end(),
                           [&](const ReservedGpu& g) { return g.node == node.name; });
      unit = "GPUs";
      break;
    case gpu::Tier::kIsolated:
      for (const gpu::InventoryGpu& g : node.gpus) {
        const gpu::GpuModel* model = gpu::Catalog::Default().Find(g.model);
        whole += model && model->memory_slices > 0 ? model->memory_slices : 1;
      }
      for (const ReservedMig& m : reservation.mig) {
        if (m.node == node.name) part += m.slices;
      }
      unit = "MIG memory slices";
      break;
    case gpu::Tier::kShared:
      whole = 1000 * static_cast<std::int64_t>(node.gpus.size());
      for (const ReservedShare& s : reservation.shares) {
        if (s.node == node.name) part += s.milli_gpu;
      }
      unit = "milli-GPU";
      break;
  }
  NodeShare out;
  out.share.cpu_milli = FloorShare(node.cpu_milli, part, whole);
  out.share.memory_mib = FloorShare(node.memory_mib, part, whole);
  out.held = reservation.tier == gpu::Tier::kExclusive
                 ? unit
                 : std::to_string(part) + " of " + std::to_string(whole) + " " + unit;
  return out;
}

}  // namespace septa::tenancy::sync
