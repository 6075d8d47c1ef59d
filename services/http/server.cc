#include "services/http/server.h"

#include <poll.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <future>
#include <thread>

#include "services/http/connection.h"

namespace septa::http {

namespace net = boost::asio;
using boost::system::error_code;
using tcp = net::ip::tcp;

namespace {

bool OutOfDescriptors(const error_code& ec) {
  return ec == net::error::no_descriptors || ec == boost::system::errc::too_many_files_open_in_system;
}

}  // namespace

struct Server::Impl {
  Impl(ServerOptions options, Handler handler)
      : core(std::make_shared<internal::ServerCore>()),
        acceptor(net::make_strand(core->ioc)),
        retry_timer(acceptor.get_executor()) {
    core->options = std::move(options);
    core->handler = std::move(handler);
  }

  void Accept();
  // Whether a client waits in the listen queue: accept() reports EMFILE even
  // when none does, and then no idle connection should be sacrificed.
  bool ConnectionPending();
  void OnAccept(const error_code& ec, tcp::socket socket);
  std::vector<std::shared_ptr<internal::ConnectionBase>> LiveConnections();

  std::shared_ptr<internal::ServerCore> core;
  tcp::acceptor acceptor;  // on its own strand
  net::steady_timer retry_timer;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
  std::vector<std::thread> threads;
  std::uint16_t port = 0;
  bool running = false;
};

void Server::Impl::Accept() {
  acceptor.async_accept(net::make_strand(core->ioc),
                        [this](const error_code& ec, tcp::socket socket) { OnAccept(ec, std::move(socket)); });
}

bool Server::Impl::ConnectionPending() {
  pollfd listener{acceptor.native_handle(), POLLIN, 0};
  return ::poll(&listener, 1, 0) > 0 && (listener.revents & POLLIN) != 0;
}

void Server::Impl::OnAccept(const error_code& ec, tcp::socket socket) {
  if (!acceptor.is_open()) return;
  if (ec) {  // e.g. out of file descriptors: make room, and back off instead of spinning
    if (OutOfDescriptors(ec) && ConnectionPending()) core->ShedOldestIdle();
    retry_timer.expires_after(std::chrono::milliseconds(50));
    retry_timer.async_wait([this](const error_code& wait_ec) {
      if (!wait_ec && acceptor.is_open()) Accept();
    });
    return;
  }
  const std::size_t cap = std::max<std::size_t>(1, core->options.max_connections);
  std::size_t open;
  {
    std::lock_guard lock(core->mu);
    open = core->connections.size();
  }
  // At the cap the oldest idle connection makes room; with none idle the
  // newcomer is answered 503. Refusals in progress are bounded too: beyond
  // them a connection is closed unanswered.
  const bool refuse = open >= cap && !core->ShedOldestIdle();
  error_code ignored;
  if (refuse && open >= cap + std::max<std::size_t>(8, cap / 8)) {
    socket.close(ignored);
    return Accept();
  }
  socket.set_option(tcp::no_delay(true), ignored);
  ConnectionInfo info;
  auto remote = socket.remote_endpoint(ignored);
  info.remote_address = remote.address().to_string(ignored);
  info.remote_port = remote.port();
  info.tls = core->options.tls != nullptr;

  std::shared_ptr<internal::ConnectionBase> conn;
  if (core->options.tls) {
    conn = std::make_shared<internal::TlsConnection>(
        core, net::ssl::stream<tcp::socket>(std::move(socket), *core->options.tls), std::move(info));
  } else {
    conn = std::make_shared<internal::PlainConnection>(core, std::move(socket), std::move(info));
  }
  if (refuse) conn->Refuse();
  {
    std::lock_guard lock(core->mu);
    core->connections.emplace(conn.get(), conn);
  }
  conn->Launch();
  Accept();
}

std::vector<std::shared_ptr<internal::ConnectionBase>> Server::Impl::LiveConnections() {
  std::vector<std::shared_ptr<internal::ConnectionBase>> live;
  std::lock_guard lock(core->mu);
  for (auto& [ptr, weak] : core->connections) {
    if (auto c = weak.lock()) live.push_back(std::move(c));
  }
  return live;
}

Server::Server(ServerOptions options, Handler handler)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(handler))) {}

Server::~Server() { Shutdown(std::chrono::milliseconds(0)); }

Status Server::Start() {
  if (impl_->running) return FailedPrecondition("http server already started");
  const ServerOptions& opt = impl_->core->options;
  error_code ec;
  auto address = net::ip::make_address(opt.host, ec);
  if (ec) return InvalidArgument("http server: bad listen address \"" + opt.host + "\": " + ec.message());
  tcp::endpoint endpoint(address, opt.port);
  auto& acc = impl_->acceptor;
  acc.open(endpoint.protocol(), ec);
  if (!ec) acc.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acc.bind(endpoint, ec);
  if (!ec) acc.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    error_code ignored;
    acc.close(ignored);
    return Unavailable("http server: cannot listen on " + opt.host + ":" + std::to_string(opt.port) + ": " +
                       ec.message());
  }
  impl_->port = acc.local_endpoint(ec).port();
  impl_->running = true;
  impl_->work.emplace(impl_->core->ioc.get_executor());
  net::post(acc.get_executor(), [impl = impl_.get()] { impl->Accept(); });
  for (std::size_t i = 0; i < std::max<std::size_t>(1, opt.io_threads); ++i) {
    impl_->threads.emplace_back([impl = impl_.get()] { impl->core->ioc.run(); });
  }
  return Status::Ok();
}

std::uint16_t Server::port() const { return impl_->port; }

std::size_t Server::open_connections() const {
  std::lock_guard lock(impl_->core->mu);
  return impl_->core->connections.size();
}

void Server::Shutdown(std::chrono::milliseconds deadline) {
  if (!impl_->running) return;
  impl_->running = false;
  auto until = std::chrono::steady_clock::now() + deadline;

  std::promise<void> acceptor_closed;
  net::post(impl_->acceptor.get_executor(), [this, &acceptor_closed] {
    error_code ignored;
    impl_->acceptor.close(ignored);
    impl_->retry_timer.cancel();
    acceptor_closed.set_value();
  });
  acceptor_closed.get_future().wait();

  for (auto& c : impl_->LiveConnections()) c->BeginDrain();
  {
    std::unique_lock lock(impl_->core->mu);
    impl_->core->idle.wait_until(lock, until, [this] { return impl_->core->connections.empty(); });
  }
  for (auto& c : impl_->LiveConnections()) c->Abort();
  {
    std::unique_lock lock(impl_->core->mu);
    impl_->core->idle.wait(lock, [this] { return impl_->core->connections.empty(); });
  }
  // Every socket and timer is closed now: run() returns once the last
  // completions have been delivered.
  impl_->work.reset();
  for (auto& t : impl_->threads) t.join();
  impl_->threads.clear();
  impl_->core->Stop();
}

}  // namespace septa::http
