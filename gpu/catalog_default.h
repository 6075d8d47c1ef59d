// The built-in catalog document (YAML, the admin override format).
#pragma once

namespace septa::gpu {
extern const char* const kDefaultCatalogYaml;
}  // namespace septa::gpu
