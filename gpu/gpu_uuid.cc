#include "gpu/gpu_uuid.h"

#include <cstdint>

namespace septa::gpu {

namespace {

// FNV-1a (64 bit) from a given offset basis: two bases give 128 bits.
std::uint64_t Fnv1a(std::string_view text, std::uint64_t basis) {
  std::uint64_t hash = basis;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

void AppendHex(std::string& out, std::uint64_t value, int digits) {
  static constexpr char kHex[] = "0123456789abcdef";
  for (int i = digits - 1; i >= 0; --i) out += kHex[(value >> (4 * i)) & 0xF];
}

}  // namespace

std::string SyntheticGpuUuid(std::string_view node_name, int index) {
  // The index is part of the hashed text with a separator no node name contains.
  const std::string key = std::string(node_name) + '/' + std::to_string(index);
  const std::uint64_t high = Fnv1a(key, 0xcbf29ce484222325ULL);
  const std::uint64_t low = Fnv1a(key, 0x84222325cbf29ce4ULL);
  std::string out = "GPU-";
  AppendHex(out, high >> 32, 8);
  out += '-';
  AppendHex(out, high >> 16, 4);
  out += '-';
  AppendHex(out, high, 4);
  out += '-';
  AppendHex(out, low >> 48, 4);
  out += '-';
  AppendHex(out, low, 12);
  return out;
}

}  // namespace septa::gpu
