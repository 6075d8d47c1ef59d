#include "services/store/connection_pool.h"

#include <sys/socket.h>

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
  if (lease_limit_.count() > 0) watchdog_ = std::thread([this] { CutOverdueLeases(); });
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
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  leased_changed_.notify_all();
  if (watchdog_.joinable()) watchdog_.join();
}

ConnectionPool::Lease ConnectionPool::Lend(std::unique_ptr<pqxx::connection> connection) {
  if (lease_limit_.count() > 0) {
    leased_[connection.get()] = {connection->sock(), std::chrono::steady_clock::now() + lease_limit_};
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

Result<std::unique_ptr<pqxx::connection>> ConnectionPool::Open() {
  try {
    auto connection = std::make_unique<pqxx::connection>(url_);
    setup_(*connection);
    return connection;
  } catch (const std::exception& e) {
    return Unavailable("cannot connect to PostgreSQL at " + RedactPassword(url_) + ": " + e.what());
  }
}

Result<ConnectionPool::Lease> ConnectionPool::Acquire() {
  std::unique_lock lock(mu_);
  const auto deadline = std::chrono::steady_clock::now() + acquire_timeout_;
  bool waited = false;
  for (;;) {
    while (!idle_.empty()) {
      auto connection = std::move(idle_.front());
      idle_.pop_front();
      if (connection->is_open()) return Lend(std::move(connection));
      --open_;
      ++counters_.discarded_total;
    }
    if (open_ < max_size_) {
      ++open_;  // reserve the slot; connect without holding the lock
      lock.unlock();
      auto opened = Open();
      lock.lock();
      if (!opened.ok()) {
        --open_;
        returned_.notify_one();
        return opened.status();
      }
      ++counters_.opened_total;
      return Lend(std::move(opened).value());
    }
    if (!waited) {
      waited = true;
      ++counters_.waits_total;
    }
    if (returned_.wait_until(lock, deadline) == std::cv_status::timeout && idle_.empty() && open_ >= max_size_) {
      ++counters_.wait_timeouts_total;
      return Unavailable("all " + std::to_string(max_size_) + " database connections stayed busy for " +
                         std::to_string(acquire_timeout_.count()) + " ms");
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
