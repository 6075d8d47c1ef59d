// Who is calling (client certificate or bearer token) and what they may do
// (the system:masters group anything; everyone else what RBAC objects in
// storage grant, with the built-in admin / edit / view / cluster-admin roles).
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "services/http/server.h"
#include "services/kubesim/storage.h"

namespace septa::kubesim {

inline constexpr std::string_view kAdminGroup = "system:masters";

struct UserInfo {
  std::string name;
  std::vector<std::string> groups;
};

class Authenticator {
 public:
  explicit Authenticator(const Clock& clock) : clock_(clock) {}
  // A bearer token for `user`, refused after `expires` when given.
  void AddToken(std::string token, UserInfo user, std::optional<TimePoint> expires = std::nullopt);
  // Asked about a bearer token AddToken did not add (the API server's
  // service account tokens); set once, before requests are served.
  using TokenVerifier = std::function<std::optional<UserInfo>(std::string_view token)>;
  void SetTokenVerifier(TokenVerifier verify) { verify_ = std::move(verify); }
  // The caller, or nullopt (401) for a missing, unknown or expired credential.
  std::optional<UserInfo> Authenticate(const http::ConnectionInfo& conn, std::string_view authorization) const;

 private:
  struct Token {
    UserInfo user;
    std::optional<TimePoint> expires;
  };
  const Clock& clock_;
  mutable std::mutex mu_;
  std::map<std::string, Token, std::less<>> tokens_;
  TokenVerifier verify_;
};

struct AccessRequest {
  std::string verb;  // get list watch create update patch delete deletecollection
  std::string group, resource, subresource, ns, name;
};

bool Authorize(const UserInfo& user, const AccessRequest& request, const Storage& storage);

// The built-in ClusterRoles, created at start-up.
std::vector<nlohmann::json> BuiltinClusterRoles();

}  // namespace septa::kubesim
