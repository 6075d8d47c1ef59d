// The real ProviderHttp (kube::Transport) against a one-connection HTTP
// server on loopback: an answer past 1 MiB is refused unread, one that
// never comes ends at the timeout, a form is posted as such.
#include "services/oidc/provider_http.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <functional>
#include <future>
#include <thread>

namespace septa::oidc {
namespace {

using testing::HasSubstr;

// Accepts one connection, reads the request head (and a body of
// Content-Length), and hands the request to `answer`, which writes on the
// socket; a held answer waits until the test ends.
class OneShotServer {
 public:
  explicit OneShotServer(std::function<void(int fd, const std::string& request)> answer) {
    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    if (::bind(listener_, reinterpret_cast<sockaddr*>(&address), size) != 0 || ::listen(listener_, 1) != 0 ||
        ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
      ADD_FAILURE() << "no loopback socket";
      return;
    }
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this, answer = std::move(answer)] {
      const int fd = ::accept(listener_, nullptr, nullptr);
      if (fd < 0) return;
      std::string request;
      char buffer[4096];
      while (request.find("\r\n\r\n") == std::string::npos) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n <= 0) break;
        request.append(buffer, static_cast<std::size_t>(n));
      }
      const std::size_t length_at = request.find("Content-Length: ");
      const std::size_t body_at = request.find("\r\n\r\n");
      if (length_at != std::string::npos && body_at != std::string::npos) {
        const std::size_t length = std::stoul(request.substr(length_at + 16));
        while (request.size() < body_at + 4 + length) {
          const ssize_t n = ::read(fd, buffer, sizeof buffer);
          if (n <= 0) break;
          request.append(buffer, static_cast<std::size_t>(n));
        }
      }
      answer(fd, request);
      ::close(fd);
    });
  }
  ~OneShotServer() {
    ::shutdown(listener_, SHUT_RDWR);
    ::close(listener_);
    if (thread_.joinable()) thread_.join();
  }
  std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }

 private:
  int listener_ = -1;
  int port_ = 0;
  std::thread thread_;
};

void Write(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) return;  // the client hung up: it read enough
    done += static_cast<std::size_t>(n);
  }
}

// Header and body in one write: the body arrives with the header, where
// Beast 1.74's eager parse used to drop the limit (services/kube/transport.cc).
TEST(ProviderHttp, AnAnswerPastOneMebibyteIsRefused) {
  OneShotServer server([](int fd, const std::string&) {
    const std::string body(2 << 20, 'x');
    Write(fd, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
                  "\r\n\r\n" + body);
  });
  auto reply = NewProviderHttp(std::chrono::seconds(10))->Get(server.url("/.well-known/openid-configuration"));
  ASSERT_FALSE(reply.ok()) << "HTTP " << reply->status << " with " << reply->body.size() << " bytes";
  EXPECT_EQ(reply.status().code(), Code::kUnavailable);
  EXPECT_THAT(reply.status().message(), HasSubstr("the answer is longer than 1024 KiB"));
}

TEST(ProviderHttp, AnAnswerThatNeverComesEndsAtTheTimeout) {
  std::promise<void> done;
  std::shared_future<void> finished = done.get_future().share();
  OneShotServer server([finished](int, const std::string&) { finished.wait(); });
  auto reply = NewProviderHttp(std::chrono::milliseconds(200))->Get(server.url("/slow"));
  done.set_value();
  EXPECT_EQ(reply.status().code(), Code::kDeadlineExceeded);
  EXPECT_THAT(reply.status().message(), HasSubstr("GET " + server.url("/slow")));
}

TEST(ProviderHttp, AFormIsPostedAsOne) {
  std::string seen;
  {
    OneShotServer server([&seen](int fd, const std::string& request) {
      seen = request;
      Write(fd,
            "HTTP/1.1 400 Bad Request\r\nContent-Length: 27\r\nConnection: "
            "close\r\n\r\n{\"error\":\"invalid_grant\"}\r\n");
    });
    auto reply = NewProviderHttp(std::chrono::seconds(10))->PostForm(server.url("/token"), "a=b&c=d", "Basic eDp5");
    ASSERT_TRUE(reply.ok()) << reply.status().ToString();
    EXPECT_EQ(reply->status, 400);
    EXPECT_THAT(reply->body, HasSubstr("invalid_grant"));
  }
  EXPECT_THAT(seen, HasSubstr("POST /token HTTP/1.1\r\n"));
  EXPECT_THAT(seen, HasSubstr("Content-Type: application/x-www-form-urlencoded\r\n"));
  EXPECT_THAT(seen, HasSubstr("\r\n\r\na=b&c=d"));
  EXPECT_THAT(seen, HasSubstr("Authorization: Basic eDp5\r\n"));
}

}  // namespace
}  // namespace septa::oidc
