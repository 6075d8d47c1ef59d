// Documents built to hurt a parser or what walks its tree (issue 28, C1 and
// H1), for the tests of every reader that takes bytes from outside
// (common/documents.h).
#pragma once

#include <cstddef>
#include <string>

namespace septa::test {

// `depth` arrays, one inside the other: "[[...]]".
inline std::string NestedArrays(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

// A YAML alias bomb as lines of a mapping ("<indent>l0: &l0 [lol]", then
// "lN: &lN [*lN-1 ×10]"): `levels` levels expand to 10^levels nodes. The
// finding's ConfigMap had 7 under `data:` (indent "  ").
inline std::string YamlAliasBomb(int levels, const std::string& indent = "") {
  std::string text = indent + "l0: &l0 [lol]\n";
  for (int level = 1; level <= levels; ++level) {
    text += indent + "l" + std::to_string(level) + ": &l" + std::to_string(level) + " [";
    for (int i = 0; i < 10; ++i) text += (i ? ",*l" : "*l") + std::to_string(level - 1);
    text += "]\n";
  }
  return text;
}

}  // namespace septa::test
