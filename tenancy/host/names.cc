#include "tenancy/host/names.h"

#include <nettle/sha2.h>

#include <array>
#include <cctype>

#include "common/text.h"
#include "tenancy/virtual_cluster_ref.h"

namespace septa::tenancy::host {

namespace {

constexpr std::size_t kMaxLabel = 63;
constexpr std::size_t kHashedPrefix = 52;
constexpr std::size_t kHashDigits = 10;
constexpr std::string_view kSeparator = "-x-";
// A hashed host namespace: the first 49 characters of the plain name, which
// hold "septa-", a tenant of up to 40 characters and its separator, then
// "-x-" and 11 hex digits (49 + 3 + 11 = 63).
constexpr std::size_t kNamespaceReadable = 6 + 40 + 3;
constexpr std::size_t kNamespaceHashDigits = kMaxLabel - kNamespaceReadable - kSeparator.size();

std::size_t Occurrences(std::string_view text, std::string_view needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string_view::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace

std::string Sha256Hex(std::string_view data) {
  sha256_ctx ctx;
  sha256_init(&ctx);
  sha256_update(&ctx, data.size(), reinterpret_cast<const std::uint8_t*>(data.data()));
  std::array<std::uint8_t, SHA256_DIGEST_SIZE> digest{};
  sha256_digest(&ctx, digest.size(), digest.data());
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * digest.size());
  for (std::uint8_t b : digest) {
    out += kHex[b >> 4];
    out += kHex[b & 0xf];
  }
  return out;
}

std::string SafeConcat(const std::vector<std::string_view>& parts) {
  std::string joined;
  for (std::string_view part : parts) {
    if (!joined.empty()) joined += '-';
    joined += part;
  }
  if (joined.size() <= kMaxLabel) return joined;
  std::string out = joined.substr(0, kHashedPrefix) + "-" + Sha256Hex(joined).substr(0, kHashDigits);
  ReplaceAll(out, ".-", "-");
  return out;
}

std::string HostNamespaceName(std::string_view tenant, std::string_view vcluster) {
  std::string plain = "septa-" + std::string(tenant) + std::string(kSeparator) + std::string(vcluster);
  if (plain.size() <= kMaxLabel && SeparatorCount(plain) == 1) return plain;
  std::string out = plain.substr(0, kNamespaceReadable);
  while (out.back() == '-') out.pop_back();  // stops at the tenant separator's 'x' at the latest
  return out + std::string(kSeparator) +
         Sha256Hex(VirtualClusterText(tenant, vcluster)).substr(0, kNamespaceHashDigits);
}

std::size_t SeparatorCount(std::string_view name) { return Occurrences(name, kSeparator); }

std::string KaiTierQueueName(std::string_view tier) {
  std::string plain = "septa-tier-" + std::string(tier);
  if (plain.size() <= kMaxLabel && SeparatorCount(plain) == 0) return plain;
  // Never a host namespace's shape (those hold "-x-"), nor another tier's
  // plain name ("septa-tierh" is no "septa-tier-" prefix).
  return "septa-tierh-" + Sha256Hex(tier).substr(0, 32);
}

std::string GpuFlavorName(std::string_view product) {
  std::string readable;
  for (char c : product) {
    const auto u = static_cast<unsigned char>(c);
    const bool keep = std::isalnum(u) != 0 && u < 0x80;
    const char mapped = keep ? static_cast<char>(std::tolower(u)) : '-';
    if (mapped == '-' && (readable.empty() || readable.back() == '-')) continue;
    readable += mapped;
  }
  while (!readable.empty() && readable.back() == '-') readable.pop_back();
  // "septa-gpu-" (10) + readable + "-" + 6 hex digits stays within 63.
  constexpr std::size_t kReadableMax = kMaxLabel - 10 - 1 - 6;
  if (readable.size() > kReadableMax) readable.resize(kReadableMax);
  while (!readable.empty() && readable.back() == '-') readable.pop_back();
  std::string out = "septa-gpu-";
  if (!readable.empty()) out += readable + "-";
  return out + Sha256Hex(product).substr(0, 6);
}

}  // namespace septa::tenancy::host
