#include "services/cli/login.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/text.h"
#include "common/time_point.h"
#include "services/cli/device_flow.h"
#include "services/cli/error_line.h"
#include "services/cli/run.h"

namespace septa::cli {

namespace {

// An exclusive flock on `<config>.lock` while the login is read, refreshed
// and written back (a separate file: the config file itself is replaced by
// a rename, which would leave the lock on the old inode).
class ConfigLock {
 public:
  static Result<ConfigLock> Take(const std::filesystem::path& config_path) {
    SEPTA_RETURN_IF_ERROR(MakeConfigDirectory(config_path));
    const std::string path = config_path.string() + ".lock";
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) return FailedPrecondition("cannot open " + path + ": " + std::strerror(errno));
    while (::flock(fd, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      const int saved = errno;
      ::close(fd);
      return FailedPrecondition("cannot lock " + path + ": " + std::strerror(saved));
    }
    return ConfigLock(fd);
  }
  ConfigLock(ConfigLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  ConfigLock& operator=(ConfigLock&&) = delete;
  ~ConfigLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the flock
  }

 private:
  explicit ConfigLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// "10m", "45s", "1h5m" for a message.
std::string Span(std::chrono::seconds s) {
  const auto h = s.count() / 3600, m = (s.count() % 3600) / 60, sec = s.count() % 60;
  std::string out;
  if (h) out += std::to_string(h) + "h";
  if (m) out += std::to_string(m) + "m";
  if (sec || out.empty()) out += std::to_string(sec) + "s";
  return out;
}

// "08:12:00 UTC".
std::string ClockTime(TimePoint t) {
  const std::string rfc3339 = FormatRfc3339(std::chrono::floor<std::chrono::seconds>(t));
  return rfc3339.size() >= 19 ? rfc3339.substr(11, 8) + " UTC" : rfc3339;
}

bool FreshEnough(const std::string& id_token, TimePoint now) {
  const std::optional<TimePoint> expiry = oidc::IdTokenExpiry(id_token);
  return expiry && *expiry - now > kRefreshMargin;
}

int Fail(std::ostream& err, const Status& status, int code = kExitFailure) {
  err << ErrorLine(status) << "\n";
  return code;
}

}  // namespace

int RunLogin(const LoginCommand& command, const LoginEnvironment& env, std::ostream& out, std::ostream& err) {
  // A config file that does not read (or is readable by others) is not
  // replaced by one that drops what it held.
  auto existing = LoadConfigFile(env.config_path, false);
  if (!existing.ok()) return Fail(err, existing.status(), kExitUsage);
  if (Status url = oidc::CheckProviderUrl(command.issuer, "--issuer"); !url.ok()) return Fail(err, url, kExitUsage);
  oidc::ProviderHttp& http = *env.http;
  const Clock& clock = *env.clock;

  auto provider = oidc::Discover(http, command.issuer);
  if (!provider.ok()) return Fail(err, provider.status());
  auto authorization = StartDeviceAuthorization(http, *provider, command.client_id, command.scope);
  if (!authorization.ok()) return Fail(err, authorization.status());

  // Ctrl-C is caught from before the code is shown: whoever reacts to it
  // has the wait end, not the process (the config file stays as it is).
  const std::stop_token stop = env.catch_interrupt ? env.catch_interrupt() : std::stop_token();
  err << "Open " << authorization->verification_uri << " and enter code " << authorization->user_code << "\n";
  if (!authorization->verification_uri_complete.empty()) {
    err << "  (or open " << authorization->verification_uri_complete << ", which has the code filled in)\n";
  }
  if (authorization->expires_in.count() > 0) {
    err << "The code expires in " << Span(authorization->expires_in) << ", at "
        << ClockTime(clock.Now() + authorization->expires_in) << ". ";
  }
  err << "Waiting for the approval (Ctrl-C to stop)...\n" << std::flush;

  PollOptions poll{.max_wait = command.max_wait, .stop = stop, .note = [&err](const std::string& note) {
                     err << "note: " << note << "\n" << std::flush;
                   }};
  auto tokens = PollForTokens(http, *provider, command.client_id, *authorization, clock, poll);
  if (!tokens.ok()) return Fail(err, tokens.status());

  {
    auto lock = ConfigLock::Take(env.config_path);
    if (!lock.ok()) return Fail(err, lock.status());
    auto config = LoadConfigFile(env.config_path, false);  // again: another septactl may have written it
    if (!config.ok()) return Fail(err, config.status());
    config->login = LoginSession{.issuer = command.issuer,
                                 .client_id = command.client_id,
                                 .refresh_token = tokens->refresh_token,
                                 .id_token = tokens->id_token};
    if (Status written = WriteConfigFile(env.config_path, *config); !written.ok()) return Fail(err, written);
  }
  out << "Signed in to " << command.issuer << " as " << tokens->subject << "; the session is in "
      << env.config_path.string() << " (mode 0600).\n";
  if (tokens->refresh_token.empty()) {
    err << "note: the provider gave no refresh token (is offline_access in --scope, and the refresh_token grant "
           "allowed for the client?): run septactl login again when the ID token expires, at "
        << ClockTime(tokens->id_token_expiry) << "\n";
  }
  if (env.other_credential || existing->token) {
    err << "note: a token is set (--token, the config file's token: or $SEPTA_TOKEN); it wins over this login "
           "until it is removed\n";
  }
  return kExitOk;
}

int RunLogout(const LoginEnvironment& env, std::ostream& out, std::ostream& err) {
  // Under the lock throughout: a septactl refreshing meanwhile would rotate
  // the refresh token this revokes.
  std::error_code error;
  const bool exists = std::filesystem::exists(env.config_path, error);
  auto lock = exists ? ConfigLock::Take(env.config_path) : Result<ConfigLock>(NotFound("no config file"));
  if (exists && !lock.ok()) return Fail(err, lock.status());
  auto config = LoadConfigFile(env.config_path, env.config_named);
  if (!config.ok()) return Fail(err, config.status(), kExitUsage);
  if (!config->login) {
    out << "Not signed in (" << env.config_path.string() << " holds no login).\n";
    return kExitOk;
  }
  const LoginSession login = *config->login;
  if (!login.refresh_token.empty()) {
    auto provider = oidc::Discover(*env.http, login.issuer);
    const Status revoked =
        provider.ok() ? oidc::RevokeRefreshToken(*env.http, *provider, {.id = login.client_id}, login.refresh_token)
                      : provider.status();
    if (revoked.ok()) {
      out << "Revoked the refresh token at " << login.issuer << ".\n";
    } else {
      err << "warning: the refresh token could not be revoked at " << login.issuer << " (" << revoked.message()
          << "); it stays valid at the provider until it expires\n";
    }
  }
  config->login.reset();
  if (Status written = WriteConfigFile(env.config_path, *config); !written.ok()) return Fail(err, written);
  out << "Signed out of " << login.issuer << "; the login is removed from " << env.config_path.string() << ".\n";
  return kExitOk;
}

int RunAuthToken(const LoginEnvironment& env, std::ostream& out, std::ostream& err) {
  auto config = LoadConfigFile(env.config_path, env.config_named);
  if (!config.ok()) return Fail(err, config.status(), kExitUsage);
  if (!config->login) {
    return Fail(err, Unauthenticated("not signed in: " + env.config_path.string() +
                                     " holds no login (run septactl login --issuer URL --client-id ID)"));
  }
  auto bearer = LoginBearer(env.config_path, *config->login, *env.http, *env.clock);
  if (!bearer.ok()) return Fail(err, bearer.status());
  out << *bearer << "\n";
  return kExitOk;
}

Result<std::string> LoginBearer(const std::filesystem::path& config_path, const LoginSession& login,
                                oidc::ProviderHttp& http, const Clock& clock) {
  if (FreshEnough(login.id_token, clock.Now())) return login.id_token;
  SEPTA_ASSIGN_OR_RETURN(const ConfigLock lock, ConfigLock::Take(config_path));
  // Read again under the lock: another septactl may have refreshed it.
  SEPTA_ASSIGN_OR_RETURN(ConfigFile config, LoadConfigFile(config_path, true));
  if (!config.login) return Unauthenticated("signed out meanwhile: " + config_path.string() + " holds no login");
  LoginSession& current = *config.login;
  if (FreshEnough(current.id_token, clock.Now())) return current.id_token;
  if (current.refresh_token.empty()) {
    return Unauthenticated("the ID token of the login at " + current.issuer +
                           " has expired and there is no refresh token: run septactl login again");
  }
  auto provider = oidc::Discover(http, current.issuer);
  if (!provider.ok()) {
    return Status(provider.status().code(),
                  "could not refresh the ID token at " + current.issuer + ": " + provider.status().message());
  }
  auto tokens = oidc::Refresh(http, *provider, {.id = current.client_id}, current.refresh_token, clock);
  if (!tokens.ok()) {
    if (tokens.status().code() == Code::kUnauthenticated) {
      return Unauthenticated(tokens.status().message() + ": run septactl login again");
    }
    return Status(tokens.status().code(),
                  "could not refresh the ID token at " + current.issuer + ": " + tokens.status().message());
  }
  current.refresh_token = tokens->refresh_token;
  current.id_token = tokens->id_token;
  SEPTA_RETURN_IF_ERROR(WriteConfigFile(config_path, config));
  return current.id_token;
}

}  // namespace septa::cli
