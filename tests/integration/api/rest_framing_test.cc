// The HTTP server's own refusals (framing, repeated fields, the connection
// cap) reach REST clients as problem+json with the matching code.
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include "services/rest/rest_api.h"
#include "tests/integration/api/api_fixture.h"

namespace septa::test {
namespace {

namespace net = boost::asio;
namespace bhttp = boost::beast::http;

// Sends `raw` on a fresh connection and reads one response.
bhttp::response<bhttp::string_body> SendRaw(std::uint16_t port, const std::string& raw) {
  net::io_context ioc;
  net::ip::tcp::socket socket(ioc);
  socket.connect({net::ip::make_address("127.0.0.1"), port});
  net::write(socket, net::buffer(raw));
  boost::beast::flat_buffer buffer;
  bhttp::response<bhttp::string_body> res;
  bhttp::read(socket, buffer, res);
  return res;
}

class RestFraming : public ApiTest {};

TEST_F(RestFraming, TwoAuthorizationHeadersAreA400NamingTheField) {
  auto res = SendRaw(app_->http_port(), "GET /v1/tenants HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + admin_ +
                                            "\r\nAuthorization: Bearer other\r\n\r\n");
  EXPECT_EQ(res.result_int(), 400);
  EXPECT_EQ(res[bhttp::field::content_type], "application/problem+json");
  auto body = nlohmann::json::parse(res.body());
  EXPECT_EQ(body.at("code"), "INVALID_ARGUMENT");
  EXPECT_NE(body.at("message").get<std::string>().find("Authorization"), std::string::npos) << res.body();
  EXPECT_FALSE(res.keep_alive());
}

TEST_F(RestFraming, MissingHostIsA400) {
  auto res = SendRaw(app_->http_port(), "GET /v1/tenants HTTP/1.1\r\nAuthorization: Bearer " + admin_ + "\r\n\r\n");
  EXPECT_EQ(res.result_int(), 400);
  EXPECT_NE(nlohmann::json::parse(res.body()).at("message").get<std::string>().find("Host"), std::string::npos);
}

TEST(RestServerError, CodesMatchTheHttpStatus) {
  auto code_of = [](http::HttpStatus status) {
    return nlohmann::json::parse(rest::RestApi::ServerError(status, "m").body()).at("code").get<std::string>();
  };
  EXPECT_EQ(code_of(http::HttpStatus::bad_request), "INVALID_ARGUMENT");
  EXPECT_EQ(code_of(http::HttpStatus::payload_too_large), "RESOURCE_EXHAUSTED");
  EXPECT_EQ(code_of(http::HttpStatus::request_header_fields_too_large), "RESOURCE_EXHAUSTED");
  EXPECT_EQ(code_of(http::HttpStatus::not_implemented), "UNIMPLEMENTED");
  EXPECT_EQ(code_of(http::HttpStatus::service_unavailable), "UNAVAILABLE");
}

}  // namespace
}  // namespace septa::test
