#include "services/http/target.h"

namespace septa::http {

namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Calls `each` with every non-empty piece of `text` between `separator`s.
template <typename Each>
void ForEachPiece(std::string_view text, char separator, Each&& each) {
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(separator, start);
    if (end == std::string_view::npos) end = text.size();
    if (end > start) each(text.substr(start, end - start));
    start = end + 1;
  }
}

// Calls `each(key, value)` with every decoded pair of the query of
// `target` (what follows '?'), in order; false when one has a malformed
// %-escape.
template <typename Each>
bool ForEachQueryPair(std::string_view target, Each&& each) {
  const std::size_t q = target.find('?');
  if (q == std::string_view::npos) return true;
  bool ok = true;
  ForEachPiece(target.substr(q + 1), '&', [&](std::string_view pair) {
    const std::size_t eq = pair.find('=');
    auto key = PercentDecode(pair.substr(0, eq), true);
    auto value = PercentDecode(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1), true);
    if (!key || !value) ok = false;
    else each(*std::move(key), *std::move(value));
  });
  return ok;
}

}  // namespace

std::optional<std::string> PercentDecode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%') {
      if (i + 2 >= text.size()) return std::nullopt;  // truncated escape
      const int hi = HexValue(text[i + 1]), lo = HexValue(text[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string PercentEncodePathSegment(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    const bool as_is = (byte >= 'a' && byte <= 'z') || (byte >= 'A' && byte <= 'Z') || (byte >= '0' && byte <= '9') ||
                       c == '-' || c == '.' || c == '_' || c == '~' || c == ':' || c == '@';
    if (as_is) {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(kHex[byte >> 4]);
      out.push_back(kHex[byte & 0xf]);
    }
  }
  return out;
}

std::optional<Target> ParseTarget(std::string_view target) {
  Target out;
  const std::size_t q = target.find('?');
  out.path = std::string(target.substr(0, q));
  bool ok = true;
  // Split before decoding, so that an escaped '/' stays inside its segment.
  ForEachPiece(out.path, '/', [&](std::string_view segment) {
    auto decoded = PercentDecode(segment, false);
    if (!decoded) ok = false;
    else out.segments.push_back(*std::move(decoded));
  });
  ok = ForEachQueryPair(target,
                        [&](std::string key, std::string value) { out.query[std::move(key)] = std::move(value); }) &&
       ok;
  if (!ok) return std::nullopt;
  return out;
}

std::vector<std::string> QueryValues(std::string_view target, std::string_view key) {
  std::vector<std::string> values;
  ForEachQueryPair(target, [&](const std::string& k, std::string value) {
    if (k == key) values.push_back(std::move(value));
  });
  return values;
}

}  // namespace septa::http
