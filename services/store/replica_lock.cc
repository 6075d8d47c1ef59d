#include "services/store/replica_lock.h"

#include <pqxx/pqxx>

#include <spdlog/spdlog.h>

#include "services/store/connection_url.h"

namespace septa::store {
namespace {

// Lock keys are the 64-bit hash of this prefix and the replica id, away
// from the migration runner's fixed key.
const std::string kKeyPrefix = "septa-replica:";
constexpr std::chrono::milliseconds kConnectTimeout{5'000};
constexpr std::chrono::milliseconds kRetryEvery{100};

Result<std::unique_ptr<pqxx::connection>> Connect(const std::string& url) {
  try {
    auto connection = std::make_unique<pqxx::connection>(WithConnectTimeout(url, kConnectTimeout));
    pqxx::nontransaction session(*connection);
    // Server-side keepalives: the session of a host that died ends after
    // about 5 + 2 * 3 s of silence, and its lock with it. (Ignored on a
    // Unix socket, where the host is the database's own.)
    session.exec("SET tcp_keepalives_idle = 5; SET tcp_keepalives_interval = 2; SET tcp_keepalives_count = 3");
    return connection;
  } catch (const std::exception& e) {
    return Unavailable("replica_id lock: cannot reach PostgreSQL at " + RedactPassword(url) + ": " + e.what());
  }
}

// True when this session took the lock or held it already.
bool TryLock(pqxx::connection& connection, const std::string& replica_id) {
  pqxx::nontransaction session(connection);
  return session.exec_params1("SELECT pg_try_advisory_lock(hashtextextended($1, 0))", kKeyPrefix + replica_id)[0]
      .as<bool>();
}

// Gives the lock up; a session that is gone has let go of it already.
void Unlock(pqxx::connection& connection, const std::string& replica_id) {
  try {
    pqxx::nontransaction session(connection);
    session.exec_params("SELECT pg_advisory_unlock(hashtextextended($1, 0))", kKeyPrefix + replica_id);
  } catch (const std::exception& e) {
    spdlog::debug("replica_id {}: releasing the lock: {}", replica_id, e.what());
  }
}

// Who holds the lock, for the refusal (the address only shows to a role
// allowed to read other sessions' statistics). Advisory locks are per
// database: a session holding the same key in another database of the
// server (another installation, a parallel test) is not the holder.
std::string Holder(pqxx::connection& connection, const std::string& replica_id) {
  pqxx::nontransaction session(connection);
  const pqxx::result rows = session.exec_params(
      "WITH k AS (SELECT hashtextextended($1, 0) AS key) "
      "SELECT a.pid, coalesce(host(a.client_addr), 'a local socket') FROM pg_locks l "
      "JOIN pg_stat_activity a ON a.pid = l.pid, k "
      "WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 "
      "  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()) "
      "  AND l.classid = ((k.key >> 32) & 4294967295)::oid AND l.objid = (k.key & 4294967295)::oid",
      kKeyPrefix + replica_id);
  if (rows.empty()) return "a session that has just ended";
  return "PostgreSQL session " + rows[0][0].as<std::string>() + " from " + rows[0][1].as<std::string>();
}

Status InUse(const std::string& replica_id, const std::string& holder) {
  return FailedPrecondition("replica_id \"" + replica_id + "\" is in use by another live septad (" + holder +
                            "): give each replica its own replica_id, or its own data_dir");
}

}  // namespace

struct ReplicaLock::Session {
  std::unique_ptr<pqxx::connection> connection;
};

ReplicaLock::ReplicaLock(ReplicaLockOptions options) : options_(std::move(options)) {}

ReplicaLock::~ReplicaLock() {
  thread_.request_stop();
  if (thread_.joinable()) thread_.join();
  // Released before the session closes: a closed connection's backend lets
  // go of its locks only once it has exited, a moment later, and a replica
  // started right after this one ends would find its id still taken.
  if (session_) Unlock(*session_->connection, options_.replica_id);
}

Result<std::unique_ptr<ReplicaLock>> ReplicaLock::Acquire(ReplicaLockOptions options) {
  auto session = Connect(options.database_url);
  SEPTA_RETURN_IF_ERROR(session);
  const std::string& id = options.replica_id;
  const auto deadline = std::chrono::steady_clock::now() + options.wait;
  try {
    bool warned = false;
    while (!TryLock(**session, id)) {
      const std::string holder = Holder(**session, id);
      if (std::chrono::steady_clock::now() >= deadline) return InUse(id, holder);
      if (!warned) {
        spdlog::warn("replica_id {} is held by {}; waiting up to {} ms for it to end", id, holder,
                     options.wait.count());
        warned = true;
      }
      std::this_thread::sleep_for(kRetryEvery);
    }
  } catch (const std::exception& e) {
    return Unavailable("replica_id lock: " + std::string(e.what()));
  }
  std::unique_ptr<ReplicaLock> lock(new ReplicaLock(std::move(options)));
  lock->session_ = std::make_unique<Session>(Session{*std::move(session)});
  lock->thread_ = std::jthread([raw = lock.get()](std::stop_token stop) { raw->Run(stop); });
  return lock;
}

int ReplicaLock::backend_pid() const {
  std::lock_guard lock(mu_);
  return session_ ? session_->connection->backendpid() : 0;
}

void ReplicaLock::Run(std::stop_token stop) {
  const std::string& id = options_.replica_id;
  bool lost = false;
  std::unique_lock lock(mu_);
  while (!wake_.wait_for(lock, stop, options_.check_every, [&] { return stop.stop_requested(); })) {
    if (lost) continue;  // reported; the replica is stopping
    if (session_) {
      try {
        pqxx::nontransaction session(*session_->connection);
        session.exec("SELECT 1");
        continue;  // the session lives, and a session-level lock lives with it
      } catch (const std::exception& e) {
        if (session_->connection->is_open()) {
          spdlog::warn("replica_id {}: checking the lock's session failed: {}", id, e.what());
          continue;
        }
        session_.reset();
        spdlog::warn("replica_id {}: the lock's session was lost ({}); taking the lock again", id, e.what());
      }
    }
    auto session = Connect(options_.database_url);
    if (!session.ok()) continue;  // the database is away: so are the leases; try again next time
    try {
      if (TryLock(**session, id)) {
        session_ = std::make_unique<Session>(Session{*std::move(session)});
        spdlog::info("replica_id {}: lock taken again", id);
        continue;
      }
      const Status in_use = InUse(id, Holder(**session, id));
      lost = true;
      spdlog::critical("replica_id {}: lost the lock: {}", id, in_use.message());
      lock.unlock();
      if (options_.on_lost) options_.on_lost(in_use);
      lock.lock();
    } catch (const std::exception& e) {
      spdlog::warn("replica_id {}: taking the lock again failed: {}", id, e.what());
    }
  }
}

}  // namespace septa::store
