#include "services/store/embedded_postgres.h"

#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <pqxx/pqxx>
#include <thread>

#include <spdlog/spdlog.h>

#include "services/base/file.h"
#include "services/store/connection_url.h"
#include "services/store/database_admin.h"
#include "services/store/subprocess.h"

namespace septa::store {
namespace fs = std::filesystem;
namespace {

// The socket file is "<run>/.s.PGSQL.<port>"; with no TCP listener the port
// only names that file, so the default is as good as any.
constexpr int kPort = 5432;
constexpr char kSuperuser[] = "septa";
// Debian's postgresql package creates this system user.
constexpr char kServerUser[] = "postgres";
// sockaddr_un.sun_path holds 108 bytes including the terminating NUL.
constexpr size_t kMaxSocketPath = 107;

struct Layout {
  fs::path base, data, run, log, initialised_marker, owner_lock;
};

Layout LayoutOf(const fs::path& root) {
  const fs::path base = fs::absolute(root) / "postgres";
  return {base, base / "data", base / "run", base / "server.log", base / "initdb.done", base / "owner.lock"};
}

// Who runs initdb and the server: ourselves, or `postgres` when we are root
// (PostgreSQL refuses to run as root).
struct ServerAccount {
  bool switch_user = false;
  uid_t uid = 0;
  gid_t gid = 0;
};

Result<ServerAccount> ServerAccountForThisProcess() {
  if (geteuid() != 0) return ServerAccount{false, geteuid(), getegid()};
  const passwd* pw = getpwnam(kServerUser);
  if (pw == nullptr) {
    return FailedPrecondition(
        "running as root, the embedded PostgreSQL must run as the unprivileged user \"postgres\", "
        "which does not exist: install the Debian package postgresql-15 (it creates the user) "
        "or run septad as a normal user");
  }
  return ServerAccount{true, pw->pw_uid, pw->pw_gid};
}

std::vector<std::string> AsServerUser(const ServerAccount& account, std::vector<std::string> argv) {
  if (!account.switch_user) return argv;
  // util-linux's runuser; absolute, as root's PATH may lack /usr/sbin.
  std::vector<std::string> wrapped = {"/usr/sbin/runuser", "-u", kServerUser, "--"};
  wrapped.insert(wrapped.end(), argv.begin(), argv.end());
  return wrapped;
}

std::string LastLines(const std::string& text, int lines) {
  size_t pos = text.size();
  while (lines-- > 0 && pos > 0) {
    pos = text.rfind('\n', pos - 1);
    if (pos == std::string::npos) return text;
  }
  return text.substr(pos + 1);
}

// Runs one of PostgreSQL's tools; a non-zero exit becomes an error quoting it.
Status RunTool(const ServerAccount& account, std::vector<std::string> argv, const Layout& layout) {
  const std::string tool = fs::path(argv[0]).filename();
  auto run = RunProcess(AsServerUser(account, std::move(argv)), layout.base);
  if (!run.ok()) return run.status();
  if (run->exit_code != 0) {
    return Unavailable(tool + " failed (exit " + std::to_string(run->exit_code) + "): " + LastLines(run->output, 15));
  }
  return Status::Ok();
}

Status CheckInstallation(const fs::path& bin_dir) {
  for (const char* tool : {"initdb", "pg_ctl", "postgres"}) {
    if (access((bin_dir / tool).c_str(), X_OK) != 0) {
      return FailedPrecondition("embedded PostgreSQL: " + (bin_dir / tool).string() +
                                " not found; install the Debian packages postgresql-15 and "
                                "postgresql-contrib-15, or pass --database-url");
    }
  }
  return Status::Ok();
}

Status Chown(const fs::path& path, const ServerAccount& account) {
  if (!account.switch_user) return Status::Ok();
  if (chown(path.c_str(), account.uid, account.gid) != 0) {
    return Internal("chown " + path.string() + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

// The server user must be able to pass through every directory above its
// own. Grants only "search" (x) to others where needed, never read, and says so.
Status EnsureTraversable(const fs::path& dir, const ServerAccount& account) {
  if (!account.switch_user) return Status::Ok();
  for (fs::path p = dir.parent_path(); !p.empty(); p = p.parent_path()) {
    struct stat st {};
    if (stat(p.c_str(), &st) != 0) return Internal("stat " + p.string() + ": " + std::strerror(errno));
    const mode_t needed = st.st_uid == account.uid ? S_IXUSR : st.st_gid == account.gid ? S_IXGRP : S_IXOTH;
    if ((st.st_mode & needed) == 0) {
      spdlog::warn("embedded PostgreSQL: adding o+x to {} so that user {} can reach its data directory", p.string(),
                   kServerUser);
      if (chmod(p.c_str(), (st.st_mode & 07777) | S_IXOTH) != 0) {
        return Internal("chmod o+x " + p.string() + ": " + std::strerror(errno));
      }
    }
    if (p == p.root_path()) break;
  }
  return Status::Ok();
}

Status MakePrivateDirectory(const fs::path& dir, const ServerAccount& account) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Internal("cannot create " + dir.string() + ": " + ec.message());
  if (chmod(dir.c_str(), 0700) != 0) return Internal("chmod 0700 " + dir.string() + ": " + std::strerror(errno));
  return Chown(dir, account);
}

Status WriteOwnedFile(const fs::path& path, const std::string& text, const ServerAccount& account,
                      std::ios::openmode mode = std::ios::trunc) {
  {
    std::ofstream out(path, std::ios::out | mode);
    out << text;
    if (!out) return Internal("cannot write " + path.string());
  }
  return Chown(path, account);
}

Status SyncFileSystem(const fs::path& dir) {
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Internal("open " + dir.string() + ": " + std::strerror(errno));
  const int synced = syncfs(fd);
  const int sync_errno = errno;
  close(fd);
  if (synced != 0) return Internal("syncfs " + dir.string() + ": " + std::strerror(sync_errno));
  return Status::Ok();
}

// initdb once per data directory. A directory without the marker is the
// remains of an interrupted initdb and holds no data yet: start it over.
Status InitialiseCluster(const Layout& layout, const EmbeddedPostgresOptions& options, const ServerAccount& account) {
  if (fs::exists(layout.initialised_marker)) return Status::Ok();
  std::error_code ec;
  fs::remove_all(layout.data, ec);
  if (ec) return Internal("cannot remove the half-initialised " + layout.data.string() + ": " + ec.message());
  // initdb's own fsync of every file takes seconds; one syncfs below makes
  // the same data durable in a fraction of that.
  SEPTA_RETURN_IF_ERROR(RunTool(account,
                                {(options.bin_dir / "initdb").string(), "--pgdata=" + layout.data.string(),
                                 std::string("--username=") + kSuperuser, "--auth=trust", "--encoding=UTF8",
                                 "--locale=C", "--no-instructions", "--no-sync"},
                                layout));
  SEPTA_RETURN_IF_ERROR(WriteOwnedFile(layout.data / "postgresql.conf",
                                       "\n# Septa's settings, rewritten at every start.\n"
                                       "include_if_exists = 'septa.conf'\n",
                                       account, std::ios::app));
  SEPTA_RETURN_IF_ERROR(WriteOwnedFile(layout.initialised_marker, "", account));
  // Durable before first use; the marker too, or a crash could make the
  // next start take a live cluster for an interrupted initdb.
  return options.durable ? SyncFileSystem(layout.base) : Status::Ok();
}

std::string ConfigQuote(const std::string& value) {
  std::string out = "'";
  for (char c : value) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

Status WriteServerConfig(const Layout& layout, const EmbeddedPostgresOptions& options, const ServerAccount& account) {
  std::string conf =
      "# Written by septad at every start (services/store/embedded_postgres.cc).\n"
      "listen_addresses = ''\n"
      "unix_socket_directories = " +
      ConfigQuote(layout.run.string()) + "\n" +
      "unix_socket_permissions = 0700\n"
      "port = " +
      std::to_string(kPort) + "\n";
  if (!options.durable) {
    // Throwaway test server: losing it in a crash costs nothing.
    conf += "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n";
  }
  return WriteOwnedFile(layout.data / "septa.conf", conf, account);
}

bool ProcessAlive(pid_t pid) { return kill(pid, 0) == 0 || errno == EPERM; }

// postmaster.pid names a live postmaster of `data` (a predecessor that was
// killed before it could stop its server), rather than a reused PID.
bool IsOurPostmaster(pid_t pid, const fs::path& data) {
  if (!ProcessAlive(pid)) return false;
  const auto comm = base::ReadFile("/proc/" + std::to_string(pid) + "/comm");
  if (!comm.ok() || comm->rfind("postgres", 0) != 0) return false;
  std::error_code ec;
  const fs::path cwd = fs::read_symlink("/proc/" + std::to_string(pid) + "/cwd", ec);
  return !ec && fs::equivalent(cwd, data, ec);
}

std::optional<pid_t> PostmasterPid(const Layout& layout) {
  std::ifstream in(layout.data / "postmaster.pid");
  long pid = 0;
  if (!(in >> pid) || pid <= 0) return std::nullopt;
  return static_cast<pid_t>(pid);
}

// Returns true when a server of this data directory is already running.
// Removes the lock files of a server that died without cleaning up, whose
// PID may have been reused since (PostgreSQL would refuse to start then).
bool AdoptOrClearStaleLock(const Layout& layout) {
  const auto pid = PostmasterPid(layout);
  if (!pid) return false;
  if (IsOurPostmaster(*pid, layout.data)) return true;
  spdlog::warn("embedded PostgreSQL: removing the stale postmaster.pid of PID {} (server not running)", *pid);
  std::error_code ec;
  fs::remove(layout.data / "postmaster.pid", ec);
  fs::remove(layout.run / (".s.PGSQL." + std::to_string(kPort) + ".lock"), ec);
  return false;
}

// Whoever holds this lock owns the server of the directory: a running
// septad, and after it was killed, its lifeline helper until that has
// stopped the server. So a septad started right after a kill -9 waits for
// the old server to be stopped, instead of adopting it while it goes down.
Result<UniqueFd> LockOwnership(const Layout& layout, std::chrono::seconds timeout) {
  UniqueFd lock(open(layout.owner_lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (lock.get() < 0) return Internal("open " + layout.owner_lock.string() + ": " + std::strerror(errno));
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool told = false;
  while (flock(lock.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) {
      return Internal("flock " + layout.owner_lock.string() + ": " + std::strerror(errno));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      return FailedPrecondition("embedded PostgreSQL: " + layout.base.string() +
                                " is in use by another septad, or the server of a killed one did not stop within " +
                                std::to_string(timeout.count()) + " s");
    }
    if (!told)
      spdlog::info("embedded PostgreSQL: waiting for the previous owner of {} to stop its server",
                   layout.base.string());
    told = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return lock;
}

// Starts the server of a cluster whose lock files are clean.
Status StartServer(const Layout& layout, const EmbeddedPostgresOptions& options, const ServerAccount& account) {
  SEPTA_RETURN_IF_ERROR(WriteServerConfig(layout, options, account));
  const Status started = RunTool(account,
                                 {(options.bin_dir / "pg_ctl").string(), "start", "--silent", "--wait",
                                  "--timeout=" + std::to_string(options.start_timeout.count()),
                                  "--pgdata=" + layout.data.string(), "--log=" + layout.log.string()},
                                 layout);
  if (!started.ok()) {
    const auto log = base::ReadFile(layout.log);
    return Unavailable("embedded PostgreSQL did not start: " + started.message() + "\nserver log (" +
                       layout.log.string() + "):\n" + LastLines(log.ok() ? *log : log.status().message(), 15));
  }
  return Status::Ok();
}

// Waits for an adopted server that may still be starting up.
Status WaitUntilAccepting(const std::string& url, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    try {
      pqxx::connection connection(url);
      return Status::Ok();
    } catch (const std::exception& e) {
      if (std::chrono::steady_clock::now() > deadline) {
        return Unavailable(std::string("embedded PostgreSQL does not accept connections: ") + e.what());
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace

EmbeddedPostgres::EmbeddedPostgres(EmbeddedPostgresOptions options, std::string url)
    : options_(std::move(options)), url_(std::move(url)) {}

EmbeddedPostgres::~EmbeddedPostgres() {
  const Status stopped = Stop();
  if (!stopped.ok()) spdlog::error("embedded PostgreSQL: {}", stopped.ToString());
}

std::string EmbeddedPostgres::UrlFor(const std::string& database) const {
  return UnixSocketUrl(LayoutOf(options_.root).run, kPort, kSuperuser, database);
}

Result<std::unique_ptr<EmbeddedPostgres>> EmbeddedPostgres::Start(const EmbeddedPostgresOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  SEPTA_RETURN_IF_ERROR(CheckInstallation(options.bin_dir));
  auto account = ServerAccountForThisProcess();
  if (!account.ok()) return account.status();
  const Layout layout = LayoutOf(options.root);
  const std::string socket = (layout.run / (".s.PGSQL." + std::to_string(kPort))).string();
  if (socket.size() > kMaxSocketPath) {
    return InvalidArgument("embedded PostgreSQL: the socket path " + socket + " is longer than " +
                           std::to_string(kMaxSocketPath) + " bytes; choose a shorter --data-dir");
  }

  SEPTA_RETURN_IF_ERROR(MakePrivateDirectory(layout.base, *account));
  auto ownership = LockOwnership(layout, options.start_timeout);
  if (!ownership.ok()) return ownership.status();
  SEPTA_RETURN_IF_ERROR(EnsureTraversable(layout.base, *account));
  SEPTA_RETURN_IF_ERROR(MakePrivateDirectory(layout.run, *account));
  SEPTA_RETURN_IF_ERROR(InitialiseCluster(layout, options, *account));

  const std::string maintenance_url = UnixSocketUrl(layout.run, kPort, kSuperuser, "postgres");
  // Holding the ownership lock, a running server is one nobody stops: a
  // predecessor's that was detached, or whose lifeline was killed too.
  if (AdoptOrClearStaleLock(layout)) {
    spdlog::warn("embedded PostgreSQL: a server left running on {} is adopted", layout.data.string());
    SEPTA_RETURN_IF_ERROR(WaitUntilAccepting(maintenance_url, options.start_timeout));
  } else {
    SEPTA_RETURN_IF_ERROR(StartServer(layout, options, *account));
  }
  std::unique_ptr<EmbeddedPostgres> server(
      new EmbeddedPostgres(options, UnixSocketUrl(layout.run, kPort, kSuperuser, options.database)));
  server->ownership_ = *std::move(ownership);
  // A SIGKILLed septad cannot stop its server; the lifeline does, holding
  // the ownership lock until the server has stopped.
  auto lifeline = Lifeline::Start(AsServerUser(*account, {(options.bin_dir / "pg_ctl").string(), "stop", "--silent",
                                                          "--wait", "--mode=fast", "--pgdata=" + layout.data.string()}),
                                  layout.base, server->ownership_.get());
  if (!lifeline.ok()) return lifeline.status();
  server->lifeline_ = *std::move(lifeline);
  SEPTA_RETURN_IF_ERROR(CreateDatabaseIfMissing(maintenance_url, options.database));
  spdlog::debug(
      "embedded PostgreSQL ready on {} in {} ms", layout.run.string(),
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count());
  return server;
}

Status EmbeddedPostgres::Stop() {
  if (!running_) return Status::Ok();
  running_ = false;
  Status stopped = StopServer(options_.root, options_.bin_dir);
  lifeline_.reset();
  ownership_.Reset();
  return stopped;
}

void EmbeddedPostgres::Detach() {
  running_ = false;
  lifeline_.reset();
  ownership_.Reset();
}

std::optional<pid_t> EmbeddedPostgres::RunningPostmaster() const {
  const Layout layout = LayoutOf(options_.root);
  const auto pid = PostmasterPid(layout);
  if (pid && IsOurPostmaster(*pid, layout.data)) return pid;
  return std::nullopt;
}

Status EmbeddedPostgres::Restart() {
  auto account = ServerAccountForThisProcess();
  if (!account.ok()) return account.status();
  const Layout layout = LayoutOf(options_.root);
  if (AdoptOrClearStaleLock(layout)) return Status::Ok();
  return StartServer(layout, options_, *account);
}

Status EmbeddedPostgres::StopServer(const fs::path& root, const fs::path& bin_dir) {
  const Layout layout = LayoutOf(root);
  const auto pid = PostmasterPid(layout);
  if (!pid) return Status::Ok();
  auto account = ServerAccountForThisProcess();
  if (!account.ok()) return account.status();
  const Status stopped = RunTool(
      *account,
      {(bin_dir / "pg_ctl").string(), "stop", "--silent", "--wait", "--mode=fast", "--pgdata=" + layout.data.string()},
      layout);
  if (!stopped.ok() && IsOurPostmaster(*pid, layout.data)) return stopped;
  return Status::Ok();
}

}  // namespace septa::store
