// Fuzzes kubeconfig parsing (services/kube/config.h). Relative file names
// resolve under a directory that does not exist, so they fail to read.
#include <cstddef>
#include <cstdint>
#include <string>

#include "services/kube/config.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string yaml(reinterpret_cast<const char*>(data), size);
  (void)septa::kube::ParseKubeconfig(yaml, "", "/nonexistent-septa-fuzz");
  (void)septa::kube::ParseKubeconfig(yaml, "other", "/nonexistent-septa-fuzz");
  return 0;
}
