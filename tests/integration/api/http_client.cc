#include "tests/integration/api/http_client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <algorithm>

namespace septa::test {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = boost::asio::ip::tcp;

struct HttpClient::Impl {
  std::uint16_t port;
  boost::asio::io_context io;
  std::unique_ptr<beast::tcp_stream> stream;
  beast::flat_buffer buffer;

  void Connect() {
    stream = std::make_unique<beast::tcp_stream>(io);
    stream->connect(tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port));
    buffer.clear();
  }

  HttpResult Once(const bhttp::request<bhttp::string_body>& req) {
    bhttp::write(*stream, req);
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(64 * 1024 * 1024);
    bhttp::read(*stream, buffer, parser);
    auto res = parser.release();
    HttpResult out;
    out.status = res.result_int();
    for (const auto& field : res) {
      std::string name(field.name_string());
      std::transform(name.begin(), name.end(), name.begin(), ::tolower);
      out.headers[name] = std::string(field.value());
    }
    out.body = res.body();
    if (!res.keep_alive()) stream.reset();
    return out;
  }
};

HttpClient::HttpClient(std::uint16_t port) : impl_(std::make_unique<Impl>()) { impl_->port = port; }
HttpClient::~HttpClient() = default;

HttpResult HttpClient::Send(const std::string& method, const std::string& target, const std::string& body,
                            const std::map<std::string, std::string>& headers) {
  bhttp::request<bhttp::string_body> req(bhttp::string_to_verb(method), target, 11);
  req.set(bhttp::field::host, "127.0.0.1");
  for (const auto& [k, v] : headers) req.set(k, v);
  if (!body.empty() || method == "POST" || method == "PATCH") {
    if (!headers.contains("Content-Type")) req.set(bhttp::field::content_type, "application/json");
    req.body() = body;
    req.prepare_payload();
  }
  for (int attempt = 0;; ++attempt) {
    try {
      if (!impl_->stream) impl_->Connect();
      return impl_->Once(req);
    } catch (const boost::system::system_error&) {
      impl_->stream.reset();
      if (attempt == 1) throw;
    }
  }
}

}  // namespace septa::test
