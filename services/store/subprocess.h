// Runs a helper program (initdb, pg_ctl) without a shell and captures what it
// printed, so a failure can be reported with the program's own words.
#pragma once

#include <filesystem>
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

}  // namespace septa::store
