// ServerOptions::max_connections: at the cap the oldest idle keep-alive
// connection makes room; with none idle a new connection gets 503.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <boost/beast/http.hpp>
#include <filesystem>
#include <future>
#include <mutex>

#include "services/http/server.h"
#include "tests/support/sanitizer_build.h"
#include "tests/unit/services/http/test_client.h"

namespace septa::http {
namespace {

namespace bhttp = boost::beast::http;
using testing::TestClient;
using testing::TextResponse;

TEST(httpConnectionLimit, OldestIdleConnectionMakesRoom) {
  ServerOptions options;
  options.max_connections = 3;
  auto server = std::make_unique<Server>(
      options, [](Request&& req, std::shared_ptr<Exchange> ex) { ex->Reply(TextResponse(std::string(req.target()))); });
  ASSERT_TRUE(server->Start().ok());
  std::vector<std::unique_ptr<TestClient>> idle;
  for (int i = 0; i < 3; ++i) {  // each served once, then idle; the first is the oldest
    idle.push_back(std::make_unique<TestClient>(server->port()));
    idle.back()->Send(bhttp::verb::get, "/idle" + std::to_string(i));
    ASSERT_EQ(idle.back()->Read().body(), "/idle" + std::to_string(i));
  }
  TestClient newcomer(server->port());
  newcomer.Send(bhttp::verb::get, "/new");
  EXPECT_EQ(newcomer.Read().body(), "/new");
  EXPECT_TRUE(idle[0]->ServerClosed());
  for (int i = 1; i < 3; ++i) {  // the younger idle ones were left alone
    idle[i]->Send(bhttp::verb::get, "/again");
    EXPECT_EQ(idle[i]->Read().body(), "/again");
  }
}

TEST(httpConnectionLimit, NoIdleConnectionMeans503) {
  ServerOptions options;
  options.max_connections = 2;
  std::mutex mu;
  std::vector<std::shared_ptr<Exchange>> held;
  std::promise<void> both_held;
  auto server = std::make_unique<Server>(options, [&](Request&& req, std::shared_ptr<Exchange> ex) {
    if (req.target() != "/hold") return ex->Reply(TextResponse("fast"));
    std::lock_guard lock(mu);
    held.push_back(std::move(ex));
    if (held.size() == 2) both_held.set_value();
  });
  ASSERT_TRUE(server->Start().ok());
  TestClient busy1(server->port());
  TestClient busy2(server->port());
  busy1.Send(bhttp::verb::get, "/hold");
  busy2.Send(bhttp::verb::get, "/hold");
  ASSERT_EQ(both_held.get_future().wait_for(std::chrono::seconds(5)), std::future_status::ready);

  TestClient refused(server->port());
  refused.Send(bhttp::verb::get, "/fast");
  auto res = refused.Read();
  EXPECT_EQ(res.result(), HttpStatus::service_unavailable);
  EXPECT_EQ(res[bhttp::field::retry_after], "1");
  EXPECT_FALSE(res.keep_alive());
  EXPECT_TRUE(refused.ServerClosed());

  std::lock_guard lock(mu);
  for (auto& ex : held) ex->Reply(TextResponse("held"));
  EXPECT_EQ(busy1.Read().body(), "held");
  EXPECT_EQ(busy2.Read().body(), "held");
}

// Takes every free file descriptor of the process (under a lowered soft
// limit) and gives them back, and the limit, when it goes.
class DescriptorHog {
 public:
  DescriptorHog() {
    getrlimit(RLIMIT_NOFILE, &saved_);
    rlimit low = saved_;
    auto open_now = static_cast<rlim_t>(std::distance(std::filesystem::directory_iterator("/proc/self/fd"), {}));
    low.rlim_cur = std::min(saved_.rlim_cur, open_now + 64);
    setrlimit(RLIMIT_NOFILE, &low);
    for (int fd; (fd = open("/dev/null", O_RDONLY)) >= 0;) held_.push_back(fd);
  }
  ~DescriptorHog() {
    for (int fd : held_) close(fd);
    setrlimit(RLIMIT_NOFILE, &saved_);
  }
  // Frees one descriptor; false when none is held any more.
  bool Release() {
    if (held_.empty()) return false;
    close(held_.back());
    held_.pop_back();
    return true;
  }

 private:
  rlimit saved_{};
  std::vector<int> held_;
};

// With the process out of descriptors accept() fails with EMFILE: the
// acceptor sheds the oldest idle connection and tries again, rather than
// spinning or giving up while the new client waits.
TEST(httpConnectionLimit, OutOfDescriptorsShedsAnIdleConnection) {
  if (test::kAddressSanitizerBuild) {
    GTEST_SKIP() << "UBSan's vptr check probes memory through a pipe, which cannot be made while this test holds "
                    "every descriptor; the main and TSan builds run it";
  }
  auto server = std::make_unique<Server>(ServerOptions{}, [](Request&& req, std::shared_ptr<Exchange> ex) {
    ex->Reply(TextResponse(std::string(req.target())));
  });
  ASSERT_TRUE(server->Start().ok());
  TestClient idle(server->port());
  idle.Send(bhttp::verb::get, "/idle");
  ASSERT_EQ(idle.Read().body(), "/idle");

  std::unique_ptr<TestClient> newcomer;
  {
    DescriptorHog hog;
    // Free descriptors one by one until the client fits: none is left for
    // the server's accept().
    while (!newcomer && hog.Release()) {
      try {
        newcomer = std::make_unique<TestClient>(server->port());
      } catch (const boost::system::system_error&) {
      }
    }
    ASSERT_TRUE(newcomer);
    newcomer->Send(bhttp::verb::get, "/new");
    boost::system::error_code ec;
    auto res = newcomer->Read(ec);
    EXPECT_FALSE(ec) << ec.message();
    EXPECT_EQ(res.body(), "/new");
  }
  EXPECT_TRUE(idle.ServerClosed());
}

}  // namespace
}  // namespace septa::http
