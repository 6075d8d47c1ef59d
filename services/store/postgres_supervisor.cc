#include "services/store/postgres_supervisor.h"

#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>

#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include <spdlog/spdlog.h>

#include "services/store/embedded_postgres.h"

namespace septa::store {
namespace {

// Polls `fds` until one is readable or `timeout_ms` (-1: no limit) passes.
void PollReadable(pollfd* fds, nfds_t count, int timeout_ms) {
  while (poll(fds, count, timeout_ms) < 0 && errno == EINTR) {
  }
}

}  // namespace

PostgresSupervisor::PostgresSupervisor(EmbeddedPostgres& server, const Clock& clock, RestartBackoffOptions options)
    : server_(server), clock_(clock), backoff_(options), stop_(eventfd(0, EFD_CLOEXEC)), thread_([this] { Run(); }) {}

PostgresSupervisor::~PostgresSupervisor() {
  const std::uint64_t one = 1;
  if (write(stop_.get(), &one, sizeof one) != sizeof one) spdlog::error("PostgreSQL supervisor: cannot signal stop");
  thread_.join();
}

Status PostgresSupervisor::Health() const {
  std::lock_guard lock(mu_);
  if (backoff_.GaveUp(clock_.Now())) {
    return Unavailable("the embedded PostgreSQL is down and could not be started again");
  }
  return Status::Ok();
}

bool PostgresSupervisor::Pause(std::chrono::milliseconds delay) {
  pollfd stop = {stop_.get(), POLLIN, 0};
  PollReadable(&stop, 1, static_cast<int>(delay.count()));
  return (stop.revents & POLLIN) == 0;
}

bool PostgresSupervisor::WaitForExit(pid_t pid) {
  // Readable once the process has exited. (glibc 2.36's <sys/pidfd.h> lacks extern "C".)
  UniqueFd exited(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
  if (exited.get() < 0) {
    if (errno == ESRCH) return true;
    // No pidfd (kernel before 5.3): look once a second.
    while (kill(pid, 0) == 0 || errno == EPERM) {
      if (!Pause(std::chrono::seconds(1))) return false;
    }
    return true;
  }
  pollfd fds[2] = {{stop_.get(), POLLIN, 0}, {exited.get(), POLLIN, 0}};
  PollReadable(fds, 2, -1);
  return (fds[0].revents & POLLIN) == 0;
}

void PostgresSupervisor::Run() {
  while (Pause(std::chrono::milliseconds(0))) {
    if (const auto pid = server_.RunningPostmaster()) {
      if (!WaitForExit(*pid)) return;
      spdlog::error("embedded PostgreSQL (postmaster PID {}) exited; starting it again", *pid);
    }
    {
      std::lock_guard lock(mu_);
      backoff_.ServerExited(clock_.Now());
    }
    const Status started = server_.Restart();
    std::chrono::milliseconds delay{0};
    {
      std::lock_guard lock(mu_);
      if (started.ok()) {
        backoff_.ServerRunning();
      } else {
        delay = backoff_.AttemptFailed();
      }
    }
    if (started.ok()) {
      spdlog::info("embedded PostgreSQL runs again");
      continue;
    }
    spdlog::warn("embedded PostgreSQL did not start again: {}; next attempt in {} ms", started.message(),
                 delay.count());
    if (!Pause(delay)) return;
  }
}

}  // namespace septa::store
