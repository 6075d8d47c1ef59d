// The kubeconfig of one cluster and one user, and the context joining them:
// what tenants' issued credentials (CredentialService), the simulated
// control planes' admin and syncer access (services/vcp) and the syncer's
// access to a host control plane (services/hostcp) are handed as.
#pragma once

#include <string>
#include <variant>

namespace septa::core {

struct KubeconfigClientCertificate {
  std::string certificate_pem;
  std::string private_key_pem;
};

struct KubeconfigBearerToken {
  std::string token;
};

struct Kubeconfig {
  std::string name;       // of the cluster and the context; the user is "<user>@<name>"
  std::string server;     // https URL
  std::string server_ca;  // PEM: the CA the server's certificate chains to
  std::string user;
  std::variant<KubeconfigClientCertificate, KubeconfigBearerToken> credential;
};

// YAML, with the context's namespace "default". Written directly rather
// than through yaml-cpp's emitter, which cost a tenth of the kubeconfig
// RPC's CPU (docs/BENCHMARKS.md "Credentials"): the shape is fixed, and a
// string that is not a plain word is written as a double-quoted scalar.
std::string RenderKubeconfig(const Kubeconfig& kubeconfig);

}  // namespace septa::core
