// HTTP/1.1 to one API server over Beast and OpenSSL: pooled keep-alive
// connections, per-call timeouts, streamed (chunked) bodies. Beast stays in
// transport.cc.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "services/kube/config.h"

namespace septa::kube {

struct HttpRequest {
  HttpRequest() = default;
  HttpRequest(std::string m, std::string t, std::string b = "", std::string ct = "")
      : method(std::move(m)), target(std::move(t)), body(std::move(b)), content_type(std::move(ct)) {}

  std::string method = "GET";
  std::string target;  // path and query
  std::string body;
  std::string content_type;
  std::string accept = "application/json";
  // Send: a longer response body fails the call (UNAVAILABLE) unread.
  std::uint64_t max_body_bytes = 1ull << 31;
};

struct HttpResponse {
  int status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // lowercase names
};

// Lets another thread end a running Stream().
class StreamCancel {
 public:
  void Cancel();
  bool cancelled() const { return cancelled_; }

 private:
  friend class Transport;
  std::mutex mu_;
  std::atomic<bool> cancelled_{false};
  std::function<void()> hook_;  // closes the stream's socket on its I/O context
};

class Transport {
 public:
  static Result<std::unique_ptr<Transport>> Create(const ClientConfig& config,
                                                   std::chrono::milliseconds connect_timeout);
  ~Transport();

  // One request and its whole response, within `timeout`.
  Result<HttpResponse> Send(const HttpRequest& request, const std::string& authorization,
                            std::chrono::milliseconds timeout);

  // Sends `request`; a 2xx body is handed to `on_data` as it arrives (return
  // false to stop), waiting at most `idle_timeout` between pieces. A non-2xx
  // response is returned whole instead. Ends when the server ends the body,
  // on_data says stop, or `cancel` fires.
  Result<HttpResponse> Stream(const HttpRequest& request, const std::string& authorization,
                              std::chrono::milliseconds idle_timeout,
                              const std::function<bool(std::string_view)>& on_data, StreamCancel* cancel);

  struct Connection;

 private:
  Transport() = default;
  Result<std::unique_ptr<Connection>> Connect();
  std::unique_ptr<Connection> TakeIdle();
  void ReturnIdle(std::unique_ptr<Connection> conn);

  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::mutex mu_;
  std::vector<std::unique_ptr<Connection>> idle_;
};

}  // namespace septa::kube
