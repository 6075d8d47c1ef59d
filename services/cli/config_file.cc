#include "services/cli/config_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "common/documents.h"
#include "services/base/file.h"

namespace septa::cli {

namespace {

constexpr char kKnownKeys[] = "server, token, ca_file, tls, login";
constexpr char kLoginKeys[] = "issuer, client_id, refresh_token, id_token";

Result<LoginSession> ParseLogin(const YAML::Node& node, const std::string& where) {
  if (!node.IsMap()) return InvalidArgument(where + ": \"login\" must be a mapping of " + kLoginKeys);
  LoginSession login;
  for (const auto& entry : node) {
    const std::string key = entry.first.Scalar();
    std::string* slot = key == "issuer"          ? &login.issuer
                        : key == "client_id"     ? &login.client_id
                        : key == "refresh_token" ? &login.refresh_token
                        : key == "id_token"      ? &login.id_token
                                                 : nullptr;
    if (slot == nullptr) {
      return InvalidArgument(where + ": unknown key \"login." + key + "\" (known keys: " + kLoginKeys + ")");
    }
    if (!entry.second.IsScalar()) return InvalidArgument(where + ": \"login." + key + "\" must be a string");
    *slot = entry.second.Scalar();
  }
  if (login.issuer.empty() || login.client_id.empty()) {
    return InvalidArgument(where + ": \"login\" needs issuer and client_id (run septactl login again)");
  }
  return login;
}

std::string Errno(int error) { return std::strerror(error); }

}  // namespace

Result<ConfigFile> ParseConfigFile(std::string_view yaml_text, std::string_view name) {
  const std::string where(name);
  auto parsed = ParseYaml(yaml_text);
  if (!parsed.ok()) return InvalidArgument(where + ": " + parsed.status().message());
  const YAML::Node& root = *parsed;
  ConfigFile config;
  if (root.IsNull()) return config;  // an empty file
  if (!root.IsMap()) return InvalidArgument(where + ": must be a mapping of server, token, ca_file, tls and login");
  for (const auto& entry : root) {
    const std::string key = entry.first.Scalar();
    if (key == "tls") {
      const std::string value = entry.second.IsScalar() ? entry.second.Scalar() : "";
      if (value != "true" && value != "false") return InvalidArgument(where + ": \"tls\" must be true or false");
      config.tls = value == "true";
      continue;
    }
    if (key == "login") {
      auto login = ParseLogin(entry.second, where);
      SEPTA_RETURN_IF_ERROR(login);
      config.login = *std::move(login);
      continue;
    }
    std::optional<std::string>* slot = key == "server"    ? &config.server
                                       : key == "token"   ? &config.token
                                       : key == "ca_file" ? &config.ca_file
                                                          : nullptr;
    if (slot == nullptr) {
      return InvalidArgument(where + ": unknown key \"" + key + "\" (known keys: " + kKnownKeys + ")");
    }
    if (!entry.second.IsScalar()) return InvalidArgument(where + ": \"" + key + "\" must be a string");
    *slot = entry.second.Scalar();
  }
  return config;
}

std::string RenderConfigFile(const ConfigFile& config) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  for (const auto& [key, value] : {std::pair{"server", &config.server}, std::pair{"token", &config.token},
                                   std::pair{"ca_file", &config.ca_file}}) {
    if (*value) out << YAML::Key << key << YAML::Value << YAML::DoubleQuoted << **value;
  }
  if (config.tls) out << YAML::Key << "tls" << YAML::Value << *config.tls;
  if (config.login) {
    const LoginSession& login = *config.login;
    out << YAML::Key << "login" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "issuer" << YAML::Value << YAML::DoubleQuoted << login.issuer;
    out << YAML::Key << "client_id" << YAML::Value << YAML::DoubleQuoted << login.client_id;
    out << YAML::Key << "refresh_token" << YAML::Value << YAML::DoubleQuoted << login.refresh_token;
    out << YAML::Key << "id_token" << YAML::Value << YAML::DoubleQuoted << login.id_token;
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
  std::string text = out.c_str();
  if (!config.server && !config.token && !config.ca_file && !config.tls && !config.login) text = "{}";
  return text + "\n";
}

Result<ConfigFile> LoadConfigFile(const std::filesystem::path& path, bool must_exist) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) {
    if (must_exist) return InvalidArgument("config file " + path.string() + " does not exist");
    return ConfigFile{};
  }
  auto text = base::ReadFile(path);
  if (!text.ok()) return InvalidArgument("config file: " + text.status().message());
  auto config = ParseConfigFile(*text, path.string());
  SEPTA_RETURN_IF_ERROR(config);
  if (config->login && !config->login->refresh_token.empty()) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      return FailedPrecondition("config file " + path.string() + ": " + Errno(errno));
    }
    if ((st.st_mode & 077) != 0) {
      char mode[8];
      std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
      return FailedPrecondition("config file " + path.string() + " holds a refresh token but its mode is " + mode +
                                ": others may read it; run chmod 600 " + path.string() +
                                " (and septactl logout, then login, if someone else could have read it)");
    }
  }
  return config;
}

Status MakeConfigDirectory(const std::filesystem::path& path) {
  if (!path.has_parent_path()) return Status::Ok();
  const std::filesystem::path dir = path.parent_path();
  std::error_code error;
  if (std::filesystem::exists(dir, error)) return Status::Ok();
  std::filesystem::create_directories(dir, error);
  if (!error) std::filesystem::permissions(dir, std::filesystem::perms::owner_all, error);
  if (error) return FailedPrecondition("cannot create " + dir.string() + ": " + error.message());
  return Status::Ok();
}

Status WriteConfigFile(const std::filesystem::path& given, const ConfigFile& config) {
  // A symbolic link (dotfiles kept elsewhere) stays one: its target is replaced.
  std::error_code link_error;
  const bool link = std::filesystem::is_symlink(std::filesystem::symlink_status(given, link_error));
  const std::filesystem::path path = link ? std::filesystem::weakly_canonical(given, link_error) : given;
  if (link && link_error) return FailedPrecondition("cannot follow " + given.string() + ": " + link_error.message());
  const std::filesystem::path dir = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  SEPTA_RETURN_IF_ERROR(MakeConfigDirectory(path));
  std::string temp = (dir / ("." + path.filename().string() + ".XXXXXX")).string();
  const int fd = ::mkstemp(temp.data());  // mode 0600
  if (fd < 0) return FailedPrecondition("cannot write a file in " + dir.string() + ": " + Errno(errno));
  const std::string text = RenderConfigFile(config);
  std::size_t written = 0;
  int failure = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      failure = errno;
      break;
    }
    written += static_cast<std::size_t>(n);
  }
  if (failure == 0 && ::fchmod(fd, 0600) != 0) failure = errno;
  if (failure == 0 && ::fsync(fd) != 0) failure = errno;
  if (::close(fd) != 0 && failure == 0) failure = errno;
  if (failure == 0 && ::rename(temp.c_str(), path.c_str()) != 0) failure = errno;
  if (failure != 0) {
    ::unlink(temp.c_str());
    return FailedPrecondition("cannot write " + path.string() + ": " + Errno(failure));
  }
  return Status::Ok();
}

std::filesystem::path DefaultConfigPath(std::string_view home) {
  return std::filesystem::path(home) / ".config" / "septa" / "config.yaml";
}

}  // namespace septa::cli
