// Where a Kubernetes API server is and how to authenticate to it: from a
// kubeconfig (file or text) or from the in-cluster service account.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"

namespace septa::kube {

struct ExecConfig {
  std::string command;
  std::vector<std::string> args;
  std::map<std::string, std::string> env;
  std::string api_version = "client.authentication.k8s.io/v1";
};

struct ClientConfig {
  std::string server;  // "https://host:port"
  std::string ca_pem;  // empty: the system trust store
  bool insecure_skip_tls_verify = false;
  std::string tls_server_name;
  std::string client_certificate_pem;
  std::string client_key_pem;
  std::string token;
  std::string token_file;  // re-read when it changes (rotation)
  std::optional<ExecConfig> exec;
  std::string ns = "default";  // the context's namespace
};

// Parses kubeconfig YAML; `context` empty means current-context. Relative
// file paths resolve against `base_dir`.
Result<ClientConfig> ParseKubeconfig(const std::string& yaml_text, const std::string& context = "",
                                     const std::string& base_dir = ".");
Result<ClientConfig> LoadKubeconfig(const std::string& path, const std::string& context = "");

// In-cluster: KUBERNETES_SERVICE_HOST / _PORT and the service account files
// under `sa_dir` (token, ca.crt, namespace).
Result<ClientConfig> InClusterConfig(const std::string& sa_dir = "/var/run/secrets/kubernetes.io/serviceaccount");

// Supplies the current credential: a static token, a token file re-read
// when it changes, or an exec plugin's token cached until it expires.
class Credentials {
 public:
  Credentials(const ClientConfig& config, const Clock& clock);
  // "Bearer <token>", or "" when only a client certificate authenticates.
  Result<std::string> AuthorizationHeader();
  // Forgets a cached exec credential (after a 401).
  void Invalidate();

 private:
  const ClientConfig& config_;
  const Clock& clock_;
  std::mutex mu_;
  std::string cached_token_;
  std::optional<TimePoint> cached_expiry_;
  std::chrono::system_clock::time_point token_file_mtime_{};
};

}  // namespace septa::kube
