// Fuzzes kubesim's inventory YAML loader (services/kubesim/inventory.h).
#include <cstddef>
#include <cstdint>
#include <string>

#include "services/kubesim/inventory.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)septa::kubesim::ParseInventory(std::string(reinterpret_cast<const char*>(data), size), "fuzz");
  return 0;
}
