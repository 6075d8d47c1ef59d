// HTTP to an OpenID provider's endpoints (discovery, device authorization,
// token, revocation), for septactl's login and septad's portal sign-in: an
// interface, so that the flows are tested with a scripted provider and a
// fake clock, and the real one over services/kube's transport (the client
// the OIDC verifier fetches keys with), each answer bounded in size and
// time.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"

namespace septa::oidc {

struct ProviderReply {
  int status = 0;
  std::string body{};
};

class ProviderHttp {
 public:
  virtual ~ProviderHttp() = default;
  // GET of `url` (an absolute http(s) URL the caller checked): the answer
  // whatever its status; UNAVAILABLE / DEADLINE_EXCEEDED when there is none.
  virtual Result<ProviderReply> Get(const std::string& url) = 0;
  // POST of an application/x-www-form-urlencoded `form` to `url`, with
  // `authorization` as its Authorization header when not empty (a
  // confidential client's credentials).
  virtual Result<ProviderReply> PostForm(const std::string& url, const std::string& form,
                                         const std::string& authorization = "") = 0;
};

// An answer longer than this is refused unread past it: discovery
// documents and token responses are a few KiB.
inline constexpr std::uint64_t kMaxProviderReplyBytes = 1 << 20;

// Over kube::Transport, one per origin; each request within `timeout`.
// `ca_pem` is the provider's TLS trust (empty: the system's).
std::unique_ptr<ProviderHttp> NewProviderHttp(std::chrono::milliseconds timeout, std::string ca_pem = "");

}  // namespace septa::oidc
