// Reads each GPU node's dcgm-exporter as a Prometheus server would, bounded
// (docs/usage.md "Ingest"): the exporters are found through the host
// cluster's API — the GPU Operator's DaemonSet pods, labelled
// app=nvidia-dcgm-exporter in its namespace, each bound to a node, with
// status.podIP and a container port named `metrics` (9400 when unnamed) —
// and `GET http://<podIP>:<port>/metrics` is read within a time and a byte
// bound, then parsed strictly and normalised (common/prometheus_text.h,
// tenancy/usage/dcgm_series.h). kubesim's exporters are found the same way
// (docs/kubesim.md "dcgm-exporter").
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "common/clock.h"
#include "common/prometheus_text.h"
#include "common/status.h"
#include "services/kube/client.h"
#include "services/kube/transport.h"
#include "tenancy/usage/dcgm_series.h"

namespace septa::reconcile {

struct DcgmScraperOptions {
  std::string exporter_namespace = "gpu-operator";
  std::string exporter_selector = "app=nvidia-dcgm-exporter";
  std::string port_name = "metrics";
  int default_port = 9400;
  // The pods are listed again at most this often (a node's exporter not
  // found then is looked for again at the next listing).
  std::chrono::milliseconds list_every{30'000};
  std::chrono::milliseconds timeout{10'000};      // the whole read, connect to last byte
  PrometheusTextLimits limits{};                  // body bytes, series, label bytes, labels
  tenancy::usage::DcgmScrapeOptions normalise{};  // per_process_pod_values; node set per scrape
};

// Why a scrape read nothing, for septa_usage_scrape_errors_total{reason}.
enum class ScrapeFailure { kNoExporter, kUnreachable, kHttpStatus, kTooLarge, kTimeout, kMalformed };
std::string_view ScrapeFailureName(ScrapeFailure failure);  // "no_exporter", ...

struct DcgmScrapeResult {
  std::optional<tenancy::usage::DcgmScrape> scrape{};  // set when read
  std::optional<ScrapeFailure> failure{};              // set when not
  Status error{};                                      // what went wrong, for the log
  std::size_t bytes = 0;
};

class DcgmScraper {
 public:
  DcgmScraper(DcgmScraperOptions options, kube::Client& host, const Clock& clock);
  ~DcgmScraper();

  // Reads `node`'s exporter now. Thread-safe: the controller's workers
  // scrape different nodes at once.
  DcgmScrapeResult Scrape(const std::string& node);
  // Reads the exporter at `base` ("http://10.0.0.7:9400") as `node`'s.
  DcgmScrapeResult ScrapeAt(const std::string& node, const std::string& base);

 private:
  // The node's exporter URL base ("http://10.0.0.7:9400"), listing the
  // exporter pods again when the last listing is older than list_every.
  Result<std::optional<std::string>> EndpointOf(const std::string& node);
  Result<std::shared_ptr<kube::Transport>> TransportFor(const std::string& base);

  DcgmScraperOptions options_;
  kube::Client& host_;
  const Clock& clock_;
  std::mutex mu_;
  std::map<std::string, std::string> endpoints_;  // node -> base URL
  std::optional<TimePoint> listed_;
  std::map<std::string, std::shared_ptr<kube::Transport>> transports_;  // by base URL
};

}  // namespace septa::reconcile
