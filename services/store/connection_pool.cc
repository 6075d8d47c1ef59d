#include "services/store/connection_pool.h"

#include <sys/socket.h>

#include "services/core/deadline.h"
#include "services/store/connection_url.h"

namespace septa::store {

ConnectionPool::ConnectionPool(std::string url, int max_size, std::chrono::milliseconds acquire_timeout,
                               std::chrono::milliseconds lease_limit, Setup setup)
    : url_(std::move(url)),
      max_size_(max_size),
      acquire_timeout_(acquire_timeout),
      lease_limit_(lease_limit),
      setup_(std::move(setup)) {
  counters_.max_size = max_size;
  watchdog_ = std::thread([this] { CutOverdueLeases(); });
}

std::unique_ptr<ConnectionPool> ConnectionPool::WithStatementTimeout(const std::string& url, int max_size,
                                                                     std::chrono::milliseconds acquire_timeout,
                                                                     std::chrono::milliseconds statement_timeout,
                                                                     Setup prepare) {
  return std::make_unique<ConnectionPool>(WithConnectTimeout(url, statement_timeout), max_size, acquire_timeout,
                                          2 * statement_timeout,
                                          [timeout = std::to_string(statement_timeout.count()),
                                           prepare = std::move(prepare)](pqxx::connection& connection) {
                                            connection.set_variable("statement_timeout", timeout);  // milliseconds
                                            prepare(connection);
                                          });
}

ConnectionPool::~ConnectionPool() {
  {
    std::unique_lock lock(mu_);
    stopping_ = true;
    // Connects nobody waits for any more end within libpq's connect_timeout.
    connected_.wait(lock, [this] { return connecting_ == 0; });
  }
  leased_changed_.notify_all();
  if (watchdog_.joinable()) watchdog_.join();
}

ConnectionPool::Lease ConnectionPool::Lend(std::unique_ptr<pqxx::connection> connection,
                                           std::optional<Deadline> deadline) {
  if (lease_limit_.count() > 0) {
    const Deadline limit = std::chrono::steady_clock::now() + lease_limit_;
    deadline = deadline ? std::min(*deadline, limit) : limit;
  }
  if (deadline) {
    leased_[connection.get()] = {connection->sock(), *deadline};
    leased_changed_.notify_all();
  }
  return Lease(this, std::move(connection));
}

void ConnectionPool::CutOverdueLeases() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    const auto now = std::chrono::steady_clock::now();
    auto next = std::chrono::steady_clock::time_point::max();
    for (auto& [connection, lease] : leased_) {
      if (lease.deadline <= now) {
        // The socket stays open (its owner closes it), so the number cannot be reused meanwhile.
        shutdown(lease.socket, SHUT_RDWR);
        ++counters_.cut_total;
        lease.deadline = std::chrono::steady_clock::time_point::max();
      } else {
        next = std::min(next, lease.deadline);
      }
    }
    if (next == std::chrono::steady_clock::time_point::max()) {
      leased_changed_.wait(lock);
    } else {
      leased_changed_.wait_until(lock, next);
    }
  }
}

ConnectionPool::Lease::Lease(Lease&& other) noexcept
    : pool_(other.pool_), connection_(std::move(other.connection_)), discard_(other.discard_) {}

ConnectionPool::Lease::~Lease() {
  if (connection_) pool_->Return(std::move(connection_), discard_);
}

Result<std::unique_ptr<pqxx::connection>> ConnectionPool::Connect() {
  try {
    auto connection = std::make_unique<pqxx::connection>(url_);
    setup_(*connection);
    return connection;
  } catch (const std::exception& e) {
    return Unavailable("cannot connect to PostgreSQL at " + RedactPassword(url_) + ": " + e.what());
  }
}

// A connect whose caller may stop waiting: whoever of the two comes second
// (the connect ending, the caller giving up) settles the slot.
struct ConnectionPool::PendingConnect {
  std::mutex mu;
  std::condition_variable ended;
  bool done = false;
  bool abandoned = false;
  Result<std::unique_ptr<pqxx::connection>> result = Unavailable("not connected yet");
};

Result<std::unique_ptr<pqxx::connection>> ConnectionPool::Open(std::optional<Deadline> deadline) {
  auto give_back_slot = [this] {
    std::lock_guard lock(mu_);
    --open_;
    returned_.notify_one();
  };
  if (!deadline) {
    auto connected = Connect();
    if (!connected.ok()) give_back_slot();
    return connected;
  }
  // libpq's connect_timeout counts whole seconds, at least 2, and a blocking
  // connect cannot be interrupted: so it runs on a thread of its own.
  auto pending = std::make_shared<PendingConnect>();
  {
    std::lock_guard lock(mu_);
    ++connecting_;
  }
  std::thread([this, pending] {
    auto connected = Connect();
    bool abandoned = false;
    {
      std::lock_guard lock(pending->mu);
      pending->done = true;
      abandoned = pending->abandoned;
      if (!abandoned) pending->result = std::move(connected);
    }
    pending->ended.notify_one();
    std::lock_guard lock(mu_);
    if (abandoned) {  // the slot is this thread's to settle: a late connection serves the next caller
      if (connected.ok()) {
        idle_.push_back(std::move(connected).value());
        ++counters_.opened_total;
      } else {
        --open_;
      }
      returned_.notify_one();
    }
    --connecting_;
    connected_.notify_all();  // under mu_: the destructor may free the pool once it is released
  }).detach();
  std::unique_lock lock(pending->mu);
  if (!pending->ended.wait_until(lock, *deadline, [&] { return pending->done; })) {
    pending->abandoned = true;
    return Unavailable("connecting to PostgreSQL at " + RedactPassword(url_) +
                       " did not finish by the request's deadline");
  }
  if (!pending->result.ok()) give_back_slot();
  return std::move(pending->result);
}

Result<ConnectionPool::Lease> ConnectionPool::Acquire() {
  const std::optional<Deadline> request_deadline = core::CurrentDeadline();
  std::unique_lock lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  if (request_deadline && *request_deadline <= now) {
    return Unavailable("the request's deadline for the database passed");
  }
  const auto deadline = request_deadline ? std::min(*request_deadline, now + acquire_timeout_) : now + acquire_timeout_;
  bool waited = false;
  for (;;) {
    while (!idle_.empty()) {
      auto connection = std::move(idle_.front());
      idle_.pop_front();
      if (connection->is_open()) return Lend(std::move(connection), request_deadline);
      --open_;
      ++counters_.discarded_total;
    }
    if (open_ < max_size_) {
      ++open_;  // reserve the slot; connect without holding the lock
      lock.unlock();
      auto opened = Open(request_deadline);
      lock.lock();
      if (!opened.ok()) return opened.status();
      ++counters_.opened_total;
      return Lend(std::move(opened).value(), request_deadline);
    }
    if (!waited) {
      waited = true;
      ++counters_.waits_total;
    }
    if (returned_.wait_until(lock, deadline) == std::cv_status::timeout && idle_.empty() && open_ >= max_size_) {
      ++counters_.wait_timeouts_total;
      const auto waited_ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
      return Unavailable("all " + std::to_string(max_size_) + " database connections stayed busy for " +
                         std::to_string(waited_ms) + " ms");
    }
  }
}

void ConnectionPool::Return(std::unique_ptr<pqxx::connection> connection, bool discard) {
  {
    std::lock_guard lock(mu_);
    leased_.erase(connection.get());
    if (discard || !connection->is_open()) {
      open_ -= 1 + static_cast<int>(idle_.size());
      counters_.discarded_total += 1 + idle_.size();
      idle_.clear();
    } else {
      idle_.push_back(std::move(connection));
    }
  }
  returned_.notify_one();
}

PoolStats ConnectionPool::Stats() const {
  std::lock_guard lock(mu_);
  PoolStats stats = counters_;
  stats.idle = static_cast<int>(idle_.size());
  stats.in_use = open_ - stats.idle;
  return stats;
}

}  // namespace septa::store
