#include "services/kube/transport.h"

#include <openssl/x509v3.h>
#include <boost/asio/connect.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <condition_variable>
#include <limits>
#include <optional>
#include <thread>

#include "common/ip_address.h"

namespace septa::kube {

namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
namespace bhttp = boost::beast::http;
using boost::system::error_code;
using tcp = net::ip::tcp;

struct Transport::Impl {
  bool tls = true;
  std::string host;
  std::string port;
  std::string path_prefix;
  std::string host_header;
  std::string verify_name;
  std::unique_ptr<ssl::context> ssl_ctx;
  std::chrono::milliseconds connect_timeout{10'000};
};

namespace {

// Every connection of every Transport in the process runs on these threads.
// An io_context per connection cost three descriptors each (an epoll, an
// eventfd and a timerfd) and a resolver thread per connect; a syncer
// watching 1,000 virtual clusters ran out of descriptors (BENCHMARKS.md,
// "1,000 × 10"). Callers still block: each operation is started on its
// connection's strand and the caller waits for its completion.
// Never destroyed: connections may outlive static destruction order, and
// the threads end with the process.
net::io_context& SharedIoContext() {
  struct Loop {
    net::io_context ioc;
    net::executor_work_guard<net::io_context::executor_type> work = net::make_work_guard(ioc);
    std::vector<std::thread> threads;
    Loop() {
      for (int i = 0; i < 2; ++i) {
        threads.emplace_back([this] {
          pthread_setname_np(pthread_self(), "kube-io");
          ioc.run();
        });
      }
    }
  };
  static Loop* loop = new Loop();
  return loop->ioc;
}

}  // namespace

struct Transport::Connection {
  using Strand = net::strand<net::io_context::executor_type>;

  Connection() : strand(net::make_strand(SharedIoContext())) {}
  // A close posted by a timeout or a StreamCancel may still be queued: let
  // the strand run it before the sockets go.
  ~Connection() {
    RunOnStrand([] {});
  }

  Strand strand;
  std::optional<tcp::socket> plain;
  std::optional<ssl::stream<tcp::socket>> secure;
  boost::beast::flat_buffer buffer;
  bool reused = false;

  tcp::socket& socket() { return secure ? secure->next_layer() : *plain; }
  void Close() {
    error_code ignored;
    socket().shutdown(tcp::socket::shutdown_both, ignored);
    socket().close(ignored);
  }
  // Starts an operation on the strand with start(complete) and waits for
  // complete(ec) for at most `timeout`; on expiry `abort` runs on the strand
  // (closing the socket by default) and the aborted completion is awaited,
  // so nothing the operation refers to is left in use. Returns false on
  // expiry; `ec` is the completion's error.
  template <class Start>
  bool Run(std::chrono::milliseconds timeout, error_code& ec, Start&& start, std::function<void()> abort = {}) {
    std::unique_lock lock(mu_);
    done_ = false;
    lock.unlock();
    net::post(strand, [this, &ec, &start] {
      start([this, &ec](const error_code& e) {
        std::lock_guard done_lock(mu_);
        ec = e;
        done_ = true;
        cv_.notify_all();
      });
    });
    lock.lock();
    if (cv_.wait_for(lock, timeout, [this] { return done_; })) return true;
    lock.unlock();
    net::post(strand, abort ? std::move(abort) : std::function<void()>([this] { Close(); }));
    lock.lock();
    cv_.wait(lock, [this] { return done_; });
    return false;
  }
  template <class F>
  void WithStream(F&& f) {
    if (secure) {
      f(*secure);
    } else {
      f(*plain);
    }
  }

 private:
  void RunOnStrand(std::function<void()> f) {
    std::mutex mu;
    std::condition_variable cv;
    bool ran = false;
    net::post(strand, [&] {
      f();
      std::lock_guard lock(mu);
      ran = true;
      cv.notify_all();
    });
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return ran; });
  }

  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
};

void StreamCancel::Cancel() {
  std::lock_guard lock(mu_);
  cancelled_ = true;
  if (hook_) hook_();
}

namespace {

// OpenSSL fills a certificate's cached extension data (key identifiers,
// purposes) on its first use in a verification, under the certificate's
// lock, while other verifications read it after a flag check. This
// transport's handshakes run concurrently on one context (several informers
// share a client), so the trusted certificates are cached here, once, before
// any handshake: no handshake writes to shared certificates afterwards.
void CacheTrustedCertificateExtensions(SSL_CTX* ctx) {
  STACK_OF(X509_OBJECT)* objects = X509_STORE_get0_objects(SSL_CTX_get_cert_store(ctx));
  for (int i = 0; i < sk_X509_OBJECT_num(objects); ++i) {
    if (X509* certificate = X509_OBJECT_get0_X509(sk_X509_OBJECT_value(objects, i))) {
      (void)X509_check_purpose(certificate, -1, 0);
    }
  }
}

}  // namespace

Result<std::unique_ptr<Transport>> Transport::Create(const ClientConfig& config,
                                                     std::chrono::milliseconds connect_timeout) {
  std::unique_ptr<Transport> t(new Transport());
  t->impl_ = std::make_unique<Impl>();
  Impl& im = *t->impl_;
  im.connect_timeout = connect_timeout;
  std::string url = config.server;
  if (url.rfind("https://", 0) == 0) {
    url = url.substr(8);
  } else if (url.rfind("http://", 0) == 0) {
    im.tls = false;
    url = url.substr(7);
  } else {
    return InvalidArgument("kube: server URL must start with https:// or http://: \"" + config.server + "\"");
  }
  auto slash = url.find('/');
  if (slash != std::string::npos) {
    im.path_prefix = url.substr(slash);
    while (!im.path_prefix.empty() && im.path_prefix.back() == '/') im.path_prefix.pop_back();
    url = url.substr(0, slash);
  }
  im.host_header = url;
  if (!url.empty() && url.front() == '[') {
    auto close = url.find(']');
    if (close == std::string::npos) return InvalidArgument("kube: bad server URL \"" + config.server + "\"");
    im.host = url.substr(1, close - 1);
    im.port = close + 2 <= url.size() && url[close + 1] == ':' ? url.substr(close + 2) : "";
  } else {
    auto colon = url.rfind(':');
    im.host = url.substr(0, colon);
    im.port = colon == std::string::npos ? "" : url.substr(colon + 1);
  }
  if (im.port.empty()) im.port = im.tls ? "443" : "80";
  if (im.host.empty()) return InvalidArgument("kube: server URL has no host: \"" + config.server + "\"");
  if (im.tls) {
    try {
      im.ssl_ctx = std::make_unique<ssl::context>(ssl::context::tls_client);
      if (config.insecure_skip_tls_verify) {
        im.ssl_ctx->set_verify_mode(ssl::verify_none);
      } else {
        if (config.ca_pem.empty()) {
          im.ssl_ctx->set_default_verify_paths();
        } else {
          im.ssl_ctx->add_certificate_authority(net::buffer(config.ca_pem));
        }
        im.ssl_ctx->set_verify_mode(ssl::verify_peer);
        CacheTrustedCertificateExtensions(im.ssl_ctx->native_handle());
      }
      if (!config.client_certificate_pem.empty()) {
        im.ssl_ctx->use_certificate_chain(net::buffer(config.client_certificate_pem));
        im.ssl_ctx->use_private_key(net::buffer(config.client_key_pem), ssl::context::pem);
      }
    } catch (const boost::system::system_error& e) {
      return InvalidArgument(std::string("kube: TLS configuration: ") + e.what());
    }
    im.verify_name = config.tls_server_name.empty() ? im.host : config.tls_server_name;
  }
  return t;
}

Transport::~Transport() = default;

Result<std::unique_ptr<Transport::Connection>> Transport::Connect() {
  Impl& im = *impl_;
  auto conn = std::make_unique<Connection>();
  conn->plain.emplace(conn->strand);
  error_code ec;
  tcp::resolver resolver(conn->strand);
  tcp::resolver::results_type endpoints;
  const bool resolved = conn->Run(
      im.connect_timeout, ec,
      [&](auto complete) {
        resolver.async_resolve(im.host, im.port, [&, complete](const error_code& e, tcp::resolver::results_type r) {
          endpoints = std::move(r);
          complete(e);
        });
      },
      [&] { resolver.cancel(); });
  if (!resolved || ec) {
    return Unavailable("kube: cannot resolve " + im.host + ": " + (resolved ? ec.message() : "timed out"));
  }
  if (!conn->Run(im.connect_timeout, ec,
                 [&](auto complete) {
                   net::async_connect(*conn->plain, endpoints,
                                      [complete](const error_code& e, const tcp::endpoint&) { complete(e); });
                 }) ||
      ec) {
    return Unavailable("kube: cannot connect to " + im.host_header + ": " + (ec ? ec.message() : "timed out"));
  }
  conn->plain->set_option(tcp::no_delay(true), ec);
  if (!im.tls) return conn;

  conn->secure.emplace(std::move(*conn->plain), *im.ssl_ctx);
  conn->plain.reset();
  if (!IsIpAddress(im.verify_name)) SSL_set_tlsext_host_name(conn->secure->native_handle(), im.verify_name.c_str());
  if (impl_->ssl_ctx && SSL_CTX_get_verify_mode(impl_->ssl_ctx->native_handle()) != SSL_VERIFY_NONE) {
    conn->secure->set_verify_callback(ssl::host_name_verification(im.verify_name));
  }
  if (!conn->Run(im.connect_timeout, ec,
                 [&](auto complete) { conn->secure->async_handshake(ssl::stream_base::client, complete); }) ||
      ec) {
    return Unavailable("kube: TLS handshake with " + im.host_header + " failed: " + (ec ? ec.message() : "timed out"));
  }
  return conn;
}

std::unique_ptr<Transport::Connection> Transport::TakeIdle() {
  std::lock_guard lock(mu_);
  if (idle_.empty()) return nullptr;
  auto c = std::move(idle_.back());
  idle_.pop_back();
  c->reused = true;
  return c;
}

void Transport::ReturnIdle(std::unique_ptr<Connection> conn) {
  std::lock_guard lock(mu_);
  if (idle_.size() < 32) idle_.push_back(std::move(conn));
}

namespace {

bhttp::request<bhttp::string_body> BuildRequest(const HttpRequest& r, const std::string& prefix,
                                                const std::string& host, const std::string& authorization) {
  bhttp::request<bhttp::string_body> req{bhttp::string_to_verb(r.method), prefix + r.target, 11};
  req.set(bhttp::field::host, host);
  req.set(bhttp::field::user_agent, "septa-kube/1.0");
  req.set(bhttp::field::accept, r.accept);
  if (!authorization.empty()) req.set(bhttp::field::authorization, authorization);
  if (!r.content_type.empty()) req.set(bhttp::field::content_type, r.content_type);
  req.body() = r.body;
  req.keep_alive(true);
  req.prepare_payload();
  return req;
}

void CopyHeaders(const bhttp::response_header<>& h, HttpResponse& out) {
  for (const auto& f : h) {
    std::string name(f.name_string());
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out.headers[name] = std::string(f.value());
  }
}

// Writes `req` on `conn`, then starts `read(stream, complete)`: the start
// of a Connection::Run that completes with the first failure or the read's
// completion.
template <typename Connection, typename Read>
auto WriteThenRead(Connection& conn, bhttp::request<bhttp::string_body>& req, Read read) {
  return [&conn, &req, read](auto complete) {
    conn.WithStream([&](auto& stream) {
      bhttp::async_write(stream, req, [&stream, read, complete](const error_code& e, std::size_t) {
        if (e) {
          complete(e);
          return;
        }
        read(stream, [complete](const error_code& e2, std::size_t) { complete(e2); });
      });
    });
  };
}

bool StaleConnection(const error_code& ec) {
  return ec == bhttp::error::end_of_stream || ec == net::error::eof || ec == net::error::connection_reset ||
         ec == net::error::broken_pipe || ec == net::ssl::error::stream_truncated;
}

}  // namespace

Result<HttpResponse> Transport::Send(const HttpRequest& request, const std::string& authorization,
                                     std::chrono::milliseconds timeout) {
  auto req = BuildRequest(request, impl_->path_prefix, impl_->host_header, authorization);
  for (int attempt = 0;; ++attempt) {
    std::unique_ptr<Connection> conn = attempt == 0 ? TakeIdle() : nullptr;
    if (!conn) {
      auto fresh = Connect();
      if (!fresh.ok()) return fresh.status();
      conn = std::move(*fresh);
    }
    error_code ec;
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(request.max_body_bytes);
    Connection& c = *conn;
    // The header first: Beast 1.74's eager parse (async_read) drops the
    // body_limit error when body bytes came with the header, and would then
    // read an answer of any size; async_read_header parses lazily and keeps it.
    const bool finished =
        c.Run(timeout, ec, WriteThenRead(c, req, [&c, &parser](auto& stream, auto on_read) {
                bhttp::async_read_header(stream, c.buffer, parser,
                                         [&stream, &c, &parser, on_read](const error_code& e, std::size_t n) {
                                           if (e) {
                                             on_read(e, n);
                                             return;
                                           }
                                           bhttp::async_read(stream, c.buffer, parser, on_read);
                                         });
              }));
    if (!finished) {
      return DeadlineExceeded("kube: " + request.method + " " + request.target + " timed out after " +
                              std::to_string(timeout.count()) + " ms");
    }
    if (ec) {
      if (conn->reused && StaleConnection(ec)) continue;  // the server closed an idle keep-alive connection
      return Unavailable("kube: " + request.method + " " + request.target + ": " + ec.message());
    }
    HttpResponse out;
    auto msg = parser.release();
    out.status = static_cast<int>(msg.result_int());
    CopyHeaders(msg.base(), out);
    out.body = std::move(msg.body());
    conn->reused = false;
    if (msg.keep_alive()) ReturnIdle(std::move(conn));
    return out;
  }
}

namespace {
constexpr std::size_t kMaxStreamErrorBodyBytes = 1 << 20;
}  // namespace

Result<HttpResponse> Transport::Stream(const HttpRequest& request, const std::string& authorization,
                                       std::chrono::milliseconds idle_timeout,
                                       const std::function<bool(std::string_view)>& on_data, StreamCancel* cancel) {
  auto fresh = Connect();
  if (!fresh.ok()) return fresh.status();
  std::unique_ptr<Connection> conn = std::move(*fresh);
  if (cancel) {
    std::lock_guard lock(cancel->mu_);
    if (cancel->cancelled_) return Status(Code::kCancelled, "kube: watch cancelled");
    Connection* c = conn.get();
    cancel->hook_ = [c] { net::post(c->strand, [c] { c->Close(); }); };
  }
  struct Unhook {
    StreamCancel* cancel;
    ~Unhook() {
      if (cancel) {
        std::lock_guard lock(cancel->mu_);
        cancel->hook_ = nullptr;
      }
    }
  } unhook{cancel};

  auto req = BuildRequest(request, impl_->path_prefix, impl_->host_header, authorization);
  bhttp::response_parser<bhttp::string_body> parser;
  // No limit: the caller's on_data bounds what it keeps. Not boost::none:
  // Boost 1.74 compares a Content-Length against the empty optional and
  // refuses every body that has one (only chunked bodies got through).
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());
  error_code ec;
  Connection& c = *conn;
  if (!c.Run(idle_timeout, ec, WriteThenRead(c, req, [&c, &parser](auto& stream, auto on_read) {
               bhttp::async_read_header(stream, c.buffer, parser, std::move(on_read));
             }))) {
    return DeadlineExceeded("kube: " + request.target + ": no response headers");
  }
  if (ec) {
    if (cancel && cancel->cancelled()) return Status(Code::kCancelled, "kube: watch cancelled");
    return Unavailable("kube: " + request.target + ": " + ec.message());
  }
  HttpResponse out;
  out.status = static_cast<int>(parser.get().result_int());
  CopyHeaders(parser.get().base(), out);
  const bool success = out.status >= 200 && out.status < 300;
  while (!parser.is_done()) {
    const bool read = c.Run(idle_timeout, ec, [&](auto complete) {
      c.WithStream([&](auto& stream) {
        bhttp::async_read_some(stream, c.buffer, parser, [complete](const error_code& e, std::size_t) { complete(e); });
      });
    });
    if (!read) return DeadlineExceeded("kube: " + request.target + ": stream idle too long");
    if (cancel && cancel->cancelled()) return Status(Code::kCancelled, "kube: watch cancelled");
    if (ec) return Unavailable("kube: " + request.target + ": stream broken: " + ec.message());
    // An error's body is kept whole, up to a bound: a peer cannot make it grow without end.
    if (!success && parser.get().body().size() > kMaxStreamErrorBodyBytes) {
      return Unavailable("kube: " + request.target + ": HTTP " + std::to_string(out.status) + " with a body over " +
                         std::to_string(kMaxStreamErrorBodyBytes) + " bytes");
    }
    if (success && !parser.get().body().empty()) {
      // string_body appends at the current size, so taking it is safe.
      std::string piece = std::move(parser.get().body());
      parser.get().body().clear();
      if (!on_data(piece)) return out;
    }
  }
  if (!success) out.body = std::move(parser.get().body());
  return out;
}

}  // namespace septa::kube
