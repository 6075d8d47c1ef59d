// A scripted OpenID provider behind ProviderHttp, a clock that jumps to
// each sleep's deadline at once, and JWTs made for them: septactl's device
// flow and login tested without a network or waiting (the real provider:
// tests/e2e/oidc/septactl_login_e2e.sh).
#pragma once

#include <algorithm>
#include <deque>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "services/base/base64.h"
#include "services/oidc/provider_http.h"

namespace septa::test {

using oidc::ProviderHttp;
using oidc::ProviderReply;

inline constexpr char kIssuer[] = "https://idp.example.test";
inline constexpr char kClientId[] = "septactl";
inline constexpr char kAuthorizationEndpoint[] = "https://idp.example.test/auth";
inline constexpr char kEndSessionEndpoint[] = "https://idp.example.test/session/end";
inline constexpr char kDeviceEndpoint[] = "https://idp.example.test/device/auth";
inline constexpr char kTokenEndpoint[] = "https://idp.example.test/token";
inline constexpr char kRevocationEndpoint[] = "https://idp.example.test/token/revocation";

// A clock that moves only when slept on, straight to the deadline; it
// records each sleep.
class JumpClock final : public Clock {
 public:
  TimePoint Now() const override { return now_; }
  bool SleepUntil(TimePoint deadline, std::stop_token stop) const override {
    if (stop.stop_requested()) return false;
    sleeps_.push_back(std::chrono::duration_cast<std::chrono::seconds>(deadline - now_));
    now_ = std::max(now_, deadline);
    return true;
  }
  void Advance(std::chrono::seconds d) { now_ += d; }
  const std::vector<std::chrono::seconds>& sleeps() const { return sleeps_; }

 private:
  mutable TimePoint now_ = TimePoint(std::chrono::seconds(1'800'000'000));
  mutable std::vector<std::chrono::seconds> sleeps_;
};

// An unsigned-but-well-formed JWT (RS256 header, a dummy signature):
// septactl reads it, septad would verify it.
inline std::string Jwt(const nlohmann::json& claims) {
  return base::Base64UrlEncode(R"({"alg":"RS256","kid":"k1"})") + "." + base::Base64UrlEncode(claims.dump()) + "." +
         base::Base64UrlEncode("signature");
}

// An ID token of kIssuer for kClientId expiring `ttl` after `now`.
inline std::string IdToken(TimePoint now, std::chrono::seconds ttl, const std::string& sub = "alice") {
  const auto iat = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  return Jwt({{"iss", kIssuer},
              {"aud", kClientId},
              {"sub", sub},
              {"email", sub + "@acme.test"},
              {"iat", iat},
              {"exp", iat + ttl.count()}});
}

inline ProviderReply Json(int status, const nlohmann::json& body) { return {status, body.dump()}; }
inline ProviderReply OauthError(const std::string& error) { return Json(400, {{"error", error}}); }
inline ProviderReply TokenReply(const std::string& id_token, const std::string& refresh_token) {
  nlohmann::json body = {{"access_token", "at"}, {"token_type", "Bearer"}, {"id_token", id_token}};
  if (!refresh_token.empty()) body["refresh_token"] = refresh_token;
  return Json(200, body);
}

class FakeProvider final : public ProviderHttp {
 public:
  struct Post {
    std::string url, form, authorization;
  };

  FakeProvider() {
    discovery = {{"issuer", kIssuer},
                 {"authorization_endpoint", kAuthorizationEndpoint},
                 {"device_authorization_endpoint", kDeviceEndpoint},
                 {"token_endpoint", kTokenEndpoint},
                 {"revocation_endpoint", kRevocationEndpoint},
                 {"end_session_endpoint", kEndSessionEndpoint},
                 {"jwks_uri", "https://idp.example.test/jwks"}};
    device.push_back(Json(200, {{"device_code", "dc-1"},
                                {"user_code", "BCDF-GHJK"},
                                {"verification_uri", "https://idp.example.test/device"},
                                {"verification_uri_complete", "https://idp.example.test/device?user_code=BCDF-GHJK"},
                                {"expires_in", 600},
                                {"interval", 5}}));
  }

  Result<ProviderReply> Get(const std::string& url) override {
    ++gets;
    if (down) return Unavailable("GET " + url + ": Connection refused");
    if (url == std::string(kIssuer) + "/.well-known/openid-configuration") return Json(200, discovery);
    return ProviderReply{404, "not found"};
  }

  Result<ProviderReply> PostForm(const std::string& url, const std::string& form,
                                 const std::string& authorization) override {
    posts.push_back({url, form, authorization});
    if (down) return Unavailable("POST " + url + ": Connection refused");
    std::deque<Result<ProviderReply>>* queue = url == kDeviceEndpoint       ? &device
                                               : url == kTokenEndpoint      ? &token
                                               : url == kRevocationEndpoint ? &revocation
                                                                            : nullptr;
    if (queue == nullptr || queue->empty()) return Internal("the fake provider has no answer for " + url);
    Result<ProviderReply> reply = std::move(queue->front());
    queue->pop_front();
    return reply;
  }

  // The posts to `url`.
  std::vector<std::string> FormsTo(const std::string& url) const {
    std::vector<std::string> forms;
    for (const Post& post : posts) {
      if (post.url == url) forms.push_back(post.form);
    }
    return forms;
  }

  nlohmann::json discovery;
  std::deque<Result<ProviderReply>> device, token, revocation;
  std::vector<Post> posts;
  int gets = 0;
  bool down = false;
};

}  // namespace septa::test
