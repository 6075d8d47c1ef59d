// The kubeconfig of one cluster and one user who authenticates with a
// client certificate, and the context joining them: what tenants' issued
// credentials (CredentialService) and the syncer's access to a host control
// plane (services/hostcp) are handed as.
#pragma once

#include <string>

namespace septa::core {

struct ClientCertificateKubeconfig {
  std::string name;       // of the cluster and the context; the user is "<user>@<name>"
  std::string server;     // https URL
  std::string server_ca;  // PEM: the CA the server's certificate chains to
  std::string user;
  std::string certificate_pem;
  std::string private_key_pem;
};

// YAML, with the context's namespace "default".
std::string RenderKubeconfig(const ClientCertificateKubeconfig& kubeconfig);

}  // namespace septa::core
