// The virtual control planes on a real host cluster (septad configuration
// `control_plane: host`): each virtual cluster gets the stock control plane
// that tenancy/host/control_plane_manifests.h renders, applied to its host
// namespace with server-side apply, on a PostgreSQL database and login role
// of its own for kine, on the server septad itself uses.
//
// Where state lives, so that every step can be repeated after a crash:
// the virtual cluster's CA in the core::VirtualObjectStore (as the
// simulated control planes keep theirs; List reads it); the certificates
// it issued and the database password only in the host Secrets, reused
// while they are there and issued or made anew otherwise. A second Ensure
// with nothing changed writes nothing, neither to the host nor to the
// database.
//
// Serving means the StatefulSet reports a ready replica: the kubelet's
// readiness probe on kube-apiserver's /readyz passed. The provisioner does
// not call the virtual API server; the syncer does, at its Service
// (SyncerKubeconfig), so septad must run where the host's Service network
// is reached. On a simulated host (kubesim) no container runs: pods turn
// Ready without an API server behind them, so this path is exercised up to
// the manifests, the objects' lifecycle and the syncer's credentials only.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "common/clock.h"
#include "services/core/control_plane.h"
#include "services/core/host_namespaces.h"
#include "services/core/virtual_object_store.h"
#include "services/kube/client.h"
#include "tenancy/host/config.h"
#include "tenancy/host/control_plane_manifests.h"

namespace septa::hostcp {

struct HostControlPlanesOptions {
  tenancy::host::ControlPlaneConfig config;
  tenancy::host::RenderConfig render;  // the field manager and the virtual DNS port
  // A URL of the PostgreSQL server as septad reaches it, as a role that may
  // create databases and roles (septad's own database_url).
  std::string database_admin_url;
  // The same server as the host cluster's pods reach it: "host:port".
  std::string database_address;
  std::chrono::hours certificate_validity{24 * 365};
  // Another CA whose client certificates each virtual cluster's API server
  // accepts besides its own (issuer vault: the cluster's Vault
  // intermediate, vault::VaultPki::ClientCaPem), asked at every Ensure;
  // none when unset.
  std::function<Result<std::string>(const core::VirtualClusterKey&)> client_ca{};
  // The namespace each virtual cluster's control plane goes to, as stored
  // with it (core::StoredHostNamespaces in septad); required.
  core::HostNamespaceOf host_namespace_of{};
  // Injected for deterministic tests; the system ones when null.
  const Clock* clock = nullptr;
  RandomSource* random = nullptr;
};

// Every option in range; errors name the field.
Status ValidateHostControlPlanesOptions(const HostControlPlanesOptions& options);

// Who the syncer is to each virtual API server (in system:masters).
inline constexpr std::string_view kSyncerUser = "septa:syncer";

class HostControlPlanes final : public core::ControlPlanes {
 public:
  HostControlPlanes(kube::Client& host, core::VirtualObjectStore& store, HostControlPlanesOptions options);
  ~HostControlPlanes() override;

  Result<core::ControlPlaneState> Ensure(const std::string& tenant, const std::string& vcluster) override;
  // Deletes the objects, then the database and its role, then the CA.
  Status Remove(const std::string& tenant, const std::string& vcluster) override;
  Result<std::vector<std::pair<std::string, std::string>>> List() override;
  Result<std::string> SyncerKubeconfig(const std::string& tenant, const std::string& vcluster) override;
  Result<std::optional<core::WorkloadEndpoints>> WorkloadEndpointsOf(const std::string& tenant,
                                                                     const std::string& vcluster) override;

 private:
  // The virtual cluster's CA, stored now unless it was.
  Result<core::StoredControlPlane> EnsureCa(const core::VirtualClusterKey& key);
  Result<tenancy::host::ControlPlaneCertificates> IssueCertificates(const core::StoredControlPlane& ca,
                                                                    const std::string& host_namespace);
  Status ApplyObject(const nlohmann::json& object);

  kube::Client& host_;
  core::VirtualObjectStore& store_;
  HostControlPlanesOptions options_;
  SystemClock system_clock_;
  std::unique_ptr<RandomSource> system_random_;
  const Clock& clock_;
  RandomSource& random_;
};

}  // namespace septa::hostcp
