// A blocking HTTP/1.1 client over a real socket, for septa_http's tests.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <string>

namespace septa::http::testing {

using Resp = boost::beast::http::response<boost::beast::http::string_body>;

// A 200 text/plain response with `body`, for the handlers under test.
Resp TextResponse(std::string body);

class TestClient {
 public:
  explicit TestClient(std::uint16_t port);
  // Sends raw bytes (for malformed and pipelined input).
  void SendRaw(const std::string& bytes);
  void Send(boost::beast::http::verb verb, const std::string& target, const std::string& body = "",
            bool keep_alive = true);
  // Reads one response; error set on failure (e.g. end_of_stream).
  Resp Read(boost::system::error_code& ec);
  Resp Read();
  // True when the server closed the connection (read gives EOF or reset).
  bool ServerClosed();
  boost::asio::ip::tcp::socket& socket() { return socket_; }
  boost::beast::flat_buffer& buffer() { return buffer_; }

 private:
  void RunWithWatchdog();

  boost::asio::io_context ioc_;
  boost::asio::ip::tcp::socket socket_;
  boost::beast::flat_buffer buffer_;
};

}  // namespace septa::http::testing
