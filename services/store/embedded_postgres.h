// A private PostgreSQL 15 server that septad (without --database-url) and the
// test harness run under a directory of their own.
//
// Layout under `root`:   postgres/data/      the cluster (initdb on first use)
//                        postgres/run/       the unix socket, mode 0700
//                        postgres/server.log
// Access: no TCP at all; the server listens only on a unix socket in a 0700
// directory with socket permissions 0700, so only the OS user that runs the
// server (and root) can reach it. Inside that wall authentication is "trust"
// for the superuser `septa`: no password exists that could leak or need
// rotating. As root, initdb and the server run as the unprivileged Debian
// `postgres` user, which owns postgres/.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "common/status.h"
#include "services/store/subprocess.h"

namespace septa::store {

struct EmbeddedPostgresOptions {
  std::filesystem::path root{};  // e.g. ~/.local/share/septa
  // false for throwaway test servers: initdb --no-sync, fsync and
  // synchronous_commit off. Never false for data that must survive a crash.
  bool durable = true;
  std::string database = "septa";  // created when missing
  std::filesystem::path bin_dir = "/usr/lib/postgresql/15/bin";
  std::chrono::seconds start_timeout{30};
};

class EmbeddedPostgres {
 public:
  // Initialises the cluster if needed, starts the server (or adopts one a
  // predecessor left running on the same directory), waits until it
  // accepts connections and creates `options.database`. Owns the directory
  // (postgres/owner.lock) until Stop or Detach: a second owner waits for
  // the first to be gone, and so does a septad started right after its
  // predecessor was killed, until the predecessor's lifeline has stopped
  // the old server.
  static Result<std::unique_ptr<EmbeddedPostgres>> Start(const EmbeddedPostgresOptions& options);

  // Stops the server (fast shutdown) unless Detach() was called. Should this
  // process die without stopping it, a lifeline helper process stops it.
  ~EmbeddedPostgres();
  EmbeddedPostgres(const EmbeddedPostgres&) = delete;
  EmbeddedPostgres& operator=(const EmbeddedPostgres&) = delete;

  // URL of options.database; UrlFor names another database of the server.
  const std::string& url() const { return url_; }
  std::string UrlFor(const std::string& database) const;

  // Fast shutdown now; idempotent.
  Status Stop();
  // Leaves the server running after this object and this process are gone
  // (the CTest fixture starts it in one process and stops it from another
  // with StopServer).
  void Detach();

  // The server's postmaster when it runs; nullopt when it has exited.
  std::optional<pid_t> RunningPostmaster() const;
  // Starts the server again after it exited (killed, crashed): PostgreSQL
  // recovers from its WAL. OK at once if it runs. Not concurrently with Stop.
  Status Restart();

  // Stops a server started under `root` by any process; OK if none runs.
  static Status StopServer(const std::filesystem::path& root,
                           const std::filesystem::path& bin_dir = "/usr/lib/postgresql/15/bin");

 private:
  EmbeddedPostgres(EmbeddedPostgresOptions options, std::string url);

  EmbeddedPostgresOptions options_;
  std::string url_;
  bool running_ = true;
  UniqueFd ownership_;  // flock()ed postgres/owner.lock, shared with the lifeline
  // Stops the server if this process dies without stopping it (SIGKILL).
  std::unique_ptr<Lifeline> lifeline_;
};

}  // namespace septa::store
