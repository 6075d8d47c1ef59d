// Runs a helper program (initdb, pg_ctl) without a shell and captures what it
// printed, so a failure can be reported with the program's own words.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace septa::store {

struct ProcessOutput {
  int exit_code = -1;    // 128 + signal number when the program was killed
  std::string output;    // stdout and stderr, interleaved
};

// Runs argv[0] (looked up in PATH when it has no slash) in `working_dir`.
// Fails only when the program cannot be started; a non-zero exit is data.
Result<ProcessOutput> RunProcess(const std::vector<std::string>& argv,
                                 const std::filesystem::path& working_dir);

// A helper process that runs `on_death` if this process ends without
// releasing it, however it ends (SIGKILL included): the helper blocks reading
// a pipe whose only write end is ours, and the kernel closes that with us.
// It runs in a session of its own, so a terminal's Ctrl-C does not reach it.
class Lifeline {
 public:
  static Result<std::unique_ptr<Lifeline>> Start(const std::vector<std::string>& on_death,
                                                 const std::filesystem::path& working_dir);
  ~Lifeline();  // releases: the helper is stopped without running the command
  Lifeline(const Lifeline&) = delete;
  Lifeline& operator=(const Lifeline&) = delete;

 private:
  Lifeline(pid_t pid, int write_fd) : pid_(pid), write_fd_(write_fd) {}
  pid_t pid_;
  int write_fd_;
};

}  // namespace septa::store
