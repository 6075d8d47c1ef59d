// septactl's config file (default ~/.config/septa/config.yaml):
//   server: septa.example.com:9090
//   token: septa_...
//   ca_file: /etc/septa/ca.pem      # TLS, septad's certificate checked against this CA
//   tls: true                       # TLS with the system's CAs (implied by ca_file)
// Unknown keys are refused by name, so a typo does not silently fall back
// to a default server or no token.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace septa::cli {

struct ConfigFile {
  std::optional<std::string> server;
  std::optional<std::string> token;
  std::optional<std::string> ca_file;
  std::optional<bool> tls;
};

// `name` is used in messages (the file's path).
Result<ConfigFile> ParseConfigFile(std::string_view yaml_text, std::string_view name);

// Reads and parses `path`. A missing file is an empty config unless
// `must_exist` (the user named it with --config).
Result<ConfigFile> LoadConfigFile(const std::filesystem::path& path, bool must_exist);

// $HOME/.config/septa/config.yaml
std::filesystem::path DefaultConfigPath(std::string_view home);

}  // namespace septa::cli
