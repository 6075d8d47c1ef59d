// Internal to septa_http: what a connection and a handler share about one
// request while it is answered. Not part of the public API.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "services/http/server.h"

namespace septa::http::internal {

enum class Phase {
  kWaiting,      // the handler has not answered yet
  kReplied,      // `response` is complete, not yet handed to the writer
  kStreaming,    // chunked response started; `chunks` may grow
  kStreamEnded,  // no more chunks will come
  kDone,         // fully handed to the writer
};

struct ExchangeState {
  // Set once when the request is read; never changed after.
  unsigned version = 11;
  bool request_keep_alive = true;
  bool head_request = false;

  std::mutex mu;  // guards everything below
  Phase phase = Phase::kWaiting;
  std::optional<Response> response;  // the reply, or the stream's head
  bool head_written = false;
  // Framed chunks not yet written, as parts (some shared with other exchanges).
  std::vector<std::shared_ptr<const std::string>> chunks;
  std::size_t chunk_bytes = 0;  // their size
  bool closed = false;
  std::vector<std::function<void()>> on_close;
};

// The connection side of an exchange, implemented per stream type.
class ConnectionBase : public std::enable_shared_from_this<ConnectionBase> {
 public:
  virtual ~ConnectionBase() = default;
  // Asks the connection (on its own strand) to write whatever became ready.
  virtual void Kick() = 0;
  // Starts reading (and the TLS handshake), on its own strand.
  virtual void Launch() = 0;
  // Stops reading new requests and closes once those in flight are answered.
  virtual void BeginDrain() = 0;
  // Drops the connection (on its own strand).
  virtual void Abort() = 0;
  virtual const ConnectionInfo& info() const = 0;
  virtual std::size_t max_stream_buffer() const = 0;

  // Idleness, read by the acceptor to pick a connection to shed: since when
  // the connection has waited for a next request with nothing in flight, or
  // one of the markers below.
  static constexpr std::int64_t kBusy = -1;
  static constexpr std::int64_t kShed = -2;  // claimed by the acceptor, closing
  std::atomic<std::int64_t> idle_since{std::chrono::steady_clock::now().time_since_epoch().count()};

  // Before Launch(): instead of reading requests, answer 503 with
  // Retry-After and close (after the TLS handshake, so that a TLS client can
  // read it).
  void Refuse() {
    refuse_ = true;
    idle_since = kBusy;
  }

  // Busy -> idle (an idle connection keeps its earlier timestamp).
  void MarkIdle() {
    std::int64_t busy = kBusy;
    idle_since.compare_exchange_strong(busy, std::chrono::steady_clock::now().time_since_epoch().count());
  }
  // Idle -> busy; false when the acceptor has already claimed it to be shed.
  bool MarkBusy() { return idle_since.exchange(kBusy) != kShed; }

 protected:
  bool refuse_ = false;
};

// The handler's handle on an exchange; see Exchange in server.h.
class ExchangeHandle final : public Exchange {
 public:
  ExchangeHandle(std::shared_ptr<ConnectionBase> conn, std::shared_ptr<ExchangeState> state)
      : conn_(std::move(conn)), state_(std::move(state)) {}
  ~ExchangeHandle() override;

  const ConnectionInfo& connection() const override { return conn_->info(); }
  void Reply(Response response) override;
  void StartStream(Response head) override;
  using Exchange::WriteChunk;
  bool WriteChunk(std::vector<std::shared_ptr<const std::string>> parts) override;
  void EndStream() override;
  void OnClose(std::function<void()> callback) override;
  bool closed() const override;

 private:
  std::shared_ptr<ConnectionBase> conn_;
  std::shared_ptr<ExchangeState> state_;
};

// Marks the exchange closed and returns the callbacks to run (outside locks).
std::vector<std::function<void()>> MarkClosed(ExchangeState& state);

}  // namespace septa::http::internal
