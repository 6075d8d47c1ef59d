#include "common/http_url.h"

namespace septa {

std::optional<HttpUrl> ParseHttpUrl(std::string_view url) {
  HttpUrl parts;
  parts.https = url.starts_with("https://");
  if (!parts.https && !url.starts_with("http://")) return std::nullopt;
  const std::size_t scheme_end = parts.https ? 8 : 7;
  const std::size_t path = url.find('/', scheme_end);
  parts.origin = std::string(url.substr(0, path));
  parts.authority = parts.origin.substr(scheme_end);
  parts.target = path == std::string_view::npos ? "/" : std::string(url.substr(path));
  return parts;
}

bool IsLoopbackAuthority(std::string_view authority) {
  const std::string_view host = authority.starts_with("[") ? authority.substr(0, authority.find(']') + 1)
                                                           : authority.substr(0, authority.find(':'));
  return host == "127.0.0.1" || host == "localhost" || host == "[::1]";
}

}  // namespace septa
