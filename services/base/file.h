// Whole-file reads: the only home of "read this file into a string".
#pragma once

#include <filesystem>
#include <string>

#include "common/status.h"

namespace septa::base {

// The bytes of the file at `path`. Errors name the path and the reason
// ("cannot read /etc/x: No such file or directory"): NOT_FOUND when there is no
// such file, FAILED_PRECONDITION otherwise (a directory, no permission, ...).
Result<std::string> ReadFile(const std::filesystem::path& path);

}  // namespace septa::base
