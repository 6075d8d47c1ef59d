#include "services/http/server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/beast/http.hpp>
#include <future>
#include <thread>

#include "tests/unit/services/http/test_client.h"

namespace septa::http {
namespace {

namespace bhttp = boost::beast::http;
using namespace std::chrono_literals;
using testing::TestClient;
using testing::TextResponse;

// Echoes "<method> <target> <body>".
void Echo(Request&& req, std::shared_ptr<Exchange> ex) {
  ex->Reply(TextResponse(std::string(req.method_string()) + " " + std::string(req.target()) + " " + req.body()));
}

std::unique_ptr<Server> StartServer(ServerOptions options, Handler handler) {
  auto server = std::make_unique<Server>(std::move(options), std::move(handler));
  Status started = server->Start();
  EXPECT_TRUE(started.ok()) << started.ToString();
  EXPECT_NE(server->port(), 0);
  return server;
}

TEST(httpServer, KeepAliveServesSeveralRequestsOnOneConnection) {
  auto server = StartServer({}, Echo);
  TestClient client(server->port());
  for (int i = 0; i < 3; ++i) {
    client.Send(bhttp::verb::post, "/items/" + std::to_string(i), "body" + std::to_string(i));
    auto res = client.Read();
    EXPECT_EQ(res.result(), HttpStatus::ok);
    EXPECT_EQ(res.body(), "POST /items/" + std::to_string(i) + " body" + std::to_string(i));
    EXPECT_TRUE(res.keep_alive());
  }
  EXPECT_EQ(server->open_connections(), 1u);
}

TEST(httpServer, ConnectionCloseIsHonoured) {
  auto server = StartServer({}, Echo);
  TestClient client(server->port());
  client.Send(bhttp::verb::get, "/", "", /*keep_alive=*/false);
  auto res = client.Read();
  EXPECT_FALSE(res.keep_alive());
  EXPECT_TRUE(client.ServerClosed());
}

TEST(httpServer, BodyOverTheLimitGets413WithTheCallersBody) {
  ServerOptions options;
  options.body_limit = 16;
  options.error_formatter = [](HttpStatus status, std::string_view message) {
    Response res{status, 11};
    res.body() =
        "{\"code\":" + std::to_string(static_cast<int>(status)) + ",\"message\":\"" + std::string(message) + "\"}";
    return res;
  };
  std::atomic<int> handled{0};
  auto server = StartServer(options, [&](Request&& req, std::shared_ptr<Exchange> ex) {
    ++handled;
    Echo(std::move(req), ex);
  });
  TestClient client(server->port());
  client.Send(bhttp::verb::post, "/small", "0123456789");
  EXPECT_EQ(client.Read().result(), HttpStatus::ok);
  client.Send(bhttp::verb::post, "/big", std::string(100, 'x'));
  auto res = client.Read();
  EXPECT_EQ(res.result(), HttpStatus::payload_too_large);
  EXPECT_EQ(res.body(), "{\"code\":413,\"message\":\"request body too large\"}");
  EXPECT_FALSE(res.keep_alive());
  EXPECT_TRUE(client.ServerClosed());
  EXPECT_EQ(handled.load(), 1);
}

TEST(httpServer, ExpectContinueGets100BeforeTheBodyIsSent) {
  ServerOptions options;
  options.body_limit = 4096;
  auto server = StartServer(options, Echo);
  TestClient client(server->port());
  const std::string body(2000, 'x');
  client.SendRaw("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 2000\r\nExpect: 100-continue\r\n\r\n");
  auto interim = client.Read();  // the watchdog fails the test if it never comes
  EXPECT_EQ(interim.result(), HttpStatus::continue_);
  client.SendRaw(body);
  auto res = client.Read();
  EXPECT_EQ(res.result(), HttpStatus::ok);
  EXPECT_EQ(res.body(), "POST /upload " + body);
  EXPECT_TRUE(res.keep_alive());

  // Over the limit: refused at once, the body never needed.
  client.SendRaw("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 9000\r\nExpect: 100-continue\r\n\r\n");
  EXPECT_EQ(client.Read().result(), HttpStatus::payload_too_large);
  EXPECT_TRUE(client.ServerClosed());
}

TEST(httpServer, MalformedRequestGets400AndClose) {
  auto server = StartServer({}, Echo);
  TestClient client(server->port());
  client.SendRaw("GET / HTTP/1.1\r\nHost: x\r\nContent-Length: banana\r\n\r\n");
  auto res = client.Read();
  EXPECT_EQ(res.result(), HttpStatus::bad_request);
  EXPECT_TRUE(client.ServerClosed());

  TestClient garbage(server->port());
  garbage.SendRaw(std::string("\x16\x03\x01\x00\xff\x01garbage\r\n\r\n", 17));
  EXPECT_EQ(garbage.Read().result(), HttpStatus::bad_request);
}

TEST(httpServer, OversizedHeadersGet431) {
  ServerOptions options;
  options.header_limit = 1024;
  auto server = StartServer(options, Echo);
  TestClient client(server->port());
  client.SendRaw("GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(4096, 'a') + "\r\n\r\n");
  EXPECT_EQ(client.Read().result(), HttpStatus::request_header_fields_too_large);
}

TEST(httpServer, IdleKeepAliveConnectionIsClosed) {
  ServerOptions options;
  options.idle_timeout = 100ms;
  auto server = StartServer(options, Echo);
  TestClient client(server->port());
  client.Send(bhttp::verb::get, "/");
  EXPECT_EQ(client.Read().result(), HttpStatus::ok);
  auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(client.ServerClosed());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
}

TEST(httpServer, SlowRequestHitsTheReadTimeout) {
  ServerOptions options;
  options.read_timeout = 100ms;
  auto server = StartServer(options, Echo);
  TestClient client(server->port());
  client.SendRaw("GET / HTTP/1.1\r\nHost: x\r\n");  // headers never finish
  EXPECT_TRUE(client.ServerClosed());
}

// The slow request is answered only after another connection, idle since the
// request arrived, has been closed by the idle timeout: the timeout elapsed
// for the slow one too, without cutting it.
TEST(httpServer, SlowHandlerIsNotCutByTheIdleTimeout) {
  ServerOptions options;
  options.idle_timeout = 50ms;
  std::promise<std::shared_ptr<Exchange>> slow;
  auto server = StartServer(options, [&](Request&&, std::shared_ptr<Exchange> ex) { slow.set_value(ex); });
  TestClient client(server->port());
  client.Send(bhttp::verb::get, "/");
  auto ex = slow.get_future().get();
  TestClient idle(server->port());
  EXPECT_TRUE(idle.ServerClosed());
  ex->Reply(TextResponse("late"));
  EXPECT_EQ(client.Read().body(), "late");
}

TEST(httpServer, AsyncReplyFromAnotherThreadDoesNotBlockTheIoThread) {
  ServerOptions options;
  options.io_threads = 1;
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::vector<std::thread> workers;
  std::mutex workers_mu;
  auto server = StartServer(options, [&](Request&& req, std::shared_ptr<Exchange> ex) {
    if (req.target() == "/slow") {
      std::lock_guard lock(workers_mu);
      workers.emplace_back([ex, released] {
        released.wait();
        ex->Reply(TextResponse("slow"));
      });
    } else {
      ex->Reply(TextResponse("fast"));
    }
  });
  TestClient slow(server->port());
  slow.Send(bhttp::verb::get, "/slow");
  TestClient fast(server->port());
  fast.Send(bhttp::verb::get, "/fast");
  EXPECT_EQ(fast.Read().body(), "fast");  // served while /slow is still pending
  release.set_value();
  EXPECT_EQ(slow.Read().body(), "slow");
  std::lock_guard lock(workers_mu);
  for (auto& w : workers) w.join();
}

TEST(httpServer, DroppedExchangeAnswers500) {
  auto server = StartServer({}, [](Request&&, std::shared_ptr<Exchange>) {});
  TestClient client(server->port());
  client.Send(bhttp::verb::get, "/");
  EXPECT_EQ(client.Read().result(), HttpStatus::internal_server_error);
}

TEST(httpServer, SecondReplyIsIgnored) {
  auto server = StartServer({}, [](Request&&, std::shared_ptr<Exchange> ex) {
    ex->Reply(TextResponse("first"));
    ex->Reply(TextResponse("second"));
  });
  TestClient client(server->port());
  client.Send(bhttp::verb::get, "/a");
  EXPECT_EQ(client.Read().body(), "first");
  client.Send(bhttp::verb::get, "/b");
  EXPECT_EQ(client.Read().body(), "first");
}

TEST(httpServer, StreamsChunksAndEnds) {
  std::mutex mu;
  std::vector<std::thread> producers;
  std::atomic<int> refused_chunks{0};
  auto server = StartServer({}, [&](Request&&, std::shared_ptr<Exchange> ex) {
    Response head{HttpStatus::ok, 11};
    head.set(bhttp::field::content_type, "application/json");
    ex->StartStream(std::move(head));
    std::lock_guard lock(mu);
    producers.emplace_back([ex, &refused_chunks] {
      for (int i = 0; i < 3; ++i) {
        if (!ex->WriteChunk("{\"n\":" + std::to_string(i) + "}\n")) ++refused_chunks;
      }
      ex->EndStream();
    });
  });
  TestClient client(server->port());
  client.Send(bhttp::verb::get, "/watch");
  auto res = client.Read();
  EXPECT_TRUE(res.chunked());
  EXPECT_EQ(res[bhttp::field::content_type], "application/json");
  EXPECT_EQ(res.body(), "{\"n\":0}\n{\"n\":1}\n{\"n\":2}\n");
  client.Send(bhttp::verb::get, "/again");  // the connection is still usable
  EXPECT_EQ(client.Read().body(), "{\"n\":0}\n{\"n\":1}\n{\"n\":2}\n");
  std::lock_guard lock(mu);
  for (auto& p : producers) p.join();
  EXPECT_EQ(refused_chunks.load(), 0);
}

TEST(httpServer, StreamSeesTheClientGoAway) {
  std::promise<std::shared_ptr<Exchange>> started;
  std::promise<void> closed;
  auto server = StartServer({}, [&](Request&&, std::shared_ptr<Exchange> ex) {
    ex->StartStream(Response{HttpStatus::ok, 11});
    ex->WriteChunk("hello");
    ex->OnClose([&] { closed.set_value(); });
    started.set_value(ex);
  });
  auto client = std::make_unique<TestClient>(server->port());
  client->Send(bhttp::verb::get, "/watch");
  auto ex = started.get_future().get();
  client.reset();
  ASSERT_EQ(closed.get_future().wait_for(5s), std::future_status::ready);
  EXPECT_TRUE(ex->closed());
  EXPECT_FALSE(ex->WriteChunk("more"));
}

TEST(httpServer, GracefulShutdownFinishesInFlightAndClosesIdle) {
  std::promise<std::shared_ptr<Exchange>> in_flight;
  auto server = StartServer({}, [&](Request&& req, std::shared_ptr<Exchange> ex) {
    if (req.target() == "/slow") {
      in_flight.set_value(ex);
    } else {
      ex->Reply(TextResponse("quick"));
    }
  });
  TestClient idle(server->port());
  idle.Send(bhttp::verb::get, "/quick");
  EXPECT_EQ(idle.Read().body(), "quick");
  TestClient busy(server->port());
  busy.Send(bhttp::verb::get, "/slow");
  auto ex = in_flight.get_future().get();

  std::thread stopper([&] { server->Shutdown(5s); });
  EXPECT_TRUE(idle.ServerClosed());  // the drain has begun
  ex->Reply(TextResponse("finished"));
  auto res = busy.Read();
  EXPECT_EQ(res.body(), "finished");
  EXPECT_FALSE(res.keep_alive());
  stopper.join();
  EXPECT_EQ(server->open_connections(), 0u);
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::socket s(ioc);
  boost::system::error_code ec;
  s.connect({boost::asio::ip::make_address("127.0.0.1"), server->port()}, ec);
  EXPECT_TRUE(ec) << "still accepting after Shutdown";
}

TEST(httpServer, ShutdownDeadlineClosesWhatIsLeft) {
  std::promise<std::shared_ptr<Exchange>> streaming;
  std::atomic<bool> closed{false};
  auto server = StartServer({}, [&](Request&&, std::shared_ptr<Exchange> ex) {
    ex->StartStream(Response{HttpStatus::ok, 11});
    ex->OnClose([&] { closed = true; });
    streaming.set_value(ex);
  });
  TestClient client(server->port());
  client.Send(bhttp::verb::get, "/watch");
  auto ex = streaming.get_future().get();
  auto start = std::chrono::steady_clock::now();
  server->Shutdown(100ms);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
  EXPECT_TRUE(closed);
  EXPECT_FALSE(ex->WriteChunk("late"));
}

TEST(httpServer, ListenErrorIsAStatus) {
  auto first = StartServer({}, Echo);
  ServerOptions options;
  options.port = first->port();
  Server second(options, Echo);
  EXPECT_EQ(second.Start().code(), Code::kUnavailable);
  options.host = "not-an-address";
  Server third(options, Echo);
  EXPECT_EQ(third.Start().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace septa::http
