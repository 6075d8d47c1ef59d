#pragma once

#include "gpu/catalog.h"

namespace septa::test {

// The default catalog's H100-80GB, the GPU most gpu/ tests place on, and one
// of its MIG profiles' index by name ("3g.40gb").
inline const gpu::GpuModel& H100() { return *gpu::Catalog::Default().Find("H100-80GB"); }
inline int P(const char* profile) { return H100().ProfileIndex(profile); }

}  // namespace septa::test
