#include "services/http/connection.h"

#include <boost/beast/core/stream_traits.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

#include "services/http/request_head.h"

namespace septa::http::internal {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using boost::system::error_code;

namespace {

constexpr std::size_t kFirstReadSize = 4096;
constexpr std::string_view kLastChunk = "0\r\n\r\n";

template <class Stream>
constexpr bool kIsTls = !std::is_same_v<Stream, net::ip::tcp::socket>;

bool IsHttpParseError(const error_code& ec) {
  return ec.category() == bhttp::make_error_code(bhttp::error::bad_method).category() &&
         ec != bhttp::error::end_of_stream && ec != bhttp::error::partial_message;
}

bool AsksToClose(const Response& res) {
  auto it = res.find(bhttp::field::connection);
  return it != res.end() && beast::iequals(it->value(), "close");
}

}  // namespace

void ServerCore::Unregister(ConnectionBase* conn) {
  std::lock_guard lock(mu);
  connections.erase(conn);
  idle.notify_all();
}

void ServerCore::Stop() {
  {
    std::lock_guard lock(post_mu);
    stopped = true;
  }
  ioc.restart();
  ioc.poll();
}

bool ServerCore::ShedOldestIdle() {
  std::lock_guard lock(mu);
  while (true) {
    std::shared_ptr<ConnectionBase> oldest;
    std::int64_t oldest_since = 0;
    for (auto& [ptr, weak] : connections) {
      auto conn = weak.lock();
      if (!conn) continue;
      std::int64_t since = conn->idle_since.load();
      if (since >= 0 && (!oldest || since < oldest_since)) {
        oldest = std::move(conn);
        oldest_since = since;
      }
    }
    if (!oldest) return false;
    // Lost the race when it became busy meanwhile: look again.
    if (oldest->idle_since.compare_exchange_strong(oldest_since, ConnectionBase::kShed)) {
      oldest->Abort();
      return true;
    }
  }
}

template <class Stream>
Connection<Stream>::Connection(std::shared_ptr<ServerCore> core, Stream stream, ConnectionInfo info)
    : core_(std::move(core)),
      stream_(std::move(stream)),
      info_(std::move(info)),
      read_deadline_(stream_.get_executor()),
      write_deadline_(stream_.get_executor()) {}

template <class Stream>
net::ip::tcp::socket& Connection<Stream>::socket() {
  return beast::get_lowest_layer(stream_);
}

template <class Stream>
void Connection<Stream>::Start() {
  if (closed_) return;
  if constexpr (kIsTls<Stream>) {
    read_deadline_.Arm(core_->options.read_timeout, [this, s = self()] { Close(); });
    stream_.async_handshake(net::ssl::stream_base::server, [this, s = self()](const error_code& ec) {
      read_deadline_.Disarm();
      if (ec || closed_) return Close();
      info_.peer = ExtractPeerIdentity(stream_.native_handle());
      info_.peer_chain = ExtractPeerChain(stream_.native_handle());
      if (refuse_) return RefuseNow();
      ReadMore();
    });
  } else if (refuse_) {
    RefuseNow();
  } else {
    ReadMore();
  }
}

template <class Stream>
void Connection<Stream>::Launch() {
  core_->Post(stream_.get_executor(), [s = self()] { s->Start(); });
}

template <class Stream>
void Connection<Stream>::BeginDrain() {
  core_->Post(stream_.get_executor(), [s = self()] { s->Drain(); });
}

template <class Stream>
void Connection<Stream>::Kick() {
  core_->Post(stream_.get_executor(), [s = self()] { s->Pump(); });
}

template <class Stream>
void Connection<Stream>::Abort() {
  core_->Post(stream_.get_executor(), [s = self()] { s->Close(); });
}

template <class Stream>
void Connection<Stream>::Drain() {
  draining_ = true;
  if (queue_.empty() && !parsing_) Close();
}

// Reading: wait (under the idle timeout when nothing is in flight) for the
// first byte of the next request, then read it whole under the read timeout.
template <class Stream>
void Connection<Stream>::ReadMore() {
  if (reading_ || read_stopped_ || draining_ || closed_) return;
  if (queue_.size() >= core_->options.max_pipelined) return;
  reading_ = true;
  if (buffer_.size() > 0) return ReadRequest();
  if (queue_.empty()) {
    MarkIdle();
    read_deadline_.Arm(core_->options.idle_timeout, [this, s = self()] { Close(); });
  }
  stream_.async_read_some(buffer_.prepare(kFirstReadSize),
                          [this, s = self()](const error_code& ec, std::size_t n) { OnFirstBytes(ec, n); });
}

template <class Stream>
void Connection<Stream>::OnFirstBytes(const error_code& ec, std::size_t n) {
  read_deadline_.Disarm();
  if (ec || closed_ || read_stopped_) return Close();  // includes the client closing while idle
  if (!MarkBusy()) return Close();                     // shed to make room for a new connection
  buffer_.commit(n);
  if (draining_ && queue_.empty()) return Close();
  ReadRequest();
}

template <class Stream>
void Connection<Stream>::ReadRequest() {
  parsing_ = true;
  parser_.emplace();
  parser_->body_limit(core_->options.body_limit);
  parser_->header_limit(static_cast<std::uint32_t>(core_->options.header_limit));
  read_deadline_.Arm(core_->options.read_timeout, [this, s = self()] { Close(); });
  bhttp::async_read_header(stream_, buffer_, *parser_,
                           [this, s = self()](const error_code& ec, std::size_t) { OnHeader(ec); });
}

// A client that sent "Expect: 100-continue" (curl does for bodies over 1 MiB)
// holds the body back until it hears "100 Continue", or for a second. The
// interim answer goes out only when no response is being written or owed:
// it must not land inside another response's bytes. A body over the limit is
// refused here already, before the client sends it.
template <class Stream>
void Connection<Stream>::OnHeader(const error_code& ec) {
  if (!ec && !closed_ && !read_stopped_) {
    if (auto problem = ValidateRequestHead(parser_->get())) {
      EndRead();
      return Reject(problem->status, problem->message);
    }
  }
  if (ec || closed_ || read_stopped_ || parser_->is_done()) return OnRequest(ec);
  const Request& head = parser_->get();
  const bool wants_continue = head.version() >= 11 && boost::beast::iequals(head[bhttp::field::expect], "100-continue");
  if (!wants_continue || writing_ || !queue_.empty()) return ReadBody();
  static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
  writing_ = true;
  net::async_write(stream_, net::buffer(kContinue.data(), kContinue.size()),
                   [this, s = self()](const error_code& write_error, std::size_t) {
                     writing_ = false;
                     if (write_error || closed_) return Close();
                     ReadBody();
                   });
}

template <class Stream>
void Connection<Stream>::ReadBody() {
  bhttp::async_read(stream_, buffer_, *parser_,
                    [this, s = self()](const error_code& ec, std::size_t) { OnRequest(ec); });
}

template <class Stream>
void Connection<Stream>::EndRead() {
  read_deadline_.Disarm();
  reading_ = false;
  parsing_ = false;
}

template <class Stream>
void Connection<Stream>::OnRequest(const error_code& ec) {
  EndRead();
  if (closed_) return;
  if (read_stopped_) return Close();  // a response already announced the close
  if (ec == bhttp::error::body_limit) return Reject(HttpStatus::payload_too_large, "request body too large");
  if (ec == bhttp::error::header_limit)
    return Reject(HttpStatus::request_header_fields_too_large, "request headers too large");
  if (IsHttpParseError(ec)) return Reject(HttpStatus::bad_request, "malformed HTTP request: " + ec.message());
  if (ec) return Close();
  Enqueue(parser_->release());
  ReadMore();
  if (core_->options.on_request_read) core_->options.on_request_read(queue_.size());
}

template <class Stream>
void Connection<Stream>::Enqueue(Request request) {
  auto st = std::make_shared<ExchangeState>();
  st->version = request.version();
  st->request_keep_alive = request.keep_alive();
  st->head_request = request.method() == bhttp::verb::head;
  queue_.push_back(st);
  waiting_.emplace_back(std::move(st), std::move(request));
  RunNextRequest();
}

// Hands the oldest waiting request to the handler once the one before it has
// been answered (Reply or StartStream), so that a client's pipelined writes
// take effect in the order it sent them. Reading ahead continues meanwhile.
template <class Stream>
void Connection<Stream>::RunNextRequest() {
  while (!waiting_.empty() && !closed_) {
    if (running_) {
      std::lock_guard lock(running_->mu);
      if (running_->phase == Phase::kWaiting && !running_->closed) return;
    }
    auto [st, request] = std::move(waiting_.front());
    waiting_.pop_front();
    running_ = st;
    auto handle = std::make_shared<ExchangeHandle>(shared_from_this(), std::move(st));
    try {
      core_->handler(std::move(request), handle);
    } catch (const std::exception&) {
      handle->Reply(core_->options.error_formatter(HttpStatus::internal_server_error, "internal error"));
    }
  }
}

// Answers a request that could not be read, after those before it, and then
// closes: the rest of the byte stream cannot be trusted.
template <class Stream>
void Connection<Stream>::Reject(HttpStatus status, std::string_view message) {
  RejectWith(core_->options.error_formatter(status, message));
}

template <class Stream>
void Connection<Stream>::RefuseNow() {
  Response res = core_->options.error_formatter(HttpStatus::service_unavailable, "too many connections");
  res.set(bhttp::field::retry_after, "1");
  RejectWith(std::move(res));
}

template <class Stream>
void Connection<Stream>::RejectWith(Response response) {
  read_stopped_ = true;
  auto st = std::make_shared<ExchangeState>();
  st->request_keep_alive = false;
  st->response = std::move(response);
  st->phase = Phase::kReplied;
  queue_.push_back(std::move(st));
  Pump();
}

// Writing: responses leave strictly in request order; the head of the queue
// blocks the ones behind it until it is fully written.
template <class Stream>
void Connection<Stream>::Pump() {
  RunNextRequest();  // an answer may have let the next request run
  if (writing_ || closed_ || queue_.empty()) return;
  std::shared_ptr<ExchangeState> st = queue_.front();
  std::unique_lock lock(st->mu);
  switch (st->phase) {
    case Phase::kWaiting:
    case Phase::kDone: return;
    case Phase::kReplied: {
      Response res = std::move(*st->response);
      st->response.reset();
      st->phase = Phase::kDone;
      lock.unlock();
      return WriteResponse(std::move(st), std::move(res));
    }
    case Phase::kStreaming:
    case Phase::kStreamEnded:
      if (!st->head_written) {
        st->head_written = true;
        Response head = std::move(*st->response);
        st->response.reset();
        lock.unlock();
        return WriteStreamHead(std::move(st), std::move(head));
      }
      if (!st->chunks.empty()) {
        std::vector<std::shared_ptr<const std::string>> parts = std::move(st->chunks);
        st->chunks.clear();
        st->chunk_bytes = 0;
        lock.unlock();
        return WriteRaw(std::move(parts), false);
      }
      if (st->phase == Phase::kStreamEnded) {
        st->phase = Phase::kDone;
        lock.unlock();
        return WriteRaw({std::make_shared<const std::string>(kLastChunk)}, true);
      }
      return;
  }
}

template <class Stream>
bool Connection<Stream>::KeepAlive(const ExchangeState& st, const Response& res) const {
  return st.request_keep_alive && !draining_ && !read_stopped_ && !AsksToClose(res);
}

template <class Stream>
void Connection<Stream>::WriteResponse(std::shared_ptr<ExchangeState> st, Response res) {
  res.version(st->version);
  close_after_write_ = !KeepAlive(*st, res);
  res.keep_alive(!close_after_write_);
  res.prepare_payload();
  if (st->head_request) res.body().clear();  // Content-Length stays that of the GET
  writing_ = true;
  write_deadline_.Arm(core_->options.write_timeout, [this, s = self()] { Close(); });
  auto msg = std::make_shared<Response>(std::move(res));
  bhttp::async_write(stream_, *msg,
                     [this, s = self(), msg](const error_code& ec, std::size_t) { OnWritten(ec, true); });
}

template <class Stream>
void Connection<Stream>::WriteStreamHead(std::shared_ptr<ExchangeState> st, Response head) {
  head.version(st->version);
  close_after_write_ = !KeepAlive(*st, head);
  head.keep_alive(!close_after_write_);
  head.erase(bhttp::field::content_length);
  head.chunked(true);
  struct HeadWrite {
    explicit HeadWrite(Response m) : msg(std::move(m)) {}
    Response msg;
    bhttp::response_serializer<bhttp::string_body> serializer{msg};
  };
  auto w = std::make_shared<HeadWrite>(std::move(head));
  writing_ = true;
  write_deadline_.Arm(core_->options.write_timeout, [this, s = self()] { Close(); });
  bhttp::async_write_header(stream_, w->serializer,
                            [this, s = self(), w](const error_code& ec, std::size_t) { OnWritten(ec, false); });
}

template <class Stream>
void Connection<Stream>::WriteRaw(std::vector<std::shared_ptr<const std::string>> parts, bool finishes_exchange) {
  // The parts stay held until written; the buffers only point into them.
  auto held = std::make_shared<std::vector<std::shared_ptr<const std::string>>>(std::move(parts));
  std::vector<net::const_buffer> buffers;
  buffers.reserve(held->size());
  for (const auto& part : *held) buffers.push_back(net::buffer(*part));
  writing_ = true;
  write_deadline_.Arm(core_->options.write_timeout, [this, s = self()] { Close(); });
  net::async_write(stream_, buffers, [this, s = self(), held, finishes_exchange](const error_code& ec, std::size_t) {
    OnWritten(ec, finishes_exchange);
  });
}

template <class Stream>
void Connection<Stream>::OnWritten(const error_code& ec, bool finishes_exchange) {
  write_deadline_.Disarm();
  writing_ = false;
  if (closed_) return;
  if (ec) return Close();
  if (finishes_exchange) FinishExchange();
  Pump();
}

template <class Stream>
void Connection<Stream>::FinishExchange() {
  queue_.pop_front();
  if (close_after_write_) return CloseAfterResponse();
  if (draining_ && queue_.empty() && !parsing_) return Close();
  if (queue_.empty() && reading_ && !parsing_) {
    // The read for the next request started while this one was in flight,
    // without an idle deadline; the connection is idle from now on.
    MarkIdle();
    read_deadline_.Arm(core_->options.idle_timeout, [this, s = self()] { Close(); });
  }
  ReadMore();
}

// Half-closes and waits briefly for the client to close too, so that unread
// request bytes do not turn our FIN into a reset that destroys the response.
template <class Stream>
void Connection<Stream>::CloseAfterResponse() {
  read_stopped_ = true;
  error_code ignored;
  socket().shutdown(net::ip::tcp::socket::shutdown_send, ignored);
  read_deadline_.Arm(std::chrono::milliseconds(1000), [this, s = self()] { Close(); });
  if (reading_) return;  // the outstanding read closes when it completes
  auto sink = std::make_shared<std::array<char, 4096>>();
  auto drain = std::make_shared<std::function<void()>>();
  *drain = [this, s = self(), sink, drain] {
    socket().async_read_some(net::buffer(*sink), [this, s, sink, drain](const error_code& ec, std::size_t) {
      if (ec || closed_) {
        *drain = nullptr;  // break the self-reference
        return Close();
      }
      (*drain)();
    });
  };
  (*drain)();
}

template <class Stream>
void Connection<Stream>::Close() {
  if (closed_) return;
  closed_ = true;
  read_deadline_.Disarm();
  write_deadline_.Disarm();
  error_code ignored;
  socket().shutdown(net::ip::tcp::socket::shutdown_both, ignored);
  socket().close(ignored);
  std::vector<std::function<void()>> callbacks;
  for (auto& st : queue_) {
    auto cbs = MarkClosed(*st);
    for (auto& cb : cbs) callbacks.push_back(std::move(cb));
  }
  queue_.clear();
  waiting_.clear();
  running_.reset();
  for (auto& cb : callbacks) cb();
  core_->Unregister(this);
}

template class Connection<net::ip::tcp::socket>;
template class Connection<net::ssl::stream<net::ip::tcp::socket>>;

}  // namespace septa::http::internal
