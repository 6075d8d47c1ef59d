#include "services/base/file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace septa::base {
namespace {

Status ReadError(const std::filesystem::path& path, int error) {
  std::string message = "cannot read " + path.string() + ": " + std::strerror(error);
  return error == ENOENT ? NotFound(std::move(message)) : FailedPrecondition(std::move(message));
}

}  // namespace

Result<std::string> ReadFile(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ReadError(path, errno);
  std::string out;
  char buffer[65536];
  int error = 0;
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
      out.append(buffer, static_cast<std::size_t>(n));
    } else if (n == 0) {
      break;
    } else if (errno != EINTR) {
      error = errno;  // EISDIR for a directory
      break;
    }
  }
  ::close(fd);
  if (error != 0) return ReadError(path, error);
  return out;
}

}  // namespace septa::base
