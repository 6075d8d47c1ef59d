// The simulated nodes the dcgm-exporter double is tested on, by kubesim's
// own tests (tests/unit/services/kubesim/dcgm_exporter_test.cc) and by the
// usage scraper's that read it through the API
// (tests/unit/services/reconcile/dcgm_scraper_test.cc): a MIG H100 node, a
// whole-GPU A100 node, and a node without GPUs (so without an exporter).
#pragma once

namespace septa::test {

inline constexpr const char* kDcgmTestInventory = R"(
nodes:
  - name: h100-0
    cpu: "96"
    memory: 1Ti
    gpus: {model: H100-80GB, count: 2, migConfig: all-balanced}
  - name: a100-0
    cpu: "64"
    memory: 512Gi
    gpus: {model: A100-80GB, count: 2}
  - name: cpu-0
    cpu: "16"
    memory: 64Gi
)";

}  // namespace septa::test
