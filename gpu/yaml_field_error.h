// What gpu/'s YAML parsers (the catalog, mig-parted configs) throw for a bad
// field. yaml-cpp reports its own errors by exception too, so each parser
// catches both at its entry point and returns a Status naming the field.
#pragma once

#include <string>

namespace septa::gpu {

struct YamlFieldError {
  std::string field;
  std::string message;
};

}  // namespace septa::gpu
