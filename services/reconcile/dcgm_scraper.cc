#include "services/reconcile/dcgm_scraper.h"

#include <nlohmann/json.hpp>

#include "services/kube/resources.h"

namespace septa::reconcile {

using nlohmann::json;

std::string_view ScrapeFailureName(ScrapeFailure failure) {
  switch (failure) {
    case ScrapeFailure::kNoExporter: return "no_exporter";
    case ScrapeFailure::kUnreachable: return "unreachable";
    case ScrapeFailure::kHttpStatus: return "http_status";
    case ScrapeFailure::kTooLarge: return "too_large";
    case ScrapeFailure::kTimeout: return "timeout";
    case ScrapeFailure::kMalformed: return "malformed";
  }
  return "unknown";
}

DcgmScraper::DcgmScraper(DcgmScraperOptions options, kube::Client& host, const Clock& clock)
    : options_(std::move(options)), host_(host), clock_(clock) {}

DcgmScraper::~DcgmScraper() = default;

namespace {

// The exporter pod's metrics port: the container port named `port_name`,
// else `fallback` (the DaemonSet's 9400).
int MetricsPort(const json& pod, const std::string& port_name, int fallback) {
  const json& containers = pod.value("/spec/containers"_json_pointer, json::array());
  for (const json& container : containers) {
    for (const json& port : container.value("ports", json::array())) {
      if (port.value("name", "") == port_name && port.value("containerPort", 0) > 0) {
        return port.value("containerPort", fallback);
      }
    }
  }
  return fallback;
}

// Plain HTTP to the exporter, no credentials: what a Prometheus scrape sends.
kube::ClientConfig ExporterConfig(const std::string& base) {
  kube::ClientConfig config;
  config.server = base;
  return config;
}

}  // namespace

Result<std::optional<std::string>> DcgmScraper::EndpointOf(const std::string& node) {
  std::lock_guard lock(mu_);
  const TimePoint now = clock_.Now();
  const bool stale = !listed_ || now - *listed_ >= options_.list_every;
  if (stale) {
    kube::ListOptions list;
    list.label_selector = options_.exporter_selector;
    SEPTA_ASSIGN_OR_RETURN(const kube::ListPage page, host_.ListAll(kube::kPods, options_.exporter_namespace, list));
    endpoints_.clear();
    for (const kube::Object& pod : page.items) {
      const std::string_view on = pod.StringAt("/spec/nodeName").value_or("");
      const std::string_view ip = pod.StringAt("/status/podIP").value_or("");
      if (on.empty() || ip.empty() || pod.StringAt("/status/phase") != "Running") continue;
      const std::string host = ip.find(':') != std::string_view::npos ? "[" + std::string(ip) + "]" : std::string(ip);
      endpoints_[std::string(on)] =
          "http://" + host + ":" + std::to_string(MetricsPort(pod.ToJson(), options_.port_name, options_.default_port));
    }
    listed_ = now;
  }
  const auto it = endpoints_.find(node);
  if (it == endpoints_.end()) return std::optional<std::string>();
  return std::optional<std::string>(it->second);
}

Result<std::shared_ptr<kube::Transport>> DcgmScraper::TransportFor(const std::string& base) {
  std::lock_guard lock(mu_);
  if (const auto it = transports_.find(base); it != transports_.end()) return it->second;
  SEPTA_ASSIGN_OR_RETURN(std::unique_ptr<kube::Transport> transport,
                         kube::Transport::Create(ExporterConfig(base), options_.timeout));
  std::shared_ptr<kube::Transport> shared = std::move(transport);
  transports_[base] = shared;
  return shared;
}

DcgmScrapeResult DcgmScraper::Scrape(const std::string& node) {
  auto endpoint = EndpointOf(node);
  if (!endpoint.ok() || !*endpoint) {
    return {.failure = ScrapeFailure::kNoExporter,
            .error = !endpoint.ok() ? endpoint.status()
                                    : NotFound("no running pod labelled " + options_.exporter_selector +
                                               " in namespace " + options_.exporter_namespace + " on node " + node)};
  }
  return ScrapeAt(node, **endpoint);
}

DcgmScrapeResult DcgmScraper::ScrapeAt(const std::string& node, const std::string& base) {
  DcgmScrapeResult out;
  const auto fail = [&out](ScrapeFailure failure, Status error) {
    out.failure = failure;
    out.error = std::move(error);
    return out;
  };
  auto transport = TransportFor(base);
  if (!transport.ok()) return fail(ScrapeFailure::kUnreachable, transport.status());

  kube::HttpRequest request("GET", "/metrics");
  request.accept = "text/plain;version=0.0.4";
  const TimePoint deadline = clock_.Now() + options_.timeout;
  std::string body;
  bool too_large = false;
  bool too_slow = false;
  auto response = (*transport)
                      ->Stream(
                          request, "", options_.timeout,
                          [&](std::string_view piece) {
                            if (body.size() + piece.size() > options_.limits.max_bytes) {
                              too_large = true;
                              return false;
                            }
                            body.append(piece);
                            if (clock_.Now() > deadline) {  // a body trickled in to hold the scraper
                              too_slow = true;
                              return false;
                            }
                            return true;
                          },
                          nullptr);
  out.bytes = body.size();
  const std::string where = "dcgm-exporter of node " + node + " (" + base + "/metrics)";
  if (too_large) {
    return fail(ScrapeFailure::kTooLarge,
                ResourceExhausted(where + ": body over " + std::to_string(options_.limits.max_bytes) + " bytes"));
  }
  if (too_slow) return fail(ScrapeFailure::kTimeout, DeadlineExceeded(where + ": not read within the timeout"));
  if (!response.ok()) {
    const bool timeout = response.status().code() == Code::kDeadlineExceeded;
    return fail(timeout ? ScrapeFailure::kTimeout : ScrapeFailure::kUnreachable,
                Status(response.status().code(), where + ": " + response.status().message()));
  }
  if (response->status != 200) {
    return fail(ScrapeFailure::kHttpStatus, Unavailable(where + ": HTTP " + std::to_string(response->status)));
  }
  auto exposition = ParsePrometheusText(body, options_.limits);
  if (!exposition.ok()) {
    return fail(
        exposition.status().code() == Code::kResourceExhausted ? ScrapeFailure::kTooLarge : ScrapeFailure::kMalformed,
        Status(exposition.status().code(), where + ": " + exposition.status().message()));
  }
  tenancy::usage::DcgmScrapeOptions normalise = options_.normalise;
  normalise.node = node;
  out.scrape = tenancy::usage::NormaliseDcgm(*exposition, normalise);
  return out;
}

}  // namespace septa::reconcile
