#include "tenancy/sync/gpu_request.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "common/pod_requests.h"
#include "tenancy/host/gpu_holdings.h"
#include "tenancy/sync/bookkeeping.h"

namespace septa::tenancy::sync {
namespace {

using nlohmann::json;

constexpr std::string_view kGpuResource = "nvidia.com/gpu";

// A non-negative integer quantity ("2" or 2); -1 when it is not one.
std::int64_t Count(const json& value) {
  if (value.is_number_integer()) return value.get<std::int64_t>();
  if (!value.is_string()) return -1;
  const std::string text = value.get<std::string>();
  if (text.empty() || text.size() > 9 || !std::all_of(text.begin(), text.end(), ::isdigit)) return -1;
  return std::stoll(text);
}

// "0.25" -> 250 milli; -1 unless 0 < value <= 1 with at most 3 decimals.
int Milli(const std::string& text) {
  if (text == "1") return 1000;
  if (text.size() < 3 || text.size() > 5 || text.substr(0, 2) != "0.") return -1;
  int milli = 0;
  for (std::size_t i = 2; i < 5; ++i) {
    const char c = i < text.size() ? text[i] : '0';
    if (!std::isdigit(static_cast<unsigned char>(c))) return -1;
    milli = milli * 10 + (c - '0');
  }
  return milli > 0 ? milli : -1;
}

std::set<std::string> HeldProfiles(const Reservation& reservation) {
  std::set<std::string> profiles;
  for (const ReservedMig& mig : reservation.mig) profiles.insert(mig.profile);
  return profiles;
}

std::string ListedOrNone(const std::set<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out.empty() ? "none" : out;
}

std::string Annotation(const json& pod, std::string_view key) {
  const json annotations = pod.value("metadata", json::object()).value("annotations", json::object());
  auto it = annotations.find(key);
  return it != annotations.end() && it->is_string() ? it->get<std::string>() : "";
}

// The held profile whose resource is `resource`, or "".
std::string ProfileOf(const std::string& resource, const std::set<std::string>& held) {
  for (const std::string& profile : held) {
    if (host::MigResourceName(profile) == resource) return profile;
  }
  return "";
}

std::optional<Refusal> CheckResource(const ContainerGpuAsk& ask, const VirtualClusterView& vcluster) {
  if (ask.resource == kGpuResource) return std::nullopt;
  const std::string tier = std::string(gpu::TierName(vcluster.tier.gpu_sharing));
  if (ask.resource.rfind("nvidia.com/mig-", 0) == 0) {
    if (vcluster.tier.gpu_sharing != gpu::Tier::kIsolated) {
      return Refusal{ask.field, "the " + tier + " tier holds no MIG slices; ask for nvidia.com/gpu"};
    }
    const auto held = HeldProfiles(vcluster.reservation);
    if (ProfileOf(ask.resource, held).empty()) {
      return Refusal{ask.field, "the reservation holds no " +
                                    ask.resource.substr(std::string_view("nvidia.com/mig-").size()) +
                                    " instance (it holds " + ListedOrNone(held) + ")"};
    }
    return std::nullopt;
  }
  return Refusal{ask.field, ask.resource + " is not a GPU resource of the " + tier + " tier; ask for nvidia.com/gpu"};
}

// What every node has and a pod may ask for besides its GPUs. Any other
// extended resource (amd.com/gpu, rdma/hca, a host device plugin's) is a
// device outside the reservation, which the host would hand out unpinned.
bool IsBaseResource(const std::string& name) {
  return name == "cpu" || name == "memory" || name == "ephemeral-storage" || name.starts_with("hugepages-");
}

std::string NotGranted(const std::string& container, const std::string& resource, const VirtualClusterView& vcluster) {
  const bool isolated = vcluster.tier.gpu_sharing == gpu::Tier::kIsolated;
  return "container \"" + container + "\" asks for " + resource + ", which the " +
         std::string(gpu::TierName(vcluster.tier.gpu_sharing)) +
         " tier does not grant: a pod may ask for cpu, memory, ephemeral-storage, hugepages-<size> and " +
         (isolated ? "nvidia.com/gpu or nvidia.com/mig-<held profile>" : "nvidia.com/gpu");
}

}  // namespace

std::variant<GpuAsk, Refusal> ReadGpuAsk(const json& pod, const VirtualClusterView& vcluster,
                                         const SyncSettings& settings) {
  GpuAsk ask;
  const json& spec = pod.at("spec");
  if (auto claims = spec.find("resourceClaims"); claims != spec.end() && !claims->is_null() && !claims->empty()) {
    return Refusal{"spec.resourceClaims",
                   "the tier grants devices through its reservation only; dynamic resource "
                   "claims are not synced"};
  }
  // Each container's GPUs, counted as the host's scheduler counts them.
  std::vector<ContainerAmounts<std::int64_t>> gpus;
  for (const char* list : {"containers", "initContainers"}) {
    const bool init = std::string_view(list) == "initContainers";
    const json containers = spec.value(list, json::array());
    for (std::size_t i = 0; i < containers.size(); ++i) {
      const json resources = containers[i].value("resources", json::object());
      ContainerAmounts<std::int64_t> held{RoleOf(init, containers[i].value("restartPolicy", "")), {}};
      std::set<std::string> seen;
      for (const char* kind : {"limits", "requests"}) {
        const json quantities = resources.value(kind, json::object());
        for (const auto& [name, value] : quantities.items()) {
          if (!seen.insert(name).second) continue;
          const std::string field =
              "spec." + std::string(list) + "[" + std::to_string(i) + "].resources." + kind + "[" + name + "]";
          if (name.rfind("nvidia.com/", 0) != 0) {
            if (IsBaseResource(name)) continue;
            return Refusal{field, NotGranted(containers[i].value("name", ""), name, vcluster)};
          }
          ContainerGpuAsk c{list, i, name, Count(value), field};
          if (c.count < 0) return Refusal{c.field, "must be a whole number"};
          if (auto refusal = CheckResource(c, vcluster)) return *refusal;
          if (c.count == 0) continue;
          held.amounts["gpu"] += c.count;
          ask.containers.push_back(std::move(c));
        }
      }
      gpus.push_back(std::move(held));
    }
  }
  ask.count = EffectivePodAmounts(gpus)["gpu"];
  const std::string profile = Annotation(pod, kMigProfileAnnotation);
  const std::string fraction = Annotation(pod, kGpuFractionAnnotation);
  const std::string memory = Annotation(pod, kGpuMemoryAnnotation);
  const auto tier = vcluster.tier.gpu_sharing;
  const std::string tier_name = std::string(gpu::TierName(tier));
  if (!profile.empty() && tier != gpu::Tier::kIsolated) {
    return Refusal{"metadata.annotations[" + std::string(kMigProfileAnnotation) + "]",
                   "the " + tier_name + " tier holds no MIG slices"};
  }
  if ((!fraction.empty() || !memory.empty()) && tier != gpu::Tier::kShared) {
    return Refusal{
        "metadata.annotations[" + std::string(fraction.empty() ? kGpuMemoryAnnotation : kGpuFractionAnnotation) + "]",
        "fractions are for the shared tier; the " + tier_name + " tier hands out whole units"};
  }
  if (ask.Empty()) return ask;
  ask.field = ask.containers.front().field;

  if (tier == gpu::Tier::kIsolated) {
    const auto held = HeldProfiles(vcluster.reservation);
    std::set<std::string> asked;
    for (const ContainerGpuAsk& c : ask.containers) {
      if (c.resource != kGpuResource) asked.insert(ProfileOf(c.resource, held));
    }
    if (!profile.empty()) {
      if (!held.contains(profile)) {
        return Refusal{"metadata.annotations[" + std::string(kMigProfileAnnotation) + "]",
                       "the reservation holds no " + profile + " instance (it holds " + ListedOrNone(held) + ")"};
      }
      asked.insert(profile);
    }
    if (asked.size() > 1) {
      return Refusal{ask.field, "one pod uses one MIG profile; it asks for " + ListedOrNone(asked)};
    }
    if (!asked.empty()) ask.mig_profile = *asked.begin();
  }
  if (tier == gpu::Tier::kShared) {
    if (ask.count > 1 || ask.containers.size() > 1) {
      return Refusal{ask.field, "the shared tier hands a pod part of one GPU; it asks for " +
                                    std::to_string(ask.count) + " in " + std::to_string(ask.containers.size()) +
                                    " containers"};
    }
    if (!memory.empty()) {
      const std::int64_t mib = Count(json(memory));
      if (mib <= 0) {
        return Refusal{"metadata.annotations[" + std::string(kGpuMemoryAnnotation) + "]",
                       "must be a whole number of MiB above 0, not \"" + memory + "\""};
      }
      ask.gpu_memory_mib = mib;
    } else if (!fraction.empty()) {
      ask.milli_gpu = Milli(fraction);
      if (ask.milli_gpu <= 0) {
        return Refusal{
            "metadata.annotations[" + std::string(kGpuFractionAnnotation) + "]",
            "must be a decimal above 0 and at most 1 with at most 3 digits (\"0.25\"), not \"" + fraction + "\""};
      }
    } else {
      ask.milli_gpu = settings.default_fraction_milli;
    }
  }
  return ask;
}

}  // namespace septa::tenancy::sync
