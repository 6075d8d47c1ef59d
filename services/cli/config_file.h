// septactl's config file (default ~/.config/septa/config.yaml):
//   server: septa.example.com:9090
//   token: septa_...
//   ca_file: /etc/septa/ca.pem      # TLS, septad's certificate checked against this CA
//   tls: true                       # TLS with the system's CAs (implied by ca_file)
//   login:                          # written by `septactl login` (services/cli/login.h)
//     issuer: https://idp.example.com
//     client_id: septactl
//     refresh_token: ...
//     id_token: eyJ...
// Unknown keys are refused by name, so a typo does not silently fall back
// to a default server or no token. A file holding a refresh token must be
// readable by its owner only (0600), as ssh wants of a private key.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace septa::cli {

// A person's session at an OpenID provider (`septactl login`).
struct LoginSession {
  std::string issuer{};
  std::string client_id{};
  std::string refresh_token{};  // empty: the provider gave none (log in again when the ID token expires)
  std::string id_token{};       // the bearer sent to septad while it is valid
};

struct ConfigFile {
  std::optional<std::string> server;
  std::optional<std::string> token;
  std::optional<std::string> ca_file;
  std::optional<bool> tls;
  std::optional<LoginSession> login{};
};

// `name` is used in messages (the file's path).
Result<ConfigFile> ParseConfigFile(std::string_view yaml_text, std::string_view name);

// The file's text for `config` (comments of a file it replaces are not kept).
std::string RenderConfigFile(const ConfigFile& config);

// Reads and parses `path`. A missing file is an empty config unless
// `must_exist` (the user named it with --config). A file whose login holds
// a refresh token is refused (FAILED_PRECONDITION, naming the path and
// `chmod 600`) when its group or others have any permission on it.
Result<ConfigFile> LoadConfigFile(const std::filesystem::path& path, bool must_exist);

// Replaces `path` by `config` atomically: a temporary file of mode 0600 in
// the same directory (made 0700 if missing), written and synced, renamed
// over it. Readers see the old file or the new one, never a part. A
// symbolic link stays one: the file it names is replaced.
Status WriteConfigFile(const std::filesystem::path& path, const ConfigFile& config);

// Makes the directory of `path` (mode 0700) unless it exists.
Status MakeConfigDirectory(const std::filesystem::path& path);

// $HOME/.config/septa/config.yaml
std::filesystem::path DefaultConfigPath(std::string_view home);

}  // namespace septa::cli
