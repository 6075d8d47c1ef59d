// The checks of a request head that Beast's parser leaves to its user:
// framing (RFC 9112 §6.1, §6.3), Host (§3.2) and fields that may appear only
// once. Pure, so that a fuzzer can run it behind Beast's parser.
#pragma once

#include <boost/beast/http/message.hpp>
#include <optional>
#include <string>

namespace septa::http {

struct HeadError {
  boost::beast::http::status status;  // 400, or 501 for a transfer coding we do not implement
  std::string message;                // names the header field, safe to show the client
};

// Every error means the rest of the connection's bytes cannot be framed
// reliably: answer it and close.
std::optional<HeadError> ValidateRequestHead(const boost::beast::http::request_header<>& head);

}  // namespace septa::http
