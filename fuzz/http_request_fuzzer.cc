// Fuzzes what the HTTP server does with a connection's bytes before a handler
// runs: Beast's request parser with the server's header and body limits, the
// requests of one connection back to back (pipelining), and the request-target
// parser (services/http/target.h) on every request that parses.
#include <boost/asio/buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "services/http/server.h"
#include "services/http/target.h"

namespace bhttp = boost::beast::http;

namespace {

// Parses one request from the front of `input`; returns the bytes it used,
// 0 when no complete request could be parsed.
std::size_t ParseOneRequest(std::string_view input, const septa::http::ServerOptions& limits) {
  bhttp::request_parser<bhttp::string_body> parser;
  parser.body_limit(limits.body_limit);
  parser.header_limit(static_cast<std::uint32_t>(limits.header_limit));
  parser.eager(true);
  boost::beast::error_code ec;
  std::size_t used = 0;
  while (!parser.is_done() && used < input.size()) {
    const std::size_t n = parser.put(boost::asio::buffer(input.data() + used, input.size() - used), ec);
    used += n;
    if (ec || n == 0) break;
  }
  if (!parser.is_done()) return 0;
  const septa::http::Request& request = parser.get();
  const auto raw_target = request.target();
  if (const auto target = septa::http::ParseTarget(std::string_view(raw_target.data(), raw_target.size()))) {
    for (const auto& segment : target->segments) {
      // What handlers do with a path: compare segments and query values.
      if (segment == "v1" && target->query.count("filter") != 0) break;
    }
  }
  return used;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const septa::http::ServerOptions limits;
  std::string_view input(reinterpret_cast<const char*>(data), size);
  for (std::size_t requests = 0; requests < limits.max_pipelined && !input.empty(); ++requests) {
    const std::size_t used = ParseOneRequest(input, limits);
    if (used == 0) break;
    input.remove_prefix(used);
  }
  // Percent-decoding on its own, both ways a target uses it.
  const std::string_view raw(reinterpret_cast<const char*>(data), size);
  (void)septa::http::PercentDecode(raw, /*plus_is_space=*/true);
  (void)septa::http::PercentDecode(raw, /*plus_is_space=*/false);
  return 0;
}
