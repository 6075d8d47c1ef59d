// septa_http: the project's HTTP/1.1 server (Boost.Beast underneath).
//
// A handler receives each request together with an Exchange through which it
// answers, now or later and from any thread: Reply() once, or StartStream() /
// WriteChunk() / EndStream() for a chunked response such as a Kubernetes
// watch. The I/O threads never wait for a handler: handlers must not block
// (run slow work elsewhere and Reply from there).
//
// Only message types reach this header; sockets, TLS streams and parsers stay
// in server.cc so that users do not compile Asio's templates.
#pragma once

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace boost::asio::ssl {
class context;
}
struct x509_st;  // OpenSSL's X509

namespace septa::http {

using Request = boost::beast::http::request<boost::beast::http::string_body>;
using Response = boost::beast::http::response<boost::beast::http::string_body>;
using HttpStatus = boost::beast::http::status;

// Beast's string_view (boost::string_view in Boost 1.74) as the standard one.
inline std::string_view View(boost::beast::string_view v) { return {v.data(), v.size()}; }

// The client certificate of a TLS connection, present only when the client
// sent one and it verified against the server context's trust store.
struct PeerIdentity {
  std::string subject;                     // RFC 2253, "O=system:masters,CN=admin"
  std::string common_name;                 // first CN
  std::vector<std::string> organizations;  // every O, in certificate order
  std::string serial;                      // lower-case hex, as openssl and kubectl print it
  std::shared_ptr<x509_st> certificate;    // the raw certificate (reference held)
};

struct ConnectionInfo {
  std::string remote_address;  // "127.0.0.1", "::1"
  std::uint16_t remote_port = 0;
  bool tls = false;
  std::optional<PeerIdentity> peer;
  // The certificates the client sent, leaf first, verified or not: for a
  // handler that verifies them itself (TlsServerConfig::
  // accept_any_client_certificate). Never trust them without verifying.
  std::vector<std::shared_ptr<x509_st>> peer_chain;
};

// One request's answer. Methods may be called from any thread. The first of
// Reply()/StartStream() wins; later calls are ignored. Dropping the last
// reference without answering sends 500 (or ends a started stream).
class Exchange {
 public:
  virtual ~Exchange() = default;

  virtual const ConnectionInfo& connection() const = 0;

  // Sends a complete response. Content-Length, the HTTP version and
  // keep-alive are filled in from the request.
  virtual void Reply(Response response) = 0;

  // Sends `head`'s status and headers with Transfer-Encoding: chunked; its
  // body is ignored. Then WriteChunk() any number of times and EndStream().
  virtual void StartStream(Response head) = 0;
  // Queues one chunk made of `parts`, sent one after the other; false when
  // the connection is gone (or the client reads too slowly and the server
  // dropped it), so the producer can stop. A part may be shared by many
  // exchanges and is held, not copied, until written: a watch event's object
  // text sent to a hundred watchers is in memory once.
  virtual bool WriteChunk(std::vector<std::shared_ptr<const std::string>> parts) = 0;
  // A chunk of one part.
  bool WriteChunk(std::string data) { return WriteChunk({std::make_shared<const std::string>(std::move(data))}); }
  virtual void EndStream() = 0;

  // Runs `callback` once when the connection closes before this exchange
  // finished (client went away, timeout, forced shutdown); at once if it
  // already has. It runs on an I/O thread: keep it short, never block.
  virtual void OnClose(std::function<void()> callback) = 0;
  virtual bool closed() const = 0;
};

using Handler = std::function<void(Request&&, std::shared_ptr<Exchange>)>;

// Formats the responses the server itself produces: 400 for unparsable
// requests, 413 for a body over the limit, 431 for oversized headers.
using ErrorFormatter = std::function<Response(HttpStatus status, std::string_view message)>;

// text/plain "<message>\n".
Response PlainTextError(HttpStatus status, std::string_view message);

struct ServerOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;  // 0: an ephemeral port, see Server::port()
  // TLS when set. Client certificates are asked for and verified as the
  // context's verify mode says (e.g. verify_peer without
  // verify_fail_if_no_peer_cert makes them optional).
  std::shared_ptr<boost::asio::ssl::context> tls;
  std::size_t io_threads = 1;
  std::size_t body_limit = 8 * 1024 * 1024;
  std::size_t header_limit = 64 * 1024;
  // From a request's first byte to its last, and for the TLS handshake.
  std::chrono::milliseconds read_timeout{30'000};
  // Keep-alive: how long a connection with nothing in flight may stay silent.
  std::chrono::milliseconds idle_timeout{90'000};
  // How long one write may take before the client is considered gone.
  std::chrono::milliseconds write_timeout{30'000};
  // Requests read ahead of the one being answered on one connection.
  std::size_t max_pipelined = 8;
  // Open connections at most. At the cap a new connection closes the oldest
  // idle keep-alive connection; with none idle it is answered 503 with
  // Retry-After and closed.
  std::size_t max_connections = 1024;
  // Unsent stream bytes after which a slow reader is disconnected (shared
  // chunk parts counted for each stream that holds them).
  std::size_t max_stream_buffer = 64 * 1024 * 1024;
  ErrorFormatter error_formatter = PlainTextError;
  // Called on an I/O thread each time a request has been read whole and
  // queued, with how many of that connection's requests are now read and not
  // yet fully answered (this one included). For metrics and for tests that
  // must wait for an event rather than sleep; it must not block.
  std::function<void(std::size_t in_flight)> on_request_read;
};

class Server {
 public:
  Server(ServerOptions options, Handler handler);
  ~Server();  // Shutdown(0) if still running
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds, listens and starts the I/O threads.
  Status Start();
  // The bound port (after Start()).
  std::uint16_t port() const;
  std::size_t open_connections() const;

  // Graceful drain: stops accepting, closes idle connections, lets requests
  // in flight finish (their responses say Connection: close) for up to
  // `deadline`, then closes what is left and joins the I/O threads. Must not
  // be called from a handler or an I/O thread. Idempotent.
  void Shutdown(std::chrono::milliseconds deadline);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace septa::http
