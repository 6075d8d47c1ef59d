// Runs a helper program (initdb, pg_ctl) without a shell and captures what it
// printed, so a failure can be reported with the program's own words.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace septa::store {

// Owns a file descriptor: closes it when destroyed or replaced.
class UniqueFd {
 public:
  explicit UniqueFd(int fd = -1) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.Release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    Reset(other.Release());
    return *this;
  }
  ~UniqueFd() { Reset(); }
  int get() const { return fd_; }
  int Release() { return std::exchange(fd_, -1); }
  void Reset(int fd = -1) {
    if (fd_ >= 0) close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

struct ProcessOutput {
  int exit_code = -1;  // 128 + signal number when the program was killed
  std::string output;  // stdout and stderr, interleaved
};

// Runs argv[0] (looked up in PATH when it has no slash) in `working_dir`.
// Fails only when the program cannot be started; a non-zero exit is data.
Result<ProcessOutput> RunProcess(const std::vector<std::string>& argv, const std::filesystem::path& working_dir);

// A helper process that runs `on_death` if this process ends without
// releasing it, however it ends (SIGKILL included): the helper blocks reading
// a pipe whose only write end is ours, and the kernel closes that with us.
// It runs in a session of its own, so a terminal's Ctrl-C does not reach it.
// `held_fd`, if given, stays open in the helper (as its descriptor 3) until
// the command has finished: a lock on it tells others that the command may
// still be running.
class Lifeline {
 public:
  static Result<std::unique_ptr<Lifeline>> Start(const std::vector<std::string>& on_death,
                                                 const std::filesystem::path& working_dir, int held_fd = -1);
  ~Lifeline();  // releases: the helper is stopped without running the command
  Lifeline(const Lifeline&) = delete;
  Lifeline& operator=(const Lifeline&) = delete;

 private:
  Lifeline(pid_t pid, int write_fd) : pid_(pid), write_fd_(write_fd) {}
  pid_t pid_;
  int write_fd_;
};

}  // namespace septa::store
