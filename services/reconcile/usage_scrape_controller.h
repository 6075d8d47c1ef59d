// The usage scraper (issue 34, docs/usage.md "Ingest"): every
// `interval` each GPU node's dcgm-exporter is read (DcgmScraper, bounded in
// time and bytes) and the node's usage accounted since its cursor
// (core::UsageAccounting: one transaction, added once whichever replica or
// retry gets there first). Keys are node names, on the controller
// runtime's shards so that replicas split the nodes; each Reconcile asks to
// be run again one interval after it started. A node that failed to scrape
// is still accounted (allocated, not measured: its coverage drops), and
// the failure counted by reason. Nodes the inventory gains are found by a
// sweep every `discover_every`; a node gone or without GPUs is dropped.
//
// Metrics: septa_usage_scrapes_total{result="ok"|<ScrapeFailureName>},
// septa_usage_scrape_bytes (last body, summed over nodes: a gauge per
// replica), septa_usage_series_dropped_total{reason} (NormaliseDcgm's
// counts: unknown_metric, unidentified, bad_label, bad_value,
// label_conflicts), septa_usage_unattributed_samples_total{reason=
// "unknown_gpu"|"unheld_activity"}, septa_usage_attribution_conflicts_total,
// septa_usage_unmeasurable_reservations (last accounting, per replica),
// septa_usage_exporter_identities{result="learnt"|"ambiguous"} (GPU UUIDs and
// GPU-instance ids only the exporter gave: tenancy/usage/gpu_identity.h),
// septa_usage_skipped_seconds_total (time not billed: septad was away
// longer than max_gap). No label names a node, pod or tenant: the
// cardinality is that of the reasons.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "services/core/store.h"
#include "services/core/usage_accounting.h"
#include "services/reconcile/controller.h"
#include "services/reconcile/dcgm_scraper.h"
#include "services/reconcile/usage_metrics.h"

namespace septa::reconcile {

struct UsageScrapeControllerOptions {
  std::chrono::milliseconds interval{30'000};
  std::chrono::milliseconds discover_every{60'000};
  int workers = 2;  // scrapes wait on the network
  ShardLeases* shards = nullptr;
};

class UsageScrapeController final : public Reconciler<std::string> {
 public:
  UsageScrapeController(UsageScrapeControllerOptions options, DcgmScraper& scraper, core::UsageAccounting& accounting,
                        UsageMetrics& usage_metrics, core::Store& store, const Clock& clock,
                        prometheus::Registry& metrics);
  ~UsageScrapeController() override;  // Stop

  void Start();
  void Stop();
  void Enqueue(const std::string& node) { controller_.Enqueue(node); }
  bool AwaitIdle(std::chrono::milliseconds timeout) const { return controller_.AwaitIdle(timeout); }

  Outcome Reconcile(const std::string& node) override;

 private:
  Result<std::vector<std::string>> ListGpuNodes();
  void Discover(std::stop_token stop);
  void Track(const std::string& node, bool tracked);
  // Logs a node's warning when it differs from the last one of `what`
  // (empty: resolved), not at every scrape.
  void WarnOnChange(const std::string& what, const std::string& warning);

  struct Instruments;
  UsageScrapeControllerOptions options_;
  DcgmScraper& scraper_;
  core::UsageAccounting& accounting_;
  UsageMetrics& usage_metrics_;
  core::Store& store_;
  const Clock& clock_;
  std::unique_ptr<Instruments> instruments_;
  Controller<std::string> controller_;
  std::mutex mu_;
  std::set<std::string> tracked_;                // nodes whose next scrape is queued
  std::map<std::string, std::string> warnings_;  // the last logged, by node and kind
  std::jthread discoverer_;
};

}  // namespace septa::reconcile
