#include "services/store/connection_url.h"

#include <algorithm>
#include <cctype>

namespace septa::store {
namespace {

std::string PercentEncode(const std::string& text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    }
  }
  return out;
}

// Position just after "scheme://", or npos for a keyword/value string.
size_t AuthorityStart(const std::string& url) {
  for (const char* scheme : {"postgresql://", "postgres://"}) {
    const std::string prefix(scheme);
    if (url.compare(0, prefix.size(), prefix) == 0) return prefix.size();
  }
  return std::string::npos;
}

}  // namespace

std::string UnixSocketUrl(const std::filesystem::path& socket_dir, int port, const std::string& user,
                          const std::string& database) {
  return "postgresql:///" + PercentEncode(database) + "?host=" + PercentEncode(socket_dir.string()) +
         "&port=" + std::to_string(port) + "&user=" + PercentEncode(user);
}

Result<std::string> WithDatabase(const std::string& url, const std::string& database) {
  const size_t authority = AuthorityStart(url);
  if (authority == std::string::npos) {
    return InvalidArgument("database URL must start with postgresql:// (got \"" + RedactPassword(url) + "\")");
  }
  const size_t query = url.find('?', authority);
  const size_t path = url.find('/', authority);
  const size_t authority_end = (path != std::string::npos && path < query) ? path : query;
  std::string result = url.substr(0, authority_end) + "/" + PercentEncode(database);
  if (query != std::string::npos) result += url.substr(query);
  return result;
}

std::string WithConnectTimeout(const std::string& url, std::chrono::milliseconds timeout) {
  return WithDefaultParameter(url, "connect_timeout",
                              std::to_string(std::max<long long>(2, (timeout.count() + 999) / 1000)));
}

std::string WithDefaultParameter(const std::string& url, const std::string& key, const std::string& value) {
  if (AuthorityStart(url) == std::string::npos) {  // keyword/value form: "host=... dbname=..."
    const size_t at = url.find(key + "=");
    if (at != std::string::npos && (at == 0 || url[at - 1] == ' ')) return url;
    return url + " " + key + "=" + value;
  }
  const size_t query = url.find('?');
  const auto names_key = [&](const char* separator) {
    return url.find(separator + key + "=", query) != std::string::npos;
  };
  if (query != std::string::npos && (names_key("?") || names_key("&"))) return url;
  return url + (query == std::string::npos ? "?" : "&") + key + "=" + PercentEncode(value);
}

std::string RedactPassword(const std::string& url) {
  const size_t authority = AuthorityStart(url);
  if (authority == std::string::npos) return url;
  const size_t at = url.find('@', authority);
  const size_t end = url.find_first_of("/?", authority);
  if (at == std::string::npos || (end != std::string::npos && at > end)) return url;
  const size_t colon = url.find(':', authority);
  if (colon == std::string::npos || colon > at) return url;
  return url.substr(0, colon + 1) + "***" + url.substr(at);
}

}  // namespace septa::store
