// kubesim's dcgm-exporters: a test double of NVIDIA's dcgm-exporter on
// every simulated GPU node (docs/kubesim.md, "dcgm-exporter"), so that
// usage accounting can be tested without GPUs (../shared/docs/USAGE-FACTS.md
// §6, "Test without GPUs").
//
// Each GPU node gets a plain-HTTP listener of its own (a free port on
// `listen_host`) serving `GET /metrics` as the exporter serves it on :9400,
// and, like the GPU Operator's DaemonSet, a pod `nvidia-dcgm-exporter-...`
// in `namespace_name` bound to the node, labelled app=nvidia-dcgm-exporter,
// whose status.podIP and container port `metrics` are where that listener
// is: a scraper finds the exporters through the cluster's API as it would
// on a real host.
//
// What it reports comes from the pods running on the node:
//  - devices: the node's GPUs (UUIDs, MIG instances with their GPU-instance
//    ids) as its kube::kGpuIdentityAnnotation says; the kubelet's device
//    allocation is simulated: each running pod's containers get the whole
//    GPUs (nvidia.com/gpu) or MIG instances (nvidia.com/mig-<profile>) they
//    request, free ones in index order, pinned GPUs first (HAMi's
//    nvidia.com/use-gpuuuid, Septa's septa.dev/assignment), and a share of
//    one GPU to KAI's gpu-fraction / gpu-memory pods, which request none;
//  - busy time: run.ai/simulated-gpu-utilization (Run:ai's
//    fake-gpu-operator: a percent "50", or a range "10-30" drawn anew at
//    each scrape), summed over a device's pods, at most 100;
//  - memory: simulation.septa.dev/gpu-memory-mib, held on each of the
//    pod's devices;
//  - power idle_watts + (busy_watts - idle_watts) x busy, and an energy
//    counter that integrates it over the cluster's clock and never goes down.
// Every request is a fresh scrape: ranges drawn, energy brought up to now.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "services/http/server.h"
#include "services/kubesim/api_server.h"
#include "services/kubesim/dcgm_text.h"

namespace septa::kubesim {

// The pod annotations the exporters read (documented as simulation knobs).
inline constexpr const char* kSimulatedGpuUtilizationAnnotation = "run.ai/simulated-gpu-utilization";
inline constexpr const char* kSimulatedGpuMemoryAnnotation = "simulation.septa.dev/gpu-memory-mib";

struct DcgmSimOptions {
  DcgmExporterProfile profile{};
  std::string listen_host = "127.0.0.1";  // each node's listener: port 0 (a free one)
  std::string namespace_name = "gpu-operator";
  bool exporter_pods = true;  // the DaemonSet's pods, where a scraper finds the listeners
  // A running GPU pod without the utilization annotation (or with one that
  // does not parse): fake-gpu-operator's default, always busy.
  double default_busy_percent = 100;
  double idle_watts = 70;   // USAGE-FACTS §5: an H100 with no process
  double busy_watts = 700;  // and one busy
  double reserved_mib = 0;  // FB_RESERVED of a whole GPU
  // Seeds the draws of utilization ranges (each node draws from its own
  // generator, seeded from this and its name); unset: drawn from the
  // cluster's RandomSource.
  std::optional<std::uint64_t> seed{};
};

// "50" -> [50, 50], "10-30" -> [10, 30]: percents 0..100 (decimals allowed),
// low <= high; nullopt for anything else.
struct SimulatedUtilization {
  double low = 0;
  double high = 0;
};
std::optional<SimulatedUtilization> ParseSimulatedUtilization(std::string_view text);
// A whole number of MiB ("20480"); nullopt for anything else.
std::optional<double> ParseSimulatedMemoryMib(std::string_view text);

class DcgmExporters {
 public:
  DcgmExporters(Cluster& cluster, ApiServer& api, DcgmSimOptions options);
  ~DcgmExporters();
  DcgmExporters(const DcgmExporters&) = delete;
  DcgmExporters& operator=(const DcgmExporters&) = delete;

  // Listens for each of `nodes` and creates their exporter pods.
  Status Start(const std::vector<std::string>& nodes);
  void Stop();
  // Brings back exporter pods that were deleted (at most once a second).
  void Tick();

  // One scrape of `node`'s exporter, as GET /metrics answers it. NOT_FOUND
  // for a node without an exporter or no longer in the cluster.
  Result<std::string> Scrape(const std::string& node);

  std::uint16_t port(const std::string& node) const;      // 0: no exporter on that node
  std::string MetricsUrl(const std::string& node) const;  // http://127.0.0.1:<port>/metrics
  // The name of `node`'s exporter pod: "nvidia-dcgm-exporter-" and a hash of the node's name.
  static std::string PodName(std::string_view node);
  const DcgmSimOptions& options() const { return options_; }

 private:
  struct NodeState;
  class RunningPods;
  void EnsurePod(const std::string& node);

  Cluster& cluster_;
  ApiServer& api_;
  DcgmSimOptions options_;
  std::shared_ptr<RunningPods> pods_;
  std::map<std::string, std::unique_ptr<http::Server>> servers_;  // set by Start, cleared by Stop
  mutable std::mutex mu_;                                         // guards nodes_
  std::map<std::string, std::unique_ptr<NodeState>> nodes_;
  std::uint64_t seed_ = 0;
  TimePoint next_pod_check_{};  // Tick's only
  bool stopped_ = false;
};

}  // namespace septa::kubesim
