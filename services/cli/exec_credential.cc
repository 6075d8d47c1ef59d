#include "services/cli/exec_credential.h"

#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>

#include "services/base/base64.h"
#include "services/cli/config_file.h"
#include "services/cli/error_line.h"
#include "services/cli/views.h"
#include "tenancy/virtual_cluster_ref.h"

namespace septa::cli {

namespace {

constexpr char kExecCredentialV1Beta1[] = "client.authentication.k8s.io/v1beta1";
// A run waits this much longer than its call deadline for another run's lock.
constexpr std::chrono::seconds kLockWaitBeyondCall{5};

// A JSON string is a YAML double-quoted scalar with the same escapes: every
// string of the exec kubeconfig is written so, whatever it holds.
std::string Quoted(const std::string& text) {
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string AbsolutePath(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(path, ec);
  return ec ? path : absolute.lexically_normal().string();
}

// This very septactl, as kubectl should run it.
Result<std::string> OwnExecutable() {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec || self.empty()) {
    return FailedPrecondition("cannot tell this septactl's own path (/proc/self/exe: " + ec.message() +
                              "): give it with --exec-command");
  }
  return self.string();
}

// The CA file septactl checks septad against, from --ca-file or the config
// file (for the plugin's --ca-file), and the config file when one was named.
Result<PluginConnection> PluginConnectionOf(const ExecContext& context) {
  PluginConnection connection;
  connection.server = context.server;
  connection.tls = context.tls;
  const GlobalOptions& options = context.options;
  std::optional<std::string> ca_file = options.ca_file;
  if (options.config_path) connection.config_path = AbsolutePath(*options.config_path);
  if (!ca_file && (options.config_path || !context.env.home.empty())) {
    const std::filesystem::path path =
        options.config_path ? std::filesystem::path(*options.config_path) : DefaultConfigPath(context.env.home);
    auto file = LoadConfigFile(path, options.config_path.has_value());
    SEPTA_RETURN_IF_ERROR(file);
    ca_file = file->ca_file;
  }
  if (ca_file) connection.ca_file = AbsolutePath(*ca_file);
  return connection;
}

std::string VariableOf(const Environment& env, const std::string& name) {
  const std::optional<std::string> value = env.variable ? env.variable(name) : std::nullopt;
  return value.value_or("");
}

std::optional<CredentialCache> CacheOf(const Environment& env) {
  const std::optional<std::string> xdg = env.variable ? env.variable("XDG_CACHE_HOME") : std::nullopt;
  auto directory = CredentialCacheDirectory(xdg, env.home);
  if (!directory) return std::nullopt;
  return CredentialCache(*std::move(directory));
}

v1::IssueKubeconfigRequest IssueRequest(const std::string& tenant, const std::string& vcluster, const std::string& ttl,
                                        const std::string& role) {
  v1::IssueKubeconfigRequest request;
  request.set_tenant(tenant);
  request.set_vcluster(vcluster);
  request.set_ttl(ttl);
  request.set_role(role);
  return request;
}

Result<ClientCertificate> IssuedCertificate(const v1::IssueKubeconfigResponse& issued) {
  auto certificate = CertificateOfKubeconfig(issued.kubeconfig());
  if (!certificate.ok()) return Internal("septad's kubeconfig: " + certificate.status().message());
  certificate->serial = issued.serial();
  return certificate;
}

}  // namespace

std::string ExecCredentialApiVersion(const std::optional<std::string>& exec_info) {
  if (!exec_info || exec_info->empty()) return kExecCredentialApiVersion;
  const nlohmann::json info = nlohmann::json::parse(*exec_info, nullptr, false);
  if (!info.is_object()) return kExecCredentialApiVersion;
  const auto it = info.find("apiVersion");
  if (it != info.end() && it->is_string() && *it == kExecCredentialV1Beta1) return kExecCredentialV1Beta1;
  return kExecCredentialApiVersion;
}

TimePoint ExecCredentialExpiration(const ClientCertificate& certificate, TimePoint now) {
  const TimePoint renewal = certificate.not_after - RenewalMargin(certificate);
  return renewal > now ? renewal : certificate.not_after;
}

std::string ExecCredentialJson(std::string_view api_version, const ClientCertificate& certificate,
                               TimePoint expiration) {
  nlohmann::ordered_json credential;
  credential["apiVersion"] = api_version;
  credential["kind"] = "ExecCredential";
  credential["status"] = {{"expirationTimestamp", FormatRfc3339(expiration)},
                          {"clientCertificateData", certificate.certificate_pem},
                          {"clientKeyData", certificate.private_key_pem}};
  return credential.dump() + "\n";
}

std::vector<std::string> ExecPluginArgs(const PluginConnection& connection, const VclusterKubeconfig& kubeconfig) {
  std::vector<std::string> args{"--server", connection.server};
  if (connection.ca_file) {
    args.insert(args.end(), {"--ca-file", *connection.ca_file});
  } else if (connection.tls) {
    args.emplace_back("--tls");
  }
  if (connection.config_path) args.insert(args.end(), {"--config", *connection.config_path});
  args.insert(args.end(),
              {"vcluster", "credential", kubeconfig.name, "--tenant", kubeconfig.tenant, "--role", kubeconfig.role});
  if (!kubeconfig.ttl.empty()) args.insert(args.end(), {"--ttl", kubeconfig.ttl});
  return args;
}

Result<ClientCertificate> CertificateOfKubeconfig(std::string_view yaml) {
  std::string certificate, key;
  try {
    const YAML::Node user = YAML::Load(std::string(yaml))["users"][0]["user"];
    if (!user.IsMap() || !user["client-certificate-data"] || !user["client-key-data"]) {
      return InvalidArgument("the kubeconfig's first user has no client certificate");
    }
    certificate = user["client-certificate-data"].as<std::string>();
    key = user["client-key-data"].as<std::string>();
  } catch (const YAML::Exception& e) {
    return InvalidArgument(std::string("the kubeconfig cannot be read: ") + e.what());
  }
  auto certificate_pem = base::Base64Decode(certificate);
  auto key_pem = base::Base64Decode(key);
  if (!certificate_pem || !key_pem) return InvalidArgument("the kubeconfig's certificate or key is not base64");
  return ReadClientCertificate(*std::move(certificate_pem), *std::move(key_pem));
}

Result<std::string> ExecKubeconfig(std::string_view issued_yaml, const std::string& command,
                                   const std::vector<std::string>& args, const std::string& role) {
  std::string name, server, ca_data, ns = "default";
  try {
    const YAML::Node issued = YAML::Load(std::string(issued_yaml));
    const YAML::Node cluster = issued["clusters"][0];
    if (!cluster.IsMap() || !cluster["name"] || !cluster["cluster"]["server"] ||
        !cluster["cluster"]["certificate-authority-data"]) {
      return InvalidArgument("the kubeconfig has no cluster with a server and its CA");
    }
    name = cluster["name"].as<std::string>();
    server = cluster["cluster"]["server"].as<std::string>();
    ca_data = cluster["cluster"]["certificate-authority-data"].as<std::string>();
    const YAML::Node context = issued["contexts"][0]["context"];
    if (context.IsMap() && context["namespace"]) ns = context["namespace"].as<std::string>();
  } catch (const YAML::Exception& e) {
    return InvalidArgument(std::string("the kubeconfig cannot be read: ") + e.what());
  }
  const std::string user = Quoted("septactl-" + role + "@" + name);
  std::string out = "apiVersion: v1\nkind: Config\nclusters:\n  - name: " + Quoted(name) +
                    "\n    cluster:\n      server: " + Quoted(server) +
                    "\n      certificate-authority-data: " + Quoted(ca_data) + "\nusers:\n  - name: " + user +
                    "\n    user:\n      exec:\n        apiVersion: " + kExecCredentialApiVersion +
                    "\n        command: " + Quoted(command) + "\n        args:\n";
  for (const std::string& arg : args) out += "          - " + Quoted(arg) + "\n";
  out += "        interactiveMode: Never\n        provideClusterInfo: false\n        installHint: " +
         Quoted("this kubeconfig runs septactl to renew its client certificate: install septactl as " + command +
                ", or make the kubeconfig again with septactl vcluster kubeconfig --exec [--exec-command PATH]") +
         "\ncontexts:\n  - name: " + Quoted(name) + "\n    context:\n      cluster: " + Quoted(name) +
         "\n      user: " + user + "\n      namespace: " + Quoted(ns) + "\ncurrent-context: " + Quoted(name) + "\n";
  return out;
}

int RunExecKubeconfig(const VclusterExecKubeconfig& command, const ExecContext& context, std::ostream& out,
                      std::ostream& err) {
  const VclusterKubeconfig& c = command.kubeconfig;
  auto connection = PluginConnectionOf(context);
  if (!connection.ok()) {
    err << ErrorLine(connection.status()) << "\n";
    return kExitUsage;
  }
  auto executable = command.exec_command.empty() ? OwnExecutable() : Result<std::string>(command.exec_command);
  if (!executable.ok()) {
    err << ErrorLine(executable.status()) << "\n";
    return kExitUsage;
  }
  v1::IssueKubeconfigResponse issued;
  const grpc::Status status = context.issue(IssueRequest(c.tenant, c.name, c.ttl, c.role), issued);
  if (!status.ok()) {
    err << ErrorLine(status, context.server) << "\n";
    return kExitFailure;
  }
  auto certificate = IssuedCertificate(issued);
  auto kubeconfig = certificate.ok()
                        ? ExecKubeconfig(issued.kubeconfig(), *executable, ExecPluginArgs(*connection, c), c.role)
                        : Result<std::string>(certificate.status());
  if (!kubeconfig.ok()) {
    err << ErrorLine(kubeconfig.status()) << "\n";
    return kExitFailure;
  }
  if (issued.ttl_capped()) {
    err << "note: --ttl " << c.ttl << " is longer than the trust tier allows; each certificate expires "
        << "after the tier's cap (this one " << FormatTime(issued.expire_time(), true) << ")\n";
  }
  if (context.options.token) {
    err << "note: the kubeconfig does not carry --token: at each run its septactl uses the config file's token or "
           "$SEPTA_TOKEN\n";
  }
  // The certificate just issued is the plugin's first: kubectl's first run
  // takes it from the cache instead of minting another.
  if (auto cache = CacheOf(context.env)) {
    const CredentialKey key{context.server, c.tenant, c.name, c.role};
    const CredentialCache::Lock lock = cache->Acquire(key, context.options.timeout + kLockWaitBeyondCall);
    if (const Status stored = cache->Store(key, *certificate); !stored.ok()) {
      err << "note: the first certificate was not cached (" << stored.message()
          << "): kubectl's first run asks septad for another\n";
    }
  }
  out << *kubeconfig;
  return kExitOk;
}

int RunExecCredential(const VclusterExecCredential& command, const ExecContext& context, std::ostream& out,
                      std::ostream& err) {
  const CredentialKey key{context.server, command.tenant, command.name, command.role};
  const std::optional<CredentialCache> cache = CacheOf(context.env);
  std::string notes;
  if (!cache) notes += "septactl: note: neither $XDG_CACHE_HOME nor $HOME is set: every run issues a certificate\n";
  grpc::Status call = grpc::Status::OK;
  const auto issue = [&]() -> Result<ClientCertificate> {
    v1::IssueKubeconfigResponse issued;
    call = context.issue(IssueRequest(command.tenant, command.name, command.ttl, command.role), issued);
    if (!call.ok()) return Unavailable("IssueKubeconfig failed");  // reported from `call` below
    return IssuedCertificate(issued);
  };
  auto obtained = ObtainCertificate(cache ? &*cache : nullptr, key, context.clock,
                                    context.options.timeout + kLockWaitBeyondCall, issue, notes);
  err << notes;
  if (!obtained.ok()) {
    if (call.ok()) {
      err << ErrorLine(obtained.status()) << "\n";
      return kExitFailure;
    }
    err << ErrorLine(call, context.server) << "\n";
    if (call.error_code() == grpc::StatusCode::UNAUTHENTICATED) {
      err << "septactl: kubectl's credential plugin for virtual cluster "
          << tenancy::VirtualClusterText(command.tenant, command.name)
          << " needs a valid Septa token to renew its certificate (token: in septactl's config file, or "
             "$SEPTA_TOKEN)\n";
    }
    return kExitFailure;
  }
  const ClientCertificate& certificate = obtained->certificate;
  out << ExecCredentialJson(ExecCredentialApiVersion(VariableOf(context.env, "KUBERNETES_EXEC_INFO")), certificate,
                            ExecCredentialExpiration(certificate, context.clock.Now()));
  return kExitOk;
}

}  // namespace septa::cli
