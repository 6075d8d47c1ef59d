// Which shard a key belongs to: a hash every replica computes alike, on any
// build and platform (std::hash promises neither), so that replicas agree on
// who acts on an object.
#pragma once

#include <cstdint>
#include <string_view>

namespace septa::reconcile {

// FNV-1a (64 bit) of the key's bytes, modulo `shard_count` (at least 1).
inline int ShardOf(std::string_view key, int shard_count) {
  std::uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : key) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return shard_count <= 1 ? 0 : static_cast<int>(hash % static_cast<std::uint64_t>(shard_count));
}

}  // namespace septa::reconcile
