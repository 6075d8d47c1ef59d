#include "common/text.h"

#include <simdjson.h>

namespace septa {

namespace {

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// One character of valid UTF-8 starting at text[i]: its code point and length.
struct Utf8Char {
  char32_t code = 0;
  std::size_t size = 1;
};

Utf8Char DecodeValid(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return {lead, 1};
  if (lead < 0xe0) return {static_cast<char32_t>(((lead & 0x1f) << 6) | (byte(1) & 0x3f)), 2};
  if (lead < 0xf0) {
    return {static_cast<char32_t>(((lead & 0x0f) << 12) | ((byte(1) & 0x3f) << 6) | (byte(2) & 0x3f)), 3};
  }
  return {static_cast<char32_t>(((lead & 0x07) << 18) | ((byte(1) & 0x3f) << 12) | ((byte(2) & 0x3f) << 6) |
                                (byte(3) & 0x3f)),
          4};
}

// What may not appear in a single line of text (see ValidateText).
bool IsControl(char32_t c) {
  return c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == 0x061c || c == 0x200e || c == 0x200f ||
         (c >= 0x2028 && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
}

std::string Hex(unsigned value, int digits) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(digits, '0');
  for (int k = digits - 1; k >= 0; --k, value >>= 4) out[k] = kDigits[value & 0xf];
  return out;
}

std::string EscapeOne(char32_t c) {
  switch (c) {
    case '\n': return "\\n";
    case '\r': return "\\r";
    case '\t': return "\\t";
    default: break;
  }
  return "\\u" + Hex(c, 4);  // as JSON and YAML write them, so escaping twice changes nothing
}

}  // namespace

bool IsDns1123Label(std::string_view s, std::size_t max_len) {
  if (s.empty() || s.size() > max_len) return false;
  if (!IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsLowerAlnum(c) && c != '-') return false;
  }
  return true;
}

bool IsDns1123Subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  for (std::size_t start = 0;;) {
    const std::size_t dot = s.find('.', start);
    if (!IsDns1123Label(s.substr(start, dot == std::string_view::npos ? dot : dot - start))) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

bool IsValidUtf8(std::string_view text) { return simdjson::validate_utf8(text.data(), text.size()); }

Status ValidateText(std::string_view field, std::string_view text, std::size_t max_bytes) {
  if (text.size() > max_bytes) {
    return InvalidField(std::string(field),
                        "must be at most " + std::to_string(max_bytes) + " bytes, got " + std::to_string(text.size()));
  }
  if (!IsValidUtf8(text)) return InvalidField(std::string(field), "must be valid UTF-8");
  for (std::size_t i = 0; i < text.size();) {
    const Utf8Char c = DecodeValid(text, i);
    if (IsControl(c.code)) {
      return InvalidField(std::string(field), "must not contain control or bidi formatting characters (found " +
                                                  EscapeOne(c.code) + " at byte " + std::to_string(i) + ")");
    }
    i += c.size;
  }
  return Status::Ok();
}

std::string EscapeControlCharacters(std::string_view text, bool keep_newlines) {
  const bool valid = IsValidUtf8(text);
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (!valid && byte >= 0x80) {  // not UTF-8: every non-ASCII byte shows as itself
      out += "\\x" + Hex(byte, 2);
      ++i;
      continue;
    }
    const Utf8Char c = DecodeValid(text, i);
    if (IsControl(c.code) && !(keep_newlines && c.code == '\n')) {
      out += EscapeOne(c.code);
    } else {
      out.append(text.substr(i, c.size));
    }
    i += c.size;
  }
  return out;
}

void ReplaceAll(std::string& text, std::string_view from, std::string_view to) {
  if (from.empty()) return;
  for (std::size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
}

void DropTrailingLineBreaks(std::string& text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
}

std::string Join(const std::vector<std::string>& pieces, std::string_view sep) {
  std::string joined;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    if (i > 0) joined += sep;
    joined += pieces[i];
  }
  return joined;
}

std::vector<std::string> Split(std::string_view s, char sep) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = s.find(sep, start);
    parts.emplace_back(s.substr(start, end == std::string_view::npos ? s.size() - start : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

std::string QuotedExcerpt(std::string_view text) {
  constexpr std::size_t kShown = 64;
  std::size_t cut = std::min(text.size(), kShown);  // not inside a UTF-8 sequence (of at most 4 bytes)
  while (cut < text.size() && cut > kShown - 3 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  // Quotes and backslashes escaped first, so that the excerpt's end is its closing quote.
  std::string quoted_escaped;
  for (char c : text.substr(0, cut)) {
    if (c == '"' || c == '\\') quoted_escaped.push_back('\\');
    quoted_escaped.push_back(c);
  }
  std::string out = "\"" + EscapeControlCharacters(quoted_escaped) + "\"";
  if (cut < text.size()) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

}  // namespace septa
