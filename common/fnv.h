// FNV-1a (64 bit): a hash every replica computes alike, on any build and
// platform (std::hash promises neither), for names and shards derived from keys.
#pragma once

#include <cstdint>
#include <string_view>

namespace septa {

inline std::uint64_t Fnv1a64(std::string_view bytes) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

}  // namespace septa
