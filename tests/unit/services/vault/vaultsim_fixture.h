// A septa-vaultsim on a port of its own and a temporary directory for the
// token and secret-ID files clients read: the set-up of the tests of
// Septa's Vault client and of the Vault issuer.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "services/core/host_namespaces.h"
#include "services/vault/vault_client.h"
#include "services/vaultsim/vaultsim.h"
#include "tenancy/host/names.h"
#include "tests/support/fake_clock.h"
#include "tests/support/seeded_random.h"

namespace septa::vault::testing {

// The host namespaces as septad reads them from the store: acme/legacy's
// was given by an earlier name function, every other one is what
// HostNamespaceName gives a new virtual cluster.
inline constexpr char kLegacyNamespace[] = "septa-acme-x-legacy-named-earlier";
inline core::HostNamespaceOf StoredNamespaces() {
  return [](const core::VirtualClusterKey& key) -> Result<std::string> {
    if (key.tenant == "acme" && key.vcluster == "legacy") return std::string(kLegacyNamespace);
    return tenancy::host::HostNamespaceName(key.tenant, key.vcluster);
  };
}

class VaultSimTest : public ::testing::Test {
 protected:
  // `review_kubernetes_logins`: the simulator checks Kubernetes logins with
  // a TokenReview, as Vault does (its tests need a cluster to ask).
  explicit VaultSimTest(bool review_kubernetes_logins = false)
      : sim_(vaultsim::VaultSimOptions{.listen = "127.0.0.1:0",
                                       .root_token = kRootToken,
                                       .clock = &clock_,
                                       .random = &random_,
                                       .review_kubernetes_logins = review_kubernetes_logins}) {}

  // The simulator's root token; tests check that no reply or log shows it.
  static constexpr char kRootToken[] = "hvs.root-token-of-the-test";

  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("septa-vault-test-" + std::to_string(::getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    ASSERT_TRUE(sim_.Start().ok());
  }
  void TearDown() override {
    sim_.Stop();
    std::filesystem::remove_all(dir_);
  }

  // A file `name` in the test's directory holding `text`; its path.
  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text << "\n";
    return (dir_ / name).string();
  }
  // Options for a client of the simulator, with no backoff: the fake clock
  // does not move while a client waits.
  VaultClientOptions Base() {
    VaultClientOptions o;
    o.address = sim_.address();
    o.backoff_base = std::chrono::milliseconds(0);
    o.max_attempts = 3;
    return o;
  }
  VaultClientOptions TokenOptions(const std::string& token_file) {
    VaultClientOptions o = Base();
    o.token_file = token_file;
    return o;
  }
  std::unique_ptr<VaultClient> MakeClient(VaultClientOptions options) {
    auto c = VaultClient::Create(std::move(options), clock_, random_);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? std::move(*c) : nullptr;
  }

  FakeClock clock_;
  SeededRandom random_{42};
  vaultsim::VaultSim sim_;
  std::filesystem::path dir_;
};

}  // namespace septa::vault::testing
