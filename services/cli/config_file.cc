#include "services/cli/config_file.h"

#include <yaml-cpp/yaml.h>

#include <system_error>

#include "common/documents.h"
#include "services/base/file.h"

namespace septa::cli {

Result<ConfigFile> ParseConfigFile(std::string_view yaml_text, std::string_view name) {
  const std::string where(name);
  auto parsed = ParseYaml(yaml_text);
  if (!parsed.ok()) return InvalidArgument(where + ": " + parsed.status().message());
  const YAML::Node& root = *parsed;
  ConfigFile config;
  if (root.IsNull()) return config;  // an empty file
  if (!root.IsMap()) return InvalidArgument(where + ": must be a mapping of server, token, ca_file and tls");
  for (const auto& entry : root) {
    const std::string key = entry.first.Scalar();
    if (key == "tls") {
      const std::string value = entry.second.IsScalar() ? entry.second.Scalar() : "";
      if (value != "true" && value != "false") return InvalidArgument(where + ": \"tls\" must be true or false");
      config.tls = value == "true";
      continue;
    }
    std::optional<std::string>* slot = key == "server"    ? &config.server
                                       : key == "token"   ? &config.token
                                       : key == "ca_file" ? &config.ca_file
                                                          : nullptr;
    if (slot == nullptr) {
      return InvalidArgument(where + ": unknown key \"" + key + "\" (known keys: server, token, ca_file, tls)");
    }
    if (!entry.second.IsScalar()) return InvalidArgument(where + ": \"" + key + "\" must be a string");
    *slot = entry.second.Scalar();
  }
  return config;
}

Result<ConfigFile> LoadConfigFile(const std::filesystem::path& path, bool must_exist) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) {
    if (must_exist) return InvalidArgument("config file " + path.string() + " does not exist");
    return ConfigFile{};
  }
  auto text = base::ReadFile(path);
  if (!text.ok()) return InvalidArgument("config file: " + text.status().message());
  return ParseConfigFile(*text, path.string());
}

std::filesystem::path DefaultConfigPath(std::string_view home) {
  return std::filesystem::path(home) / ".config" / "septa" / "config.yaml";
}

}  // namespace septa::cli
