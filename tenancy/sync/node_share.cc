#include "tenancy/sync/node_share.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "common/quantity.h"
#include "gpu/catalog.h"

namespace septa::tenancy::sync {
namespace {

using nlohmann::json;

constexpr std::int64_t kMilliPerMib = 1000LL * 1024 * 1024;

struct Amounts {
  std::int64_t cpu_milli = 0;     // a quantity in thousandths is millicores
  std::int64_t memory_milli = 0;  // thousandths of a byte
  // Saturating: a tenant's absurd quantities must not wrap around to small ones.
  Amounts& operator+=(const Amounts& o) {
    for (auto [to, from] : {std::pair{&cpu_milli, o.cpu_milli}, std::pair{&memory_milli, o.memory_milli}}) {
      if (__builtin_add_overflow(*to, from, to)) *to = std::numeric_limits<std::int64_t>::max();
    }
    return *this;
  }
  friend Amounts Max(const Amounts& a, const Amounts& b) {
    return {std::max(a.cpu_milli, b.cpu_milli), std::max(a.memory_milli, b.memory_milli)};
  }
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

// A container's requests, its limits where it requests nothing.
std::variant<Amounts, Refusal> ContainerAsk(const json& container, const std::string& at) {
  const json resources = container.is_object() ? container.value("resources", json::object()) : json::object();
  Amounts out;
  for (auto [resource, target] : {std::pair{"cpu", &out.cpu_milli}, std::pair{"memory", &out.memory_milli}}) {
    for (const char* kind : {"requests", "limits"}) {
      auto value =
          Quantity(resources.is_object() ? resources.value(kind, json()) : json(), resource, at + ".resources." + kind);
      if (auto* refusal = std::get_if<Refusal>(&value)) return *refusal;
      const bool given = resources.is_object() && resources.contains(kind) && resources[kind].is_object() &&
                         resources[kind].contains(resource);
      if (given) {
        *target = std::get<std::int64_t>(value);
        break;
      }
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
  Amounts regular;
  for (const char* list : {"containers", "initContainers"}) {
    if (!spec.is_object() || !spec.contains(list)) continue;
    if (!spec[list].is_array()) return Refusal{"spec." + std::string(list), "is not a list"};
  }
  const json containers = spec.value("containers", json::array());
  for (std::size_t i = 0; i < containers.size(); ++i) {
    auto ask = ContainerAsk(containers[i], "spec.containers[" + std::to_string(i) + "]");
    if (auto* refusal = std::get_if<Refusal>(&ask)) return *refusal;
    regular += std::get<Amounts>(ask);
  }
  Amounts sidecars, init_peak;
  const json inits = spec.value("initContainers", json::array());
  for (std::size_t i = 0; i < inits.size(); ++i) {
    auto ask = ContainerAsk(inits[i], "spec.initContainers[" + std::to_string(i) + "]");
    if (auto* refusal = std::get_if<Refusal>(&ask)) return *refusal;
    Amounts running = std::get<Amounts>(ask);
    if (inits[i].is_object() && inits[i].value("restartPolicy", "") == "Always") {
      sidecars += running;  // a sidecar runs from its start on
      running = sidecars;
    } else {
      running += sidecars;  // an init container runs beside the sidecars before it
    }
    init_peak = Max(init_peak, running);
  }
  regular += sidecars;
  Amounts total = Max(regular, init_peak);
  Amounts overhead;
  for (auto [resource, target] : {std::pair{"cpu", &overhead.cpu_milli}, std::pair{"memory", &overhead.memory_milli}}) {
    auto value = Quantity(spec.value("overhead", json()), resource, "spec.overhead");
    if (auto* refusal = std::get_if<Refusal>(&value)) return *refusal;
    *target = std::get<std::int64_t>(value);
  }
  total += overhead;
  // Memory rounds up to whole MiB without wrapping at the saturated top.
  const std::int64_t mib = total.memory_milli / kMilliPerMib + (total.memory_milli % kMilliPerMib != 0 ? 1 : 0);
  return PodResources{total.cpu_milli, mib};
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
