#include "services/http/request_head.h"

#include "services/http/server.h"

#include <array>
#include <boost/beast/core/string.hpp>
#include <iterator>
#include <string_view>
#include <vector>

namespace septa::http {

namespace bhttp = boost::beast::http;

namespace {

// Fields whose second occurrence makes the request ambiguous: two hosts, two
// credentials (which one was checked?), two lengths or media types, two
// idempotency keys. Repeatable list fields (Accept, Cookie, ...) are not here.
constexpr std::array<std::string_view, 13> kSingletonFields = {
    "Host",          "Authorization",   "Proxy-Authorization", "Content-Length",      "Content-Type",
    "Content-Range", "Range",           "If-Modified-Since",   "If-Unmodified-Since", "If-Range",
    "Max-Forwards",  "Idempotency-Key", "X-Request-Id",
};

using BeastView = boost::beast::string_view;  // boost::string_view in Boost 1.74

BeastView Beast(std::string_view v) { return {v.data(), v.size()}; }

HeadError BadRequest(std::string message) { return {bhttp::status::bad_request, std::move(message)}; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// uri-host [ ":" port ] of RFC 3986: reg-name, IPv4 or IP-literal characters.
bool IsValidHost(std::string_view host) {
  for (char c : host) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    std::string_view("-._~!$&'()*+,;=:[]%").find(c) != std::string_view::npos;
    if (!ok) return false;
  }
  return true;
}

// The transfer codings of every Transfer-Encoding line, in order, without
// their parameters.
std::vector<std::string_view> TransferCodings(const bhttp::request_header<>& head) {
  std::vector<std::string_view> codings;
  for (auto range = head.equal_range(bhttp::field::transfer_encoding); range.first != range.second; ++range.first) {
    std::string_view rest = View(range.first->value());
    while (true) {
      std::size_t comma = rest.find(',');
      std::string_view item = rest.substr(0, comma);
      item = Trim(item.substr(0, item.find(';')));
      if (!item.empty()) codings.push_back(item);
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  return codings;
}

std::optional<HeadError> CheckTransferEncoding(const bhttp::request_header<>& head) {
  if (head.find(bhttp::field::transfer_encoding) == head.end()) return std::nullopt;
  if (head.version() < 11) return BadRequest("Transfer-Encoding is not allowed in an HTTP/1.0 request");
  if (head.find(bhttp::field::content_length) != head.end()) {
    return BadRequest("Transfer-Encoding and Content-Length may not be sent together");
  }
  std::vector<std::string_view> codings = TransferCodings(head);
  if (codings.empty() || !boost::beast::iequals(Beast(codings.back()), "chunked")) {
    return BadRequest("Transfer-Encoding must end with chunked");
  }
  codings.pop_back();
  if (codings.empty()) return std::nullopt;
  if (boost::beast::iequals(Beast(codings.front()), "chunked"))
    return BadRequest("Transfer-Encoding names chunked twice");
  return HeadError{bhttp::status::not_implemented,
                   "Transfer-Encoding: unsupported transfer coding \"" + std::string(codings.front()) + "\""};
}

}  // namespace

std::optional<HeadError> ValidateRequestHead(const bhttp::request_header<>& head) {
  for (std::string_view name : kSingletonFields) {
    auto range = head.equal_range(Beast(name));
    if (range.first != range.second && std::next(range.first) != range.second) {
      return BadRequest("duplicate " + std::string(name) + " header");
    }
  }
  auto host = head.find(bhttp::field::host);
  if (host == head.end()) {
    if (head.version() >= 11) return BadRequest("missing Host header");
  } else if (!IsValidHost(View(host->value()))) {
    return BadRequest("invalid Host header");
  }
  return CheckTransferEncoding(head);
}

}  // namespace septa::http
