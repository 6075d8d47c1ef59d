// septa-vaultsim: a TEST server that speaks enough of Vault's HTTP API (v1)
// for Septa's Vault client and its tests. It is not a Vault: state is in
// memory, there is no storage, no audit, no real seal (a test switch), and
// Kubernetes logins are checked with a TokenReview only when asked
// (review_kubernetes_logins). docs/vaultsim.md says
// what it implements; the real hvac client judges it (tests/e2e/vaultsim).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "services/http/server.h"
#include "services/http/tls.h"
#include "services/vaultsim/backend.h"

namespace septa::vaultsim {

struct VaultSimOptions {
  std::string listen = "127.0.0.1:0";  // port 0 picks a free one
  bool tls = false;                    // HTTPS with a fresh CA (ca_certificate())
  std::string root_token;              // empty: a random one
  std::size_t io_threads = 1;
  // Injected for deterministic tests; the system ones when null.
  const Clock* clock = nullptr;
  RandomSource* random = nullptr;
  // Check Kubernetes logins as Vault does, with a TokenReview at the
  // configured kubernetes_host; off, a JWT's claims are believed, which
  // tests without a cluster need.
  bool review_kubernetes_logins = false;
};

class VaultSim {
 public:
  explicit VaultSim(VaultSimOptions options);
  ~VaultSim();
  VaultSim(const VaultSim&) = delete;
  VaultSim& operator=(const VaultSim&) = delete;

  Status Start();
  void Stop();

  std::string address() const;  // "http://127.0.0.1:<port>" (https with tls)
  std::uint16_t port() const;
  const std::string& root_token() const { return backend_->root_token(); }
  const std::string& ca_certificate() const { return ca_.certificate; }  // with tls

  // Test switches; also at PUT /v1/sys/vaultsim/faults with the root token.
  Faults faults() const { return backend_->faults(); }
  void SetFaults(const Faults& faults) { backend_->SetFaults(faults); }

  Backend& backend() { return *backend_; }

 private:
  void Serve(http::Request&& request, std::shared_ptr<http::Exchange> exchange);

  VaultSimOptions options_;
  SystemClock system_clock_;
  std::unique_ptr<RandomSource> system_random_;
  std::unique_ptr<Backend> backend_;
  http::KeyPairPem ca_;
  std::unique_ptr<http::Server> server_;
  std::mutex delayed_mu_;
  std::vector<std::jthread> delayed_;  // requests held by the delay fault
};

}  // namespace septa::vaultsim
