// Which shard a key belongs to: a hash every replica computes alike, on any
// build and platform (std::hash promises neither), so that replicas agree on
// who acts on an object.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/fnv.h"

namespace septa::reconcile {

// FNV-1a (64 bit) of the key's bytes, modulo `shard_count` (at least 1).
inline int ShardOf(std::string_view key, int shard_count) {
  const std::uint64_t hash = Fnv1a64(key);
  return shard_count <= 1 ? 0 : static_cast<int>(hash % static_cast<std::uint64_t>(shard_count));
}

}  // namespace septa::reconcile
