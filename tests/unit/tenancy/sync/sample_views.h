// Virtual clusters of each trust tier on a small inventory (two H100 nodes),
// and a pod builder: the inputs of the translation tests and golden files.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "tenancy/host/names.h"
#include "tenancy/sync/pod_translation.h"

namespace septa::tenancy::sync {

// Readable gtest failures.
inline void PrintTo(const Refusal& r, std::ostream* out) { *out << r.field << ": " << r.message; }

inline gpu::InventoryNode SampleNode(const std::string& name, int gpus) {
  gpu::InventoryNode node;
  node.name = name;
  node.cpu_milli = 192'000;  // a p5.48xlarge: 192 vCPUs, 2 TiB
  node.memory_mib = 2 * 1024 * 1024;
  node.labels = {{"kubernetes.io/hostname", name}};
  for (int i = 0; i < gpus; ++i)
    node.gpus.push_back({"H100-80GB", i, "GPU-" + name + "-" + std::to_string(i), false, {}});
  return node;
}

inline VirtualClusterView SampleView(gpu::Tier tier) {
  VirtualClusterView v;
  v.tenant = "acme";
  v.vcluster = "train";
  v.host_namespace = host::HostNamespaceName("acme", "train");
  v.tier.name = std::string(gpu::TierName(tier));
  v.tier.gpu_sharing = tier;
  v.psa_level = "baseline";
  v.reservation.tenant = "acme";
  v.reservation.vcluster = "train";
  v.reservation.tier = tier;
  v.nodes = {SampleNode("h100-0", 8), SampleNode("h100-1", 8)};
  switch (tier) {
    case gpu::Tier::kShared:
      v.tier.runtime_class = "nvidia";
      v.tier.credential_ttl_max_seconds = 86400;
      v.reservation.shares = {{"h100-0", 0, 500, 40960}, {"h100-0", 1, 250, 20480}};
      break;
    case gpu::Tier::kIsolated:
      v.tier.runtime_class = "nvidia";
      v.tier.credential_ttl_max_seconds = 8 * 3600;
      v.reservation.mig = {
          {"h100-0", 0, "3g.40gb", 0, 4}, {"h100-0", 0, "1g.10gb", 4, 1}, {"h100-1", 2, "3g.40gb", 4, 4}};
      break;
    case gpu::Tier::kDedicated:
      v.tier.runtime_class = "kata-nvidia-gpu";
      v.tier.credential_ttl_max_seconds = 3600;
      v.reservation.gpus = {{"h100-0", 2}, {"h100-0", 3}, {"h100-1", 5}};
      break;
    case gpu::Tier::kExclusive:
      v.tier.runtime_class = "kata-nvidia-gpu";
      v.tier.credential_ttl_max_seconds = 900;
      v.psa_level = "restricted";
      v.reservation.nodes = {"h100-1"};
      break;
  }
  return v;
}

// A minimal virtual pod `name` in "team" with one container; `gpu` adds
// limits[`resource`] = `gpu` when not empty.
inline nlohmann::json SamplePod(const std::string& name, const std::string& gpu = "",
                                const std::string& resource = "nvidia.com/gpu") {
  nlohmann::json container = {{"name", "main"}, {"image", "registry.example/train:1"}};
  if (!gpu.empty()) container["resources"] = {{"limits", {{resource, gpu}}}};
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "team"}, {"uid", "uid-" + name}}},
          {"spec", {{"containers", nlohmann::json::array({container})}}}};
}

// A restricted-compliant security context, for the exclusive tier's pods.
inline void MakeRestricted(nlohmann::json& pod) {
  pod["spec"]["securityContext"] = {{"runAsNonRoot", true}, {"seccompProfile", {{"type", "RuntimeDefault"}}}};
  for (auto& c : pod["spec"]["containers"]) {
    c["securityContext"] = {{"allowPrivilegeEscalation", false},
                            {"capabilities", {{"drop", nlohmann::json::array({"ALL"})}}}};
  }
}

}  // namespace septa::tenancy::sync
