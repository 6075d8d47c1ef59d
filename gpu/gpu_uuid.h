// Stable GPU UUIDs in NVIDIA's shape ("GPU-1a2b3c4d-...") for GPUs whose real
// UUID is not known: derived from the node name and GPU index, so the same GPU
// gets the same UUID on every observation and in every process.
#pragma once

#include <string>
#include <string_view>

namespace septa::gpu {

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", lowercase hex.
std::string SyntheticGpuUuid(std::string_view node_name, int index);

}  // namespace septa::gpu
