// A connection's pipelined requests: read ahead up to max_pipelined, executed
// one after another, answered in order. Every wait is for an event (the
// server's on_request_read observer, a handler call), never for time.
#include <gtest/gtest.h>

#include <array>
#include <boost/beast/http.hpp>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

#include "services/http/server.h"
#include "tests/unit/services/http/test_client.h"

namespace septa::http {
namespace {

namespace bhttp = boost::beast::http;
using namespace std::chrono_literals;
using testing::TestClient;
using testing::TextResponse;

constexpr std::size_t kRequests = 5;

std::string PipelinedBatch(std::string_view method) {
  std::string batch;
  for (std::size_t i = 0; i < kRequests; ++i) {
    batch += std::string(method) + " /item/" + std::to_string(i) + " HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\n" +
             std::to_string(i);
  }
  return batch;
}

// What the server did, as seen from its handler and its read observer.
struct Journal {
  std::mutex mu;
  std::condition_variable changed;
  std::size_t reads = 0;
  std::size_t most_in_flight = 0;
  std::vector<std::string> started;    // request bodies in the order their handlers ran
  std::vector<std::string> overtaken;  // handlers that ran before the request ahead was answered
  std::size_t answered = 0;
  std::vector<std::shared_ptr<Exchange>> pending;

  void OnRead(std::size_t in_flight) {
    std::lock_guard lock(mu);
    ++reads;
    most_in_flight = std::max(most_in_flight, in_flight);
    changed.notify_all();
  }
  void OnStart(const std::string& body, std::shared_ptr<Exchange> ex) {
    std::lock_guard lock(mu);
    if (answered != started.size()) overtaken.push_back(body);
    started.push_back(body);
    pending.push_back(std::move(ex));
    changed.notify_all();
  }
  // Waits until request `index` runs and the server has read `reads_at_least`.
  bool WaitFor(std::size_t index, std::size_t reads_at_least) {
    std::unique_lock lock(mu);
    return changed.wait_for(lock, 5s, [&] { return started.size() > index && reads >= reads_at_least; });
  }
  std::shared_ptr<Exchange> TakeForAnswer(std::size_t index) {
    std::lock_guard lock(mu);
    ++answered;  // counted before Reply: the next handler may start the moment it is sent
    return pending[index];
  }
};

// Five pipelined writes on one connection, answered from worker threads, each
// released by the test only once the server has read the request behind it:
// a server that hands out the next request before this one is answered has
// started it by then.
TEST(httpPipelining, RequestsOfOneConnectionExecuteInOrder) {
  Journal journal;
  std::array<std::promise<void>, kRequests> release;
  std::mutex workers_mu;
  std::vector<std::thread> workers;
  ServerOptions options;
  options.on_request_read = [&](std::size_t in_flight) { journal.OnRead(in_flight); };
  auto server = std::make_unique<Server>(options, [&](Request&& req, std::shared_ptr<Exchange> ex) {
    std::string body = req.body();
    journal.OnStart(body, ex);
    std::size_t index = std::stoul(body);
    std::lock_guard lock(workers_mu);
    workers.emplace_back([&journal, &release, index, body] {
      release[index].get_future().wait();
      journal.TakeForAnswer(index)->Reply(TextResponse("done " + body));
    });
  });
  ASSERT_TRUE(server->Start().ok());
  TestClient client(server->port());
  client.SendRaw(PipelinedBatch("PATCH"));
  for (std::size_t i = 0; i < kRequests; ++i) {
    ASSERT_TRUE(journal.WaitFor(i, std::min(i + 2, kRequests))) << "request " << i << " never ran";
    release[i].set_value();
  }
  for (std::size_t i = 0; i < kRequests; ++i) EXPECT_EQ(client.Read().body(), "done " + std::to_string(i));
  {
    std::lock_guard lock(workers_mu);
    for (auto& w : workers) w.join();
  }
  std::lock_guard lock(journal.mu);
  EXPECT_EQ(journal.started, (std::vector<std::string>{"0", "1", "2", "3", "4"}));
  EXPECT_TRUE(journal.overtaken.empty()) << "requests that ran before the one ahead was answered: "
                                         << ::testing::PrintToString(journal.overtaken);
}

// A stream counts as an answer: the next request runs once the head is sent.
TEST(httpPipelining, StartedStreamLetsTheNextRequestRun) {
  std::promise<std::shared_ptr<Exchange>> stream;
  std::promise<void> second_ran;
  auto server = std::make_unique<Server>(ServerOptions{}, [&](Request&& req, std::shared_ptr<Exchange> ex) {
    if (req.target() == "/watch") {
      ex->StartStream(TextResponse(""));
      stream.set_value(ex);
    } else {
      ex->Reply(TextResponse("second"));
      second_ran.set_value();
    }
  });
  ASSERT_TRUE(server->Start().ok());
  TestClient client(server->port());
  client.SendRaw("GET /watch HTTP/1.1\r\nHost: x\r\n\r\nGET /next HTTP/1.1\r\nHost: x\r\n\r\n");
  auto ex = stream.get_future().get();
  ASSERT_EQ(second_ran.get_future().wait_for(5s), std::future_status::ready);
  ex->WriteChunk("event");
  ex->EndStream();
  EXPECT_EQ(client.Read().body(), "event");
  EXPECT_EQ(client.Read().body(), "second");
}

// With max_pipelined = 2, the third request is not read before the first is
// answered. The observer runs after the server has asked for the next
// request, so a server ignoring the limit has read it before the test answers.
TEST(httpPipelining, ReadAheadIsBounded) {
  Journal journal;
  ServerOptions options;
  options.max_pipelined = 2;
  options.on_request_read = [&](std::size_t in_flight) { journal.OnRead(in_flight); };
  auto server = std::make_unique<Server>(
      options, [&](Request&& req, std::shared_ptr<Exchange> ex) { journal.OnStart(req.body(), std::move(ex)); });
  ASSERT_TRUE(server->Start().ok());
  TestClient client(server->port());
  client.SendRaw(PipelinedBatch("POST"));
  for (std::size_t i = 0; i < kRequests; ++i) {
    ASSERT_TRUE(journal.WaitFor(i, std::min(i + 2, kRequests)));
    {
      std::lock_guard lock(journal.mu);
      EXPECT_EQ(journal.reads, std::min(i + 2, kRequests))
          << "read past the limit before request " << i << " was answered";
    }
    journal.TakeForAnswer(i)->Reply(TextResponse("ok " + std::to_string(i)));
  }
  for (std::size_t i = 0; i < kRequests; ++i) EXPECT_EQ(client.Read().body(), "ok " + std::to_string(i));
  std::lock_guard lock(journal.mu);
  EXPECT_EQ(journal.most_in_flight, 2u);
}

}  // namespace
}  // namespace septa::http
