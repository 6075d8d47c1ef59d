// Text from clients. Every string a client sends is checked here before it
// is stored, compared or looked up: PostgreSQL refuses invalid UTF-8 and
// cuts strings at a NUL, and a terminal acts on control characters. Pure, so
// that tenancy/ validates names with the same rules as the use cases.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace septa {

// RFC 1123 label: lower-case alphanumerics and '-', starting and ending
// alphanumeric, `max_len` characters at most.
bool IsDns1123Label(std::string_view s, std::size_t max_len = 63);
// RFC 1123 subdomain: dot-separated labels, 253 characters at most.
bool IsDns1123Subdomain(std::string_view s);

bool IsValidUtf8(std::string_view text);
// A single line of printable text: valid UTF-8 without C0 controls (not even
// tab or newline), DEL, C1 controls, line/paragraph separators or bidi
// embeddings, overrides and isolates (which reorder what a reader sees).
// At most `max_bytes` bytes.
Status ValidateText(std::string_view field, std::string_view text, std::size_t max_bytes);
// `text` with every character that ValidateText refuses, and every byte that
// is not UTF-8, written as a visible escape (\n, \u001b, \u202e, \xff): safe
// to print on a terminal whoever wrote it. The escapes are JSON's and YAML's.
// With `keep_newlines`, '\n' stays as it is (for a serialized document whose
// strings are escaped already and whose lines are its structure).
std::string EscapeControlCharacters(std::string_view text, bool keep_newlines = false);

// `text` as a refusal or a log line quotes a client's value: in double
// quotes, its quotes and backslashes escaped with a backslash and the rest
// as EscapeControlCharacters does (a forged value can neither end the
// quote early nor write a line of its own), and cut after 64 bytes
// (never inside a UTF-8 sequence) with its size said, so that a megabyte
// sent is neither sent back nor logged.
std::string QuotedExcerpt(std::string_view text);

// The pieces of `s` between the `sep`s ("a.b" -> {"a", "b"}; "" -> {""}).
std::vector<std::string> Split(std::string_view s, char sep);
// The pieces with `sep` between them ({"a", "b"}, ", " -> "a, b").
std::string Join(const std::vector<std::string>& pieces, std::string_view sep);

// `text` without the line breaks (\n, \r) that end it: a secret file's one
// line as editors and `echo` write it.
void DropTrailingLineBreaks(std::string& text);

// Every occurrence of `from` in `text`, left to right and not overlapping,
// replaced by `to` (nothing when `from` is empty).
void ReplaceAll(std::string& text, std::string_view from, std::string_view to);

}  // namespace septa
