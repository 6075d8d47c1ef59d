#include "tests/unit/services/http/test_client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/write.hpp>

namespace septa::http::testing {

Resp TextResponse(std::string body) {
  Resp res{boost::beast::http::status::ok, 11};
  res.set(boost::beast::http::field::content_type, "text/plain");
  res.body() = std::move(body);
  return res;
}

namespace net = boost::asio;
namespace bhttp = boost::beast::http;

TestClient::TestClient(std::uint16_t port) : socket_(ioc_) {
  socket_.connect({net::ip::make_address("127.0.0.1"), port});
}

void TestClient::SendRaw(const std::string& bytes) { net::write(socket_, net::buffer(bytes)); }

void TestClient::Send(bhttp::verb verb, const std::string& target, const std::string& body, bool keep_alive) {
  bhttp::request<bhttp::string_body> req{verb, target, 11};
  req.set(bhttp::field::host, "localhost");
  req.keep_alive(keep_alive);
  req.body() = body;
  req.prepare_payload();
  bhttp::write(socket_, req);
}

// Reads run asynchronously under a 5 s watchdog so that a broken server
// fails a test instead of hanging it.
void TestClient::RunWithWatchdog() {
  ioc_.restart();
  ioc_.run_for(std::chrono::seconds(5));
  if (!ioc_.stopped()) {
    boost::system::error_code ignored;
    socket_.cancel(ignored);
    ioc_.restart();
    ioc_.run();
  }
}

Resp TestClient::Read(boost::system::error_code& ec) {
  Resp res;
  bhttp::async_read(socket_, buffer_, res, [&](const boost::system::error_code& e, std::size_t) { ec = e; });
  RunWithWatchdog();
  return res;
}

Resp TestClient::Read() {
  boost::system::error_code ec;
  Resp res = Read(ec);
  if (ec) throw boost::system::system_error(ec, "TestClient::Read");
  return res;
}

bool TestClient::ServerClosed() {
  char byte;
  boost::system::error_code ec;
  socket_.async_read_some(net::buffer(&byte, 1), [&](const boost::system::error_code& e, std::size_t) { ec = e; });
  RunWithWatchdog();
  return ec == net::error::eof || ec == net::error::connection_reset;
}

}  // namespace septa::http::testing
