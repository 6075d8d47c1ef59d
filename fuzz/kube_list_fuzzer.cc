// Fuzzes the kube client's list decoder (services/kube/object.h, simdjson):
// the body of a list reply, then what the informer reads from each item.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "services/kube/object.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto page = septa::kube::DecodeListBody(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!page.ok()) return 0;
  for (const septa::kube::Object& item : page->items) {
    (void)item.Name();
    (void)item.Namespace();
    (void)item.ResourceVersion();
    (void)item.Uid();
    (void)item.StringAt("/spec/nodeName");
    (void)item.Has("/metadata/labels");
    (void)item.Dump();
  }
  return 0;
}
