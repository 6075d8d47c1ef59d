// septad assembled: configuration -> PostgreSQL (embedded or given) ->
// migrations -> store -> use cases -> host cluster (given kubeconfig, or a
// simulated one in-process) -> REST and gRPC listeners. The main is a
// thin shell around this so that tests can run the whole server in-process
// on ephemeral ports.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "common/status.h"
#include "services/config/config.h"

namespace septa::rest {
class RestApi;
}  // namespace septa::rest
namespace septa::vcp {
class SimulatedControlPlanes;
}  // namespace septa::vcp

namespace septa::app {

class SeptadApp {
 public:
  static Result<std::unique_ptr<SeptadApp>> Start(const config::Config& config);
  ~SeptadApp();  // Shutdown(config.shutdown_grace) if still running

  std::uint16_t http_port() const;
  bool tls() const;  // REST is HTTPS and gRPC uses TLS
  int grpc_port() const;
  // <data_dir>/admin.token, written (mode 0600) on the first start.
  std::string admin_token_path() const;
  // The bootstrap admin token when this start created it (shown once).
  const std::optional<std::string>& new_admin_token() const;
  // Where the database is: the URL without its password.
  std::string database_description() const;
  // The host cluster's kubeconfig: the configured one, or <data_dir>/kubeconfig
  // (mode 0600) for the simulated cluster septad runs when none is configured.
  const std::string& kubeconfig_path() const;
  // The simulated virtual control planes (config vcluster_addr): the
  // core::ControlPlanes the provisioner drives. control_plane: simulated only.
  vcp::SimulatedControlPlanes& control_planes();
  // The REST surface (its route table, for tests).
  const rest::RestApi& rest_api() const;

  // Stops accepting, lets in-flight requests finish within `grace`, closes
  // the listeners, then the store, then the embedded PostgreSQL.
  void Shutdown(std::chrono::milliseconds grace);

 private:
  struct Impl;
  explicit SeptadApp(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace septa::app
