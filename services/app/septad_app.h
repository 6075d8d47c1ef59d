// septad assembled as an ordered list of stages (septad_app.cc,
// StartStages): PostgreSQL (embedded or given) -> store -> use cases -> host
// cluster (given kubeconfig, or a simulated one in-process) -> controllers
// -> virtual control planes -> REST and gRPC listeners. One owner
// (startup_stages.h) stops the started stages in reverse order, after a
// failed start and at Shutdown alike. The main is a thin shell around this
// so that tests can run the whole server in-process on ephemeral ports.
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
  // Runs the stages in order. An error names the stage that failed
  // ("stage control-planes: vcluster_addr ...", its code and field
  // violations kept), and the stages started before it are stopped.
  static Result<std::unique_ptr<SeptadApp>> Start(const config::Config& config);
  ~SeptadApp();  // Shutdown(config.shutdown_grace) if still running

  std::uint16_t http_port() const;
  std::optional<std::uint16_t> metrics_port() const;  // the metrics_addr listener's, when set
  bool tls() const;                                   // REST is HTTPS and gRPC uses TLS
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
  // the listeners, then stops the other stages in reverse start order (the
  // store and the embedded PostgreSQL last). Idempotent.
  void Shutdown(std::chrono::milliseconds grace);

 private:
  struct Impl;
  explicit SeptadApp(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace septa::app
