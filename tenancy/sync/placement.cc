#include "tenancy/sync/placement.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "common/documents.h"
#include "tenancy/sync/bookkeeping.h"

namespace septa::tenancy::sync {
namespace {

using nlohmann::json;

bool Ready(const VirtualClusterView& vcluster, const std::string& node) {
  for (const gpu::InventoryNode& n : vcluster.nodes) {
    if (n.name == node) return n.health == gpu::NodeHealth::kReady;
  }
  return true;  // a view without the node says nothing against it
}

// Free units per node (or per node and GPU): the best fit among those with
// at least `want`, or the refusal naming what is free of what is held.
template <typename Key>
struct Tally {
  std::map<Key, std::int64_t> held;
  std::map<Key, std::int64_t> used;
  std::int64_t Free(const Key& key) const {
    auto it = used.find(key);
    return held.at(key) - (it == used.end() ? 0 : it->second);
  }
  std::optional<Key> BestFit(std::int64_t want) const {
    std::optional<Key> best;
    for (const auto& [key, count] : held) {
      const std::int64_t free = Free(key);
      if (free >= want && (!best || free < Free(*best))) best = key;
    }
    return best;
  }
  std::int64_t TotalHeld() const {
    std::int64_t total = 0;
    for (const auto& [key, count] : held) total += count;
    return total;
  }
  std::int64_t TotalFree() const {
    std::int64_t total = 0;
    for (const auto& [key, count] : held) total += std::max<std::int64_t>(Free(key), 0);
    return total;
  }
  std::int64_t MostFree() const {
    std::int64_t most = 0;
    for (const auto& [key, count] : held) most = std::max(most, Free(key));
    return most;
  }
  // "<want> <what> requested, the reservation has F free of H[, at most M <where>]".
  Refusal Refuse(const std::string& field, std::int64_t want, const std::string& what, const std::string& where) const {
    std::string message = std::to_string(want) + " " + what + " requested, the reservation has " +
                          std::to_string(TotalFree()) + " free of " + std::to_string(TotalHeld());
    if (TotalFree() >= want) message += ", at most " + std::to_string(MostFree()) + " " + where;
    return Refusal{field, message};
  }
};

std::variant<PodAssignment, Refusal> PlaceMig(const VirtualClusterView& vcluster, const GpuAsk& ask,
                                              const std::vector<PodAssignment>& others) {
  std::map<std::string, int> slices;  // profile -> memory slices of one instance
  for (const ReservedMig& mig : vcluster.reservation.mig) slices[mig.profile] = mig.slices;
  std::vector<std::string> order;
  if (!ask.mig_profile.empty()) {
    order.push_back(ask.mig_profile);
  } else {  // the largest profile with a free instance
    for (const auto& [profile, n] : slices) order.push_back(profile);
    std::stable_sort(order.begin(), order.end(),
                     [&slices](const std::string& a, const std::string& b) { return slices[a] > slices[b]; });
  }
  if (order.empty()) return Refusal{ask.field, "the reservation holds no MIG instance"};
  std::optional<Refusal> first_refusal;
  for (const std::string& profile : order) {
    Tally<std::string> tally;
    for (const ReservedMig& mig : vcluster.reservation.mig) {
      if (mig.profile == profile && Ready(vcluster, mig.node)) ++tally.held[mig.node];
    }
    for (const PodAssignment& other : others) {
      if (other.mig_profile == profile) tally.used[other.node] += other.mig_count;
    }
    if (tally.held.empty()) continue;
    if (auto node = tally.BestFit(ask.count)) {
      PodAssignment out;
      out.node = *node;
      out.mig_profile = profile;
      out.mig_count = static_cast<int>(ask.count);
      return out;
    }
    if (!first_refusal) first_refusal = tally.Refuse(ask.field, ask.count, profile + " instances", "on one node");
  }
  return first_refusal ? *first_refusal : Refusal{ask.field, "the reservation holds no Ready " + order.front()};
}

std::variant<PodAssignment, Refusal> PlaceWholeGpus(const VirtualClusterView& vcluster, const GpuAsk& ask,
                                                    const std::vector<PodAssignment>& others) {
  std::map<std::string, std::set<int>> free;
  Tally<std::string> tally;
  for (const ReservedGpu& g : vcluster.reservation.gpus) {
    if (!Ready(vcluster, g.node)) continue;
    free[g.node].insert(g.gpu);
    ++tally.held[g.node];
  }
  for (const PodAssignment& other : others) {
    for (int g : other.gpus) {
      if (free.contains(other.node) && free[other.node].erase(g) > 0) ++tally.used[other.node];
    }
  }
  const auto node = tally.BestFit(ask.count);
  if (!node) return tally.Refuse(ask.field, ask.count, "GPUs", "on one node");
  PodAssignment out;
  out.node = *node;
  for (int g : free[*node]) {
    if (static_cast<std::int64_t>(out.gpus.size()) < ask.count) out.gpus.push_back(g);
  }
  return out;
}

std::variant<PodAssignment, Refusal> PlaceShare(const VirtualClusterView& vcluster, const GpuAsk& ask,
                                                const std::vector<PodAssignment>& others) {
  using Gpu = std::pair<std::string, int>;
  Tally<Gpu> milli;
  Tally<Gpu> memory;
  for (const ReservedShare& share : vcluster.reservation.shares) {
    if (!Ready(vcluster, share.node)) continue;
    milli.held[{share.node, share.gpu}] += share.milli_gpu;
    memory.held[{share.node, share.gpu}] += share.gpu_memory_mib;
  }
  for (const PodAssignment& other : others) {
    for (int g : other.gpus) {
      milli.used[{other.node, g}] += other.milli_gpu;
      memory.used[{other.node, g}] += other.gpu_memory_mib;
    }
  }
  // A share holds milli-GPU and (where the pool tracks it) GPU memory in
  // proportion: what a pod asks of one is charged of the other alike.
  std::optional<Gpu> best;
  int best_milli = 0;
  std::int64_t best_mib = 0;
  for (const auto& [gpu, held_milli] : milli.held) {
    const std::int64_t held_mib = memory.held.at(gpu);
    int want = ask.milli_gpu;
    std::int64_t want_mib = ask.gpu_memory_mib;
    if (ask.gpu_memory_mib > 0) {
      if (held_mib <= 0) continue;
      want = static_cast<int>((ask.gpu_memory_mib * held_milli + held_mib - 1) / held_mib);
    } else if (held_mib > 0 && held_milli > 0) {
      want_mib = (static_cast<std::int64_t>(ask.milli_gpu) * held_mib + held_milli - 1) / held_milli;
    }
    if (milli.Free(gpu) < want || memory.Free(gpu) < want_mib) continue;
    if (!best || milli.Free(gpu) - want < milli.Free(*best) - best_milli) {
      best = gpu;
      best_milli = want;
      best_mib = want_mib;
    }
  }
  if (!best) {
    return ask.gpu_memory_mib > 0 ? memory.Refuse(ask.field, ask.gpu_memory_mib, "MiB of GPU memory", "on one GPU")
                                  : milli.Refuse(ask.field, ask.milli_gpu, "milli-GPU", "on one GPU");
  }
  PodAssignment out;
  out.node = best->first;
  out.gpus = {best->second};
  out.milli_gpu = best_milli;
  out.gpu_memory_mib = best_mib;
  return out;
}

std::variant<PodAssignment, Refusal> PlaceOnNodes(const VirtualClusterView& vcluster, const GpuAsk& ask,
                                                  const std::vector<PodAssignment>& others) {
  Tally<std::string> tally;
  for (const std::string& node : vcluster.reservation.nodes) {
    for (const gpu::InventoryNode& n : vcluster.nodes) {
      if (n.name == node && n.health == gpu::NodeHealth::kReady) tally.held[node] = static_cast<int>(n.gpus.size());
    }
  }
  for (const PodAssignment& other : others) {
    if (tally.held.contains(other.node)) tally.used[other.node] += other.whole_gpus;
  }
  const auto node = tally.BestFit(ask.count);
  if (!node) return tally.Refuse(ask.field, ask.count, "GPUs", "on one node");
  PodAssignment out;
  out.node = *node;
  out.whole_gpus = static_cast<int>(ask.count);
  return out;
}

}  // namespace

namespace {

std::variant<PodAssignment, Refusal> PlaceOnTier(const VirtualClusterView& vcluster, const GpuAsk& ask,
                                                 const std::vector<PodAssignment>& others) {
  switch (vcluster.tier.gpu_sharing) {
    case gpu::Tier::kIsolated: return PlaceMig(vcluster, ask, others);
    case gpu::Tier::kDedicated: return PlaceWholeGpus(vcluster, ask, others);
    case gpu::Tier::kShared: return PlaceShare(vcluster, ask, others);
    case gpu::Tier::kExclusive: return PlaceOnNodes(vcluster, ask, others);
  }
  return Refusal{ask.field, "unknown tier"};
}

std::string Cpus(std::int64_t milli) {
  return milli % 1000 == 0 ? std::to_string(milli / 1000) : std::to_string(milli) + "m";
}

// Why `requests` do not fit on `node` beside the reservation's other pods
// there; nullopt when they do (or the view does not know the node).
std::optional<Refusal> NoRoomOn(const VirtualClusterView& vcluster, const std::string& node,
                                const PodResources& requests, const std::vector<PodAssignment>& others) {
  auto it = std::find_if(vcluster.nodes.begin(), vcluster.nodes.end(),
                         [&](const gpu::InventoryNode& n) { return n.name == node; });
  // A node the view does not know, or whose allocatable was never recorded, limits nothing.
  if (it == vcluster.nodes.end() || it->cpu_milli <= 0 || it->memory_mib <= 0) return std::nullopt;
  const NodeShare share = ShareOf(*it, vcluster.reservation);
  PodResources used;
  for (const PodAssignment& other : others) {
    if (other.node != node) continue;
    used.cpu_milli += other.cpu_milli;
    used.memory_mib += other.memory_mib;
  }
  const auto over = [&](std::int64_t want, std::int64_t have, std::int64_t in_use) {
    return want > have - std::min(have, in_use);
  };
  const std::string why =
      "; a GPU node's CPU and memory are shared among its GPUs' holders in proportion to "
      "what they hold (" +
      share.held + " of " + node + ")";
  if (over(requests.cpu_milli, share.share.cpu_milli, used.cpu_milli)) {
    return Refusal{"spec.containers[*].resources.requests[cpu]",
                   Cpus(requests.cpu_milli) + " CPU requested, the reservation's share of node " + node + " is " +
                       Cpus(share.share.cpu_milli) + " CPU, " + Cpus(used.cpu_milli) + " of it in use" + why};
  }
  if (over(requests.memory_mib, share.share.memory_mib, used.memory_mib)) {
    return Refusal{"spec.containers[*].resources.requests[memory]",
                   std::to_string(requests.memory_mib) + " MiB of memory requested, the reservation's share of node " +
                       node + " is " + std::to_string(share.share.memory_mib) + " MiB, " +
                       std::to_string(used.memory_mib) + " MiB of it in use" + why};
  }
  return std::nullopt;
}

}  // namespace

std::variant<PodAssignment, Refusal> PlaceInReservation(const VirtualClusterView& vcluster, const GpuAsk& ask,
                                                        const PodResources& requests,
                                                        const std::vector<PodAssignment>& others) {
  if (ask.Empty()) return PodAssignment{};
  if (vcluster.reservation.releasing) {
    return Refusal{ask.field, "the virtual cluster's reservation is being released; no GPU pod starts"};
  }
  // The tier's best fit, then the next best while the node it chose has no
  // room for the pod's CPU or memory (such a node is set aside as if not Ready).
  VirtualClusterView candidates = vcluster;
  std::optional<Refusal> first_short;
  for (;;) {
    auto placed = PlaceOnTier(candidates, ask, others);
    if (auto* refusal = std::get_if<Refusal>(&placed)) return first_short ? *first_short : *refusal;
    PodAssignment assignment = std::get<PodAssignment>(std::move(placed));
    auto short_of_room = NoRoomOn(vcluster, assignment.node, requests, others);
    if (!short_of_room) {
      assignment.cpu_milli = requests.cpu_milli;
      assignment.memory_mib = requests.memory_mib;
      return assignment;
    }
    if (!first_short) first_short = std::move(short_of_room);
    for (gpu::InventoryNode& n : candidates.nodes) {
      if (n.name == assignment.node) n.health = gpu::NodeHealth::kNotReady;
    }
  }
}

std::string AssignmentText(const PodAssignment& a) {
  return json{{"node", a.node},
              {"gpus", a.gpus},
              {"migProfile", a.mig_profile},
              {"migCount", a.mig_count},
              {"milliGpu", a.milli_gpu},
              {"gpuMemoryMiB", a.gpu_memory_mib},
              {"wholeGpus", a.whole_gpus},
              {"cpuMilli", a.cpu_milli},
              {"memoryMiB", a.memory_mib}}
      .dump();
}

std::optional<PodAssignment> AssignmentOf(const json& host_pod) {
  const json annotations = host_pod.value("metadata", json::object()).value("annotations", json::object());
  auto it = annotations.find(kAssignmentAnnotation);
  if (it == annotations.end() || !it->is_string()) return std::nullopt;
  auto parsed = ParseJson(it->get<std::string>());
  if (!parsed.ok() || !parsed->is_object()) return std::nullopt;
  const json& a = *parsed;
  try {
    PodAssignment out;
    out.node = a.at("node").get<std::string>();
    out.gpus = a.at("gpus").get<std::vector<int>>();
    out.mig_profile = a.at("migProfile").get<std::string>();
    out.mig_count = a.at("migCount").get<int>();
    out.milli_gpu = a.at("milliGpu").get<int>();
    out.gpu_memory_mib = a.at("gpuMemoryMiB").get<std::int64_t>();
    out.whole_gpus = a.at("wholeGpus").get<int>();
    // Absent from pods placed before node shares were counted.
    out.cpu_milli = a.value("cpuMilli", std::int64_t{0});
    out.memory_mib = a.value("memoryMiB", std::int64_t{0});
    if (out.node.empty() || out.mig_count < 0 || out.milli_gpu < 0 || out.gpu_memory_mib < 0 || out.whole_gpus < 0 ||
        out.cpu_milli < 0 || out.memory_mib < 0)
      return std::nullopt;
    return out;
  } catch (const json::exception&) {
    return std::nullopt;  // edited by hand: the pod records nothing we trust
  }
}

}  // namespace septa::tenancy::sync
