#include "services/store/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace septa::store {

Result<ProcessOutput> RunProcess(const std::vector<std::string>& argv, const std::filesystem::path& working_dir) {
  if (argv.empty()) return InvalidArgument("RunProcess: empty command line");
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return Internal(std::string("pipe: ") + std::strerror(errno));
  }
  UniqueFd read_end(pipe_fds[0]);
  UniqueFd write_end(pipe_fds[1]);

  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), 2);
  posix_spawn_file_actions_addchdir_np(&actions, working_dir.c_str());
  pid_t pid = 0;
  const int spawn_error = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  write_end.Reset();
  if (spawn_error != 0) {
    return Unavailable("cannot run " + argv[0] + ": " + std::strerror(spawn_error));
  }

  ProcessOutput result;
  char buffer[4096];
  for (;;) {
    const ssize_t n = read(read_end.get(), buffer, sizeof buffer);
    if (n > 0) {
      result.output.append(buffer, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  int wait_status = 0;
  while (waitpid(pid, &wait_status, 0) < 0) {
    if (errno != EINTR) return Internal(std::string("waitpid: ") + std::strerror(errno));
  }
  if (WIFEXITED(wait_status)) {
    result.exit_code = WEXITSTATUS(wait_status);
  } else if (WIFSIGNALED(wait_status)) {
    result.exit_code = 128 + WTERMSIG(wait_status);
  }
  return result;
}

Result<std::unique_ptr<Lifeline>> Lifeline::Start(const std::vector<std::string>& on_death,
                                                  const std::filesystem::path& working_dir, int held_fd) {
  if (on_death.empty()) return InvalidArgument("Lifeline: empty command line");
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return Internal(std::string("pipe: ") + std::strerror(errno));
  UniqueFd read_end(pipe_fds[0]);
  UniqueFd write_end(pipe_fds[1]);
  // `read` returns at end of file, that is when the last write end closes.
  std::vector<std::string> argv = {"/bin/sh", "-c", "read -r _; exec \"$@\"", "septa-lifeline"};
  argv.insert(argv.end(), on_death.begin(), on_death.end());
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, read_end.get(), 0);
  // dup2 clears close-on-exec (even onto itself, POSIX 2017): the command inherits it too.
  if (held_fd >= 0) posix_spawn_file_actions_adddup2(&actions, held_fd, 3);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addchdir_np(&actions, working_dir.c_str());
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSID);
  pid_t pid = 0;
  const int spawn_error = posix_spawn(&pid, args[0], &actions, &attributes, args.data(), environ);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  if (spawn_error != 0) return Unavailable(std::string("cannot start /bin/sh: ") + std::strerror(spawn_error));
  return std::unique_ptr<Lifeline>(new Lifeline(pid, write_end.Release()));
}

Lifeline::~Lifeline() {
  // Stopped before the pipe closes, so it never sees end of file.
  kill(pid_, SIGKILL);
  while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  close(write_fd_);
}

}  // namespace septa::store
