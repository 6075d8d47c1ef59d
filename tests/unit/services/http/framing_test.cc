// Request framing and header rules of RFC 9112 (§6.3 message length, §3.2
// Host) and fields that may appear only once, each over a raw socket.
#include <gtest/gtest.h>

#include <atomic>
#include <boost/beast/http.hpp>

#include "services/http/server.h"
#include "tests/unit/services/http/test_client.h"

namespace septa::http {
namespace {

namespace bhttp = boost::beast::http;
using testing::TestClient;

class httpFraming : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerOptions options;
    options.error_formatter = [](HttpStatus status, std::string_view message) {
      Response res{status, 11};
      res.set(bhttp::field::content_type, "application/problem+json");
      res.body() = "{\"detail\":\"" + std::string(message) + "\"}";
      return res;
    };
    server_ = std::make_unique<Server>(options, [this](Request&& req, std::shared_ptr<Exchange> ex) {
      ++handled_;
      Response res{HttpStatus::ok, 11};
      res.body() = "served " + req.body();
      ex->Reply(std::move(res));
    });
    ASSERT_TRUE(server_->Start().ok());
  }

  // Sends `raw`, expects `status` with a detail mentioning `names`, the
  // connection closed and the handler never called.
  void ExpectRefused(const std::string& raw, HttpStatus status, std::string_view names) {
    TestClient client(server_->port());
    client.SendRaw(raw);
    auto res = client.Read();
    EXPECT_EQ(res.result(), status) << raw;
    EXPECT_EQ(res[bhttp::field::content_type], "application/problem+json") << raw;
    EXPECT_NE(res.body().find(names), std::string::npos) << res.body();
    EXPECT_FALSE(res.keep_alive()) << raw;
    EXPECT_TRUE(client.ServerClosed()) << raw;
    EXPECT_EQ(handled_.load(), 0) << raw;
  }

  std::unique_ptr<Server> server_;
  std::atomic<int> handled_{0};
};

TEST_F(httpFraming, TransferEncodingNotEndingInChunkedIsRefused) {
  // Framed by Content-Length, "xchunked" would let the body smuggle a request.
  ExpectRefused("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\nContent-Length: 3\r\n\r\nabc",
                HttpStatus::bad_request, "Transfer-Encoding");
  ExpectRefused("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: xchunked\r\n\r\nabc",
                HttpStatus::bad_request, "Transfer-Encoding");
  ExpectRefused("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
                HttpStatus::bad_request, "Transfer-Encoding");
  ExpectRefused("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", HttpStatus::bad_request,
                "Transfer-Encoding");
}

TEST_F(httpFraming, TransferEncodingWithContentLengthIsRefused) {
  ExpectRefused(
      "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
      HttpStatus::bad_request, "");
}

TEST_F(httpFraming, UnknownTransferCodingBeforeChunkedIs501) {
  ExpectRefused("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
                HttpStatus::not_implemented, "gzip");
}

TEST_F(httpFraming, TransferEncodingInHttp10IsRefused) {
  ExpectRefused("POST / HTTP/1.0\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
                HttpStatus::bad_request, "Transfer-Encoding");
}

TEST_F(httpFraming, ChunkedBodyIsServed) {
  TestClient client(server_->port());
  client.SendRaw("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n");
  auto res = client.Read();
  EXPECT_EQ(res.body(), "served abc");
  EXPECT_TRUE(res.keep_alive());
}

TEST_F(httpFraming, Http11RequestNeedsExactlyOneHost) {
  ExpectRefused("GET / HTTP/1.1\r\n\r\n", HttpStatus::bad_request, "Host");
  ExpectRefused("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", HttpStatus::bad_request, "Host");
  ExpectRefused("GET / HTTP/1.1\r\nHost: a\r\nHost: a\r\n\r\n", HttpStatus::bad_request, "Host");
  ExpectRefused("GET / HTTP/1.1\r\nHost: a b\r\n\r\n", HttpStatus::bad_request, "Host");
}

TEST_F(httpFraming, Http10MayOmitHost) {
  TestClient client(server_->port());
  client.SendRaw("GET / HTTP/1.0\r\n\r\n");
  EXPECT_EQ(client.Read().result(), HttpStatus::ok);
}

TEST_F(httpFraming, SingletonFieldsMayNotRepeat) {
  ExpectRefused("GET / HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer a\r\nAuthorization: Bearer b\r\n\r\n",
                HttpStatus::bad_request, "Authorization");
  ExpectRefused("POST / HTTP/1.1\r\nHost: x\r\nContent-Type: a/b\r\ncontent-type: c/d\r\nContent-Length: 0\r\n\r\n",
                HttpStatus::bad_request, "Content-Type");
  ExpectRefused("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc",
                HttpStatus::bad_request, "Content-Length");
  ExpectRefused("GET / HTTP/1.1\r\nHost: x\r\nIdempotency-Key: a\r\nIdempotency-Key: b\r\n\r\n",
                HttpStatus::bad_request, "Idempotency-Key");
}

TEST_F(httpFraming, RepeatableFieldsMayRepeat) {
  TestClient client(server_->port());
  client.SendRaw("GET / HTTP/1.1\r\nHost: x\r\nAccept: a/b\r\nAccept: c/d\r\nCookie: a=1\r\nCookie: b=2\r\n\r\n");
  EXPECT_EQ(client.Read().result(), HttpStatus::ok);
}

}  // namespace
}  // namespace septa::http
