// Samples, scrapes and held entities for the usage tests, on a fixed
// start instant (2026-11-01T00:00:00Z) and an H100 node.
#pragma once

#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tenancy/usage/usage_math.h"

namespace septa::tenancy::usage::testing {

inline const TimePoint kStart = std::chrono::sys_days{std::chrono::year{2026} / 11 / 1};
inline TimePoint At(double s) { return kStart + std::chrono::milliseconds(std::llround(s * 1000)); }
inline TimeRange Between(double from_s, double to_s) { return {.start = At(from_s), .end = At(to_s)}; }

inline DcgmGpuRef Ref(const std::string& node, const std::string& uuid, std::optional<int> gi_id = std::nullopt) {
  return {.node = node,
          .uuid = uuid,
          .index = 0,
          .gi_id = gi_id,
          .mig_profile = gi_id ? "3g.40gb" : "",
          .model = "NVIDIA H100 80GB HBM3"};
}
inline DcgmSample Gr(const std::string& node, const std::string& uuid, double value,
                     std::optional<int> gi_id = std::nullopt) {
  return {.signal = DcgmSignal::kGrEngineActive,
          .scope = DcgmScope::kDevice,
          .gpu = Ref(node, uuid, gi_id),
          .pod = std::nullopt,
          .value = value,
          .line = 0};
}
inline DcgmSample Fb(const std::string& node, const std::string& uuid, double mib) {
  DcgmSample sample = Gr(node, uuid, mib);
  sample.signal = DcgmSignal::kFbUsed;
  return sample;
}
inline DcgmSample PerPod(DcgmSignal signal, const std::string& node, const std::string& uuid, const std::string& ns,
                         double value) {
  DcgmSample sample = Gr(node, uuid, value);
  sample.signal = signal;
  sample.scope = DcgmScope::kPerPod;
  sample.pod = DcgmPodRef{.namespace_name = ns, .pod = ns + "-pod", .container = "main", .vgpu = "0"};
  return sample;
}

// Scrapes of `node` every `step_s` seconds in (from_s, to_s], with the
// samples `at` gives for each instant (in seconds from kStart).
inline std::vector<NodeScrape> Every(const std::string& node, double step_s, double from_s, double to_s,
                                     const std::function<std::vector<DcgmSample>(double)>& at) {
  std::vector<NodeScrape> scrapes;
  for (double t = from_s + step_s; t <= to_s + 1e-9; t += step_s) {
    scrapes.push_back({.node = node, .at = At(t), .samples = at(t)});
  }
  return scrapes;
}

inline HeldEntity Whole(const std::string& tenant, gpu::Tier tier, const std::string& node, const std::string& uuid,
                        TimeRange held) {
  return {.holder = {.tenant = tenant, .vcluster = "dev", .tier = tier},
          .kind = HeldKind::kWholeGpu,
          .node = node,
          .gpu_uuid = uuid,
          .weight = 1,
          .reserved_memory_mib = 81920,
          .host_namespace = tenant + "-dev",
          .held = held};
}
inline HeldEntity Mig(const std::string& tenant, const std::string& node, const std::string& uuid, int gi_id,
                      int compute_slices, TimeRange held) {
  HeldEntity entity = Whole(tenant, gpu::Tier::kIsolated, node, uuid, held);
  entity.kind = HeldKind::kMigInstance;
  entity.gi_id = gi_id;
  entity.weight = compute_slices / 7.0;
  entity.reserved_memory_mib = 40448;
  return entity;
}
inline HeldEntity Share(const std::string& tenant, const std::string& node, const std::string& uuid, int milli,
                        TimeRange held) {
  HeldEntity entity = Whole(tenant, gpu::Tier::kShared, node, uuid, held);
  entity.kind = HeldKind::kShare;
  entity.milli_gpu = milli;
  entity.weight = milli / 1000.0;
  entity.reserved_memory_mib = 40960;
  return entity;
}

}  // namespace septa::tenancy::usage::testing
