// PostgreSQL connection URLs (libpq URI syntax) as septad and the tests pass
// them around: "postgresql://user@host:port/database?param=value".
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

#include "common/status.h"

namespace septa::store {

// A URL that reaches `database` as `user` over the unix socket in
// `socket_dir` (percent-encoded, so any path works).
std::string UnixSocketUrl(const std::filesystem::path& socket_dir, int port, const std::string& user,
                          const std::string& database);

// The same server and credentials, another database. Accepts only URI-style
// URLs ("postgresql://..." or "postgres://...").
Result<std::string> WithDatabase(const std::string& url, const std::string& database);

// The URL with libpq parameter `key` set to `value`, unless the URL sets it
// already (then the URL's own setting wins).
std::string WithDefaultParameter(const std::string& url, const std::string& key, const std::string& value);

// WithDefaultParameter for libpq's connect_timeout, which counts whole
// seconds and takes less than 2 as 2: `timeout` rounded up, at least 2 s.
std::string WithConnectTimeout(const std::string& url, std::chrono::milliseconds timeout);

// The URL with any password replaced by "***", for logs and error messages.
std::string RedactPassword(const std::string& url);

}  // namespace septa::store
