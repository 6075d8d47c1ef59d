// Kubeconfigs that renew themselves (docs/identity.md "Exec kubeconfigs").
// `septactl vcluster kubeconfig --exec` prints a kubeconfig whose user is
// kubectl's exec credential plugin (client.authentication.k8s.io/v1):
// septactl itself running `vcluster credential`, which prints an
// ExecCredential with a client certificate from the cache
// (credential_cache.h), asking septad for a new one, with septactl's usual
// credential, only when the cached one is due for renewal. The kubeconfig
// holds how to reach septad (server, TLS), never a token.
#pragma once

#include <grpcpp/support/status.h>

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "septa/v1/vcluster.pb.h"
#include "services/cli/credential_cache.h"
#include "services/cli/invocation.h"
#include "services/cli/run.h"

namespace septa::cli {

inline constexpr char kExecCredentialApiVersion[] = "client.authentication.k8s.io/v1";

// What the two commands take from RunSeptactl: the connection every command
// resolves, and IssueKubeconfig called with septactl's usual credential.
struct ExecContext {
  const GlobalOptions& options;
  const Environment& env;
  const Clock& clock;
  std::string server;  // septad's gRPC address, as resolved
  bool tls = false;
  std::function<grpc::Status(const v1::IssueKubeconfigRequest&, v1::IssueKubeconfigResponse&)> issue{};
};

// vcluster kubeconfig --exec: issues a certificate (for the cluster's
// address and CA, and to seed the cache: kubectl's first run uses it) and
// prints the exec kubeconfig.
int RunExecKubeconfig(const VclusterExecKubeconfig& command, const ExecContext& context, std::ostream& out,
                      std::ostream& err);
// vcluster credential: the ExecCredential JSON on `out`, errors on `err`.
int RunExecCredential(const VclusterExecCredential& command, const ExecContext& context, std::ostream& out,
                      std::ostream& err);

// The apiVersion kubectl asked for in $KUBERNETES_EXEC_INFO when it is
// client.authentication.k8s.io/v1 or v1beta1 (their status fields are the
// same), else v1. Nothing else of it is needed: the plugin never prompts.
std::string ExecCredentialApiVersion(const std::optional<std::string>& exec_info);

// When kubectl should run the plugin again: the certificate's renewal point
// (notAfter - RenewalMargin) while that lies ahead, so a long-running
// kubectl gets the renewed certificate in time; else its notAfter (a
// lifetime shorter than the margin is renewed at every run anyway).
TimePoint ExecCredentialExpiration(const ClientCertificate& certificate, TimePoint now);

// {"apiVersion": ..., "kind": "ExecCredential", "status": {"expirationTimestamp",
// "clientCertificateData", "clientKeyData"}}, with a newline.
std::string ExecCredentialJson(std::string_view api_version, const ClientCertificate& certificate,
                               TimePoint expiration);

// The plugin's arguments: septad's address and TLS settings, --config when
// one was named, then `vcluster credential NAME --tenant T --role R [--ttl D]`.
struct PluginConnection {
  std::string server{};
  bool tls = false;
  std::optional<std::string> ca_file{};      // absolute
  std::optional<std::string> config_path{};  // absolute
};
std::vector<std::string> ExecPluginArgs(const PluginConnection& connection, const VclusterKubeconfig& kubeconfig);

// The client certificate and key of an issued kubeconfig
// (users[0].user.client-certificate-data, client-key-data).
Result<ClientCertificate> CertificateOfKubeconfig(std::string_view yaml);

// The issued kubeconfig with its user replaced by the exec plugin `command
// args...` (user "septactl-<role>@<cluster>"); the cluster, its CA and the
// context's namespace are kept.
Result<std::string> ExecKubeconfig(std::string_view issued_yaml, const std::string& command,
                                   const std::vector<std::string>& args, const std::string& role);

}  // namespace septa::cli
