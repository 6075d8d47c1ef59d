// An in-process kubesim and a client with its admin kubeconfig.
#pragma once

#include <gtest/gtest.h>

#include "services/kube/client.h"
#include "services/kube/resources.h"
#include "services/kubesim/kubesim.h"

namespace septa::kube::testing {

inline nlohmann::json ConfigMap(const std::string& name, nlohmann::json data = nlohmann::json::object(),
                                nlohmann::json labels = nlohmann::json::object()) {
  return {
      {"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", name}, {"labels", labels}}}, {"data", data}};
}

class SimTest : public ::testing::Test {
 protected:
  void SetUp() override { StartSim({}); }

  void StartSim(kubesim::KubeSimOptions options) {
    options.listen = "127.0.0.1:0";
    sim_ = std::make_unique<kubesim::KubeSim>(options);
    ASSERT_TRUE(sim_->Start().ok());
    client_ = ClientFor(*sim_->AdminKubeconfig());
  }

  std::unique_ptr<Client> ClientFor(const std::string& kubeconfig, ClientOptions options = {}) {
    auto config = ParseKubeconfig(kubeconfig);
    EXPECT_TRUE(config.ok()) << config.status().ToString();
    if (!options.sleep) options.sleep = [](std::chrono::milliseconds) {};
    auto client = Client::Create(*config, options);
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    return std::move(*client);
  }

  std::unique_ptr<kubesim::KubeSim> sim_;
  std::unique_ptr<Client> client_;
};

}  // namespace septa::kube::testing
