#include "services/kube/config.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "common/documents.h"
#include "services/base/base64.h"
#include "services/base/file.h"

namespace septa::kube {

namespace {

std::string Resolve(const std::string& path, const std::string& base_dir) {
  return path.empty() || path.front() == '/' ? path : base_dir + "/" + path;
}

// `<field>-data` (base64) or `<field>` (a file path).
Result<std::string> DataOrFile(const YAML::Node& node, const std::string& field, const std::string& base_dir) {
  if (node[field + "-data"]) {
    auto decoded = base::Base64Decode(node[field + "-data"].as<std::string>());
    if (!decoded) return InvalidField(field + "-data", "is not valid base64");
    return *std::move(decoded);
  }
  if (node[field]) return base::ReadFile(Resolve(node[field].as<std::string>(), base_dir));
  return std::string();
}

YAML::Node Named(const YAML::Node& list, const std::string& name, const char* inner) {
  if (!list || !list.IsSequence()) return YAML::Node();
  for (const auto& item : list) {
    if (item["name"] && item["name"].as<std::string>() == name) return item[inner];
  }
  return YAML::Node();
}

}  // namespace

Result<ClientConfig> ParseKubeconfig(const std::string& yaml_text, const std::string& context_name,
                                     const std::string& base_dir) {
  auto parsed = ParseYaml(yaml_text);
  if (!parsed.ok()) return InvalidArgument("kubeconfig: " + parsed.status().message());
  try {
    const YAML::Node& root = *parsed;
    std::string ctx_name = context_name;
    if (ctx_name.empty() && root["current-context"]) ctx_name = root["current-context"].as<std::string>();
    if (ctx_name.empty()) return InvalidArgument("kubeconfig: no context given and no current-context");
    YAML::Node ctx = Named(root["contexts"], ctx_name, "context");
    if (!ctx) return NotFound("kubeconfig: context \"" + ctx_name + "\" not found");
    ClientConfig config;
    if (ctx["namespace"]) config.ns = ctx["namespace"].as<std::string>();
    std::string cluster_name = ctx["cluster"] ? ctx["cluster"].as<std::string>() : "";
    YAML::Node cluster = Named(root["clusters"], cluster_name, "cluster");
    if (!cluster || !cluster["server"])
      return NotFound("kubeconfig: cluster \"" + cluster_name + "\" not found or has no server");
    config.server = cluster["server"].as<std::string>();
    auto ca = DataOrFile(cluster, "certificate-authority", base_dir);
    if (!ca.ok()) return ca.status();
    config.ca_pem = *ca;
    if (cluster["insecure-skip-tls-verify"])
      config.insecure_skip_tls_verify = cluster["insecure-skip-tls-verify"].as<bool>();
    if (cluster["tls-server-name"]) config.tls_server_name = cluster["tls-server-name"].as<std::string>();

    std::string user_name = ctx["user"] ? ctx["user"].as<std::string>() : "";
    YAML::Node user = Named(root["users"], user_name, "user");
    if (user) {
      auto cert = DataOrFile(user, "client-certificate", base_dir);
      if (!cert.ok()) return cert.status();
      auto key = DataOrFile(user, "client-key", base_dir);
      if (!key.ok()) return key.status();
      config.client_certificate_pem = *cert;
      config.client_key_pem = *key;
      if (user["token"]) config.token = user["token"].as<std::string>();
      if (user["tokenFile"]) config.token_file = Resolve(user["tokenFile"].as<std::string>(), base_dir);
      if (YAML::Node exec = user["exec"]) {
        ExecConfig e;
        e.command = exec["command"] ? exec["command"].as<std::string>() : "";
        if (exec["args"]) e.args = exec["args"].as<std::vector<std::string>>();
        if (exec["env"] && exec["env"].IsSequence()) {
          for (const auto& kv : exec["env"]) e.env[kv["name"].as<std::string>()] = kv["value"].as<std::string>();
        }
        if (exec["apiVersion"]) e.api_version = exec["apiVersion"].as<std::string>();
        if (e.command.empty()) return InvalidArgument("kubeconfig: exec plugin without a command");
        config.exec = std::move(e);
      }
    }
    return config;
  } catch (const YAML::Exception& e) {
    return InvalidArgument(std::string("kubeconfig: ") + e.what());
  }
}

Result<ClientConfig> LoadKubeconfig(const std::string& path, const std::string& context) {
  auto text = base::ReadFile(path);
  if (!text.ok()) return Status(text.status().code(), "kubeconfig: " + text.status().message());
  auto slash = path.rfind('/');
  auto config = ParseKubeconfig(*text, context, slash == std::string::npos ? "." : path.substr(0, slash));
  if (config.ok()) return config;
  // Name the file: "kubeconfig: ..." becomes "kubeconfig <path>: ...".
  std::string message = config.status().message();
  if (message.starts_with("kubeconfig: ")) message.erase(0, std::string_view("kubeconfig: ").size());
  return Status(config.status().code(), "kubeconfig " + path + ": " + message);
}

Result<ClientConfig> InClusterConfig(const std::string& sa_dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (host == nullptr || port == nullptr)
    return FailedPrecondition("not running in a cluster: KUBERNETES_SERVICE_HOST/PORT unset");
  ClientConfig config;
  std::string h = host;
  if (h.find(':') != std::string::npos) h = "[" + h + "]";
  config.server = "https://" + h + ":" + port;
  auto ca = base::ReadFile(sa_dir + "/ca.crt");
  if (!ca.ok()) return ca.status();
  config.ca_pem = *ca;
  config.token_file = sa_dir + "/token";
  auto ns = base::ReadFile(sa_dir + "/namespace");
  if (ns.ok() && !ns->empty()) config.ns = *ns;
  return config;
}

Credentials::Credentials(const ClientConfig& config, const Clock& clock) : config_(config), clock_(clock) {}

void Credentials::Invalidate() {
  std::lock_guard lock(mu_);
  cached_token_.clear();
  cached_expiry_.reset();
  token_file_mtime_ = {};
}

namespace {

// Runs the exec plugin and returns its stdout.
Result<std::string> RunPlugin(const ExecConfig& exec) {
  int out_pipe[2];
  if (pipe(out_pipe) != 0) return Internal("exec credential plugin: pipe failed");
  pid_t pid = fork();
  if (pid < 0) return Internal("exec credential plugin: fork failed");
  if (pid == 0) {
    dup2(out_pipe[1], STDOUT_FILENO);
    close(out_pipe[0]);
    close(out_pipe[1]);
    for (const auto& [k, v] : exec.env) setenv(k.c_str(), v.c_str(), 1);
    setenv(
        "KUBERNETES_EXEC_INFO",
        ("{\"apiVersion\":\"" + exec.api_version + "\",\"kind\":\"ExecCredential\",\"spec\":{\"interactive\":false}}")
            .c_str(),
        1);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(exec.command.c_str()));
    for (const auto& a : exec.args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  close(out_pipe[1]);
  std::string output;
  std::array<char, 4096> buf;
  ssize_t n;
  while ((n = read(out_pipe[0], buf.data(), buf.size())) > 0) output.append(buf.data(), static_cast<std::size_t>(n));
  close(out_pipe[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return Unauthenticated("exec credential plugin \"" + exec.command + "\" failed");
  }
  return output;
}

}  // namespace

Result<std::string> Credentials::AuthorizationHeader() {
  std::lock_guard lock(mu_);
  if (config_.exec) {
    if (!cached_token_.empty() && (!cached_expiry_ || clock_.Now() < *cached_expiry_)) return "Bearer " + cached_token_;
    auto out = RunPlugin(*config_.exec);
    if (!out.ok()) return out.status();
    auto parsed = ParseJson(*out);
    const nlohmann::json cred = parsed.ok() ? *std::move(parsed) : nlohmann::json();
    if (!cred.is_object() || !cred.contains("status") || !cred["status"].contains("token")) {
      return Unauthenticated("exec credential plugin printed no ExecCredential with status.token");
    }
    cached_token_ = cred["status"]["token"].get<std::string>();
    cached_expiry_ = ParseRfc3339(cred["status"].value("expirationTimestamp", ""));
    return "Bearer " + cached_token_;
  }
  if (!config_.token_file.empty()) {
    struct stat st {};
    if (stat(config_.token_file.c_str(), &st) == 0) {
      auto mtime = std::chrono::system_clock::time_point(std::chrono::seconds(st.st_mtim.tv_sec) +
                                                         std::chrono::nanoseconds(st.st_mtim.tv_nsec));
      if (mtime != token_file_mtime_ || cached_token_.empty()) {
        auto token = base::ReadFile(config_.token_file);
        if (token.ok()) {
          std::string t = *token;
          while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
          cached_token_ = t;
          token_file_mtime_ = mtime;
        }
      }
    }
    if (!cached_token_.empty()) return "Bearer " + cached_token_;
  }
  if (!config_.token.empty()) return "Bearer " + config_.token;
  return std::string();
}

}  // namespace septa::kube
