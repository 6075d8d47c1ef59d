// Internal to septa_http: one accepted connection, plain or TLS. Everything
// here runs on the connection's strand; handlers reach it only through
// ExchangeHandle, which posts.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <unordered_map>

#include "services/http/exchange_state.h"

namespace septa::http::internal {

// What every connection of one server shares: the io_context, options,
// handler and the registry the server drains. Connections keep it alive, so
// an Exchange held past the server's end never touches a dead io_context.
struct ServerCore {
  boost::asio::io_context ioc;
  ServerOptions options;
  Handler handler;
  std::mutex mu;
  std::condition_variable idle;  // signalled when a connection unregisters
  std::unordered_map<ConnectionBase*, std::weak_ptr<ConnectionBase>> connections;
  bool draining = false;

  void Unregister(ConnectionBase* conn);
  // Closes the connection idle the longest; false when none is idle.
  bool ShedOldestIdle();

  // Posts `fn` (which holds its connection) to `ex`, unless the I/O threads
  // are gone for good: nothing would run it then, and since the connection
  // holds this core and so the io_context that stores it, it would never be
  // freed (an Exchange kept past Shutdown() posts when it is dropped).
  template <class Executor, class Fn>
  void Post(const Executor& ex, Fn&& fn) {
    std::lock_guard lock(post_mu);
    if (!stopped) boost::asio::post(ex, std::forward<Fn>(fn));
  }
  // Called once the I/O threads have joined: refuses later posts and runs
  // those already queued, so none is left holding its connection.
  void Stop();

 private:
  std::mutex post_mu;
  bool stopped = false;
};

// A timer whose stale completions are ignored: Arm() starts a new
// generation, Disarm() invalidates the current one.
class Deadline {
 public:
  explicit Deadline(const boost::asio::any_io_executor& ex) : timer_(ex) {}
  template <class F>
  void Arm(std::chrono::milliseconds after, F on_expiry) {
    std::uint64_t gen = ++generation_;
    timer_.expires_after(after);
    timer_.async_wait([this, gen, f = std::move(on_expiry)](const boost::system::error_code& ec) {
      if (!ec && gen == generation_) f();
    });
  }
  void Disarm() {
    ++generation_;
    timer_.cancel();
  }

 private:
  boost::asio::steady_timer timer_;
  std::uint64_t generation_ = 0;
};

template <class Stream>
class Connection final : public ConnectionBase {
 public:
  Connection(std::shared_ptr<ServerCore> core, Stream stream, ConnectionInfo info);

  void Launch() override;
  void Kick() override;
  void Abort() override;
  void BeginDrain() override;
  const ConnectionInfo& info() const override { return info_; }
  std::size_t max_stream_buffer() const override { return core_->options.max_stream_buffer; }

 private:
  std::shared_ptr<Connection> self() { return std::static_pointer_cast<Connection>(shared_from_this()); }
  boost::asio::ip::tcp::socket& socket();

  void Start();
  void Drain();
  void ReadMore();
  void OnFirstBytes(const boost::system::error_code& ec, std::size_t n);
  void ReadRequest();
  void OnHeader(const boost::system::error_code& ec);
  void ReadBody();
  void EndRead();
  void OnRequest(const boost::system::error_code& ec);
  void Enqueue(Request request);
  void RunNextRequest();
  void Reject(HttpStatus status, std::string_view message);
  void RejectWith(Response response);
  void RefuseNow();

  void Pump();
  bool KeepAlive(const ExchangeState& st, const Response& res) const;
  void WriteResponse(std::shared_ptr<ExchangeState> st, Response res);
  void WriteStreamHead(std::shared_ptr<ExchangeState> st, Response head);
  void WriteRaw(std::vector<std::shared_ptr<const std::string>> parts, bool finishes_exchange);
  void OnWritten(const boost::system::error_code& ec, bool finishes_exchange);
  void FinishExchange();

  void CloseAfterResponse();
  void Close();

  std::shared_ptr<ServerCore> core_;
  Stream stream_;
  ConnectionInfo info_;
  boost::beast::flat_buffer buffer_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  Deadline read_deadline_;
  Deadline write_deadline_;
  std::deque<std::shared_ptr<ExchangeState>> queue_;  // in request order
  // Requests read but not yet handed to the handler: a connection's requests
  // run one after another, the next once `running_` has been answered.
  std::deque<std::pair<std::shared_ptr<ExchangeState>, Request>> waiting_;
  std::shared_ptr<ExchangeState> running_;
  bool reading_ = false;       // a read is outstanding
  bool parsing_ = false;       // a request has started to arrive
  bool read_stopped_ = false;  // no further requests will be read
  bool writing_ = false;
  bool close_after_write_ = false;  // the head exchange's response closes the connection
  bool draining_ = false;
  bool closed_ = false;
};

using PlainConnection = Connection<boost::asio::ip::tcp::socket>;
using TlsConnection = Connection<boost::asio::ssl::stream<boost::asio::ip::tcp::socket>>;

// The verified client certificate of an established TLS stream, if any.
std::optional<PeerIdentity> ExtractPeerIdentity(SSL* ssl);
// The certificates the client sent, leaf first, verified or not.
std::vector<std::shared_ptr<x509_st>> ExtractPeerChain(SSL* ssl);

}  // namespace septa::http::internal
