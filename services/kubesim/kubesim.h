// kubesim: a Kubernetes-API-compatible server with simulated GPU nodes, for
// development and tests (the role kind and KWOK play elsewhere). One
// instance is one cluster; several may run in one process.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "services/http/server.h"
#include "services/http/tls.h"
#include "services/kubesim/api_server.h"
#include "services/kubesim/dcgm_exporter.h"
#include "services/kubesim/inventory.h"
#include "services/kubesim/nodesim.h"
#include "services/kubesim/workload_controllers.h"

namespace septa::kubesim {

struct KubeSimOptions {
  std::string listen = "127.0.0.1:0";  // HTTPS; port 0 picks a free one
  std::string insecure_listen;         // plain HTTP (loopback only) when set
  std::string cluster_name = "kubesim";
  std::size_t io_threads = 1;
  std::size_t history_limit = 10'000;
  std::size_t body_limit = 3 * 1024 * 1024;  // the API server's request limit
  // Bookmarks, watch timeouts, nodes and controllers; 0: no ticker thread,
  // the owner calls Tick() (deterministic tests).
  std::chrono::milliseconds tick_interval{100};
  ApiServerOptions api;
  // The CRDs of KAI-Scheduler and Kueue (scheduler_crds.h), installed at start.
  bool scheduler_crds = true;
  // Simulated nodes (none when unset) and how they behave.
  std::optional<Inventory> inventory;
  NodeSimOptions nodes;
  // A dcgm-exporter test double on every GPU node of the inventory
  // (dcgm_exporter.h): none when unset.
  std::optional<DcgmSimOptions> dcgm;
  // Faults, for testing clients: asked before every request; a status it
  // returns answers the request instead (a Status body with that code, e.g.
  // 503 for an API server that is down, 409 for a conflict).
  std::function<std::optional<http::HttpStatus>(const http::Request&)> fault;
  // Injected for deterministic tests; the system ones when null.
  const Clock* clock = nullptr;
  RandomSource* random = nullptr;
};

class KubeSim {
 public:
  explicit KubeSim(KubeSimOptions options);
  ~KubeSim();
  KubeSim(const KubeSim&) = delete;
  KubeSim& operator=(const KubeSim&) = delete;

  // Creates the CA and serving certificate, seeds the cluster and listens.
  Status Start();
  void Stop();
  // One pass of everything time-driven: bookmarks, nodes, workload controllers.
  void Tick();

  std::uint16_t https_port() const;
  std::uint16_t http_port() const;  // 0 when not listening on plain HTTP
  std::string server_url() const;   // https://127.0.0.1:<port>
  const std::string& ca_certificate() const { return ca_.certificate; }

  // A client certificate signed by the cluster CA (CN = user, O = groups).
  Result<http::KeyPairPem> IssueClientCertificate(const std::string& user, const std::vector<std::string>& groups,
                                                  TimePoint not_before, TimePoint not_after) const;
  // A kubeconfig for the given client certificate.
  std::string Kubeconfig(const std::string& user, const http::KeyPairPem& client) const;
  // A kubeconfig with a fresh client certificate in system:masters.
  Result<std::string> AdminKubeconfig() const;

  Cluster& cluster() { return *cluster_; }
  ApiServer& api() { return *api_; }
  // The simulated dcgm-exporters; nullptr unless KubeSimOptions::dcgm was set.
  DcgmExporters* dcgm_exporters() { return dcgm_.get(); }

 private:
  void Seed();

  KubeSimOptions options_;
  SystemClock system_clock_;
  std::unique_ptr<RandomSource> system_random_;
  std::unique_ptr<Cluster> cluster_;
  std::unique_ptr<ApiServer> api_;
  std::unique_ptr<NodeSim> node_sim_;
  std::unique_ptr<WorkloadControllers> workloads_;
  std::unique_ptr<DcgmExporters> dcgm_;
  http::KeyPairPem ca_;
  std::unique_ptr<http::Server> https_;
  std::unique_ptr<http::Server> http_;
  std::thread ticker_;
  std::atomic<bool> stopping_{false};
};

}  // namespace septa::kubesim
