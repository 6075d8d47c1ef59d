// Text from a token or a key set as septad's log may show it (internal to
// septa_oidc): a short excerpt, its quotes, backslashes and control
// characters escaped, so that a forged token can neither flood the log nor
// write a line of its own into it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "common/text.h"

namespace septa::oidc {

// The longest excerpt, its escapes and "..." included; quoted, 2 more.
inline constexpr std::size_t kMaxExcerptBytes = 60;

inline std::string EscapeForLog(std::string_view untrusted) {
  std::string quotes_escaped;
  quotes_escaped.reserve(untrusted.size());
  for (char c : untrusted) {
    if (c == '"' || c == '\\') quotes_escaped.push_back('\\');
    quotes_escaped.push_back(c);
  }
  return EscapeControlCharacters(quotes_escaped);
}

// `untrusted` escaped; when that is longer than kMaxExcerptBytes, the
// longest prefix whose escaped form fits with "..." after it. A prefix is
// escaped as a whole (a cut UTF-8 character shows as \x escapes), so the
// cut is searched from the longest prefix that could fit.
inline std::string Excerpt(std::string_view untrusted) {
  if (untrusted.size() <= kMaxExcerptBytes) {
    std::string escaped = EscapeForLog(untrusted);
    if (escaped.size() <= kMaxExcerptBytes) return escaped;
  }
  constexpr std::string_view kCut = "...";
  for (std::size_t length = kMaxExcerptBytes - kCut.size();; --length) {
    std::string escaped = EscapeForLog(untrusted.substr(0, length));
    if (escaped.size() + kCut.size() <= kMaxExcerptBytes) return escaped.append(kCut);
  }
}

// Excerpt(untrusted) in double quotes.
inline std::string Quoted(std::string_view untrusted) { return '"' + Excerpt(untrusted) + '"'; }

}  // namespace septa::oidc
