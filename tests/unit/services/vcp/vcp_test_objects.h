#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <string>

namespace septa::test {

// How long a vcp test waits on a listener or replica that is broken; a
// working one answers at once.
inline constexpr std::chrono::seconds kBound{10};

// A ConfigMap in "default" holding one key, "value".
inline nlohmann::json ConfigMap(const std::string& name, const std::string& value) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"data", {{"value", value}}}};
}

}  // namespace septa::test
