// The names under which a Kubernetes node tells what GPUs it has: NVIDIA GPU
// feature discovery labels, the GPU operator's MIG manager labels, the device
// plugin's extended resources (GPU-FACTS.md "How Kubernetes sees GPUs"), and
// kubesim's per-GPU identity annotation.
#pragma once

namespace septa::kube {

inline constexpr const char* kGpuProductLabel = "nvidia.com/gpu.product";
inline constexpr const char* kGpuCountLabel = "nvidia.com/gpu.count";
inline constexpr const char* kMigCapableLabel = "nvidia.com/mig.capable";
inline constexpr const char* kMigConfigLabel = "nvidia.com/mig.config";
inline constexpr const char* kMigConfigStateLabel = "nvidia.com/mig.config.state";

inline constexpr const char* kGpuResource = "nvidia.com/gpu";         // whole GPUs
inline constexpr const char* kMigResourcePrefix = "nvidia.com/mig-";  // + profile (mixed strategy)

// Simulator only: what a real cluster learns per GPU from the device plugin
// and DCGM (UUID, MIG mode, GPU instances), which GFD labels do not carry.
// A JSON array of {"index", "uuid", "migEnabled", "migDevices": [{"profile",
// "start", "giId"}]} (docs/kubesim.md).
inline constexpr const char* kGpuIdentityAnnotation = "kubesim.septa.dev/gpus";

}  // namespace septa::kube
