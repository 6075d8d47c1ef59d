// http(s) URLs as septad's configuration names them and septad fetches them
// (an identity provider's issuer, discovery document and key set): split
// into the origin the transport connects to and the target it asks for, and
// the one rule for plain http, accepted for a loopback host only. Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace septa {

struct HttpUrl {
  bool https = false;
  std::string origin;     // "https://host:port": the scheme and the authority
  std::string authority;  // "host:port"; empty when the URL names none
  std::string target;     // from the first '/' after the authority on; "/" when there is none
};

// nullopt unless `url` starts with http:// or https://.
std::optional<HttpUrl> ParseHttpUrl(std::string_view url);

// Whether the authority's host is 127.0.0.1, localhost or [::1] (its port
// aside): where plain http is accepted.
bool IsLoopbackAuthority(std::string_view authority);

}  // namespace septa
