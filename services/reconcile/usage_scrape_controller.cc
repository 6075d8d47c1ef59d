#include "services/reconcile/usage_scrape_controller.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>
#include <spdlog/spdlog.h>

#include <map>

namespace septa::reconcile {

struct UsageScrapeController::Instruments {
  explicit Instruments(prometheus::Registry& registry)
      : scrapes(prometheus::BuildCounter()
                    .Name("septa_usage_scrapes_total")
                    .Help("dcgm-exporter scrapes by result: ok, or why nothing was read")
                    .Register(registry)),
        bytes(prometheus::BuildGauge()
                  .Name("septa_usage_scrape_bytes")
                  .Help("Bytes of the last exposition read from each node, summed over this replica's nodes")
                  .Register(registry)
                  .Add({})),
        dropped(prometheus::BuildCounter()
                    .Name("septa_usage_series_dropped_total")
                    .Help("Exporter series left out, by reason (never guessed)")
                    .Register(registry)),
        unattributed(prometheus::BuildCounter()
                         .Name("septa_usage_unattributed_samples_total")
                         .Help("Samples of a GPU the inventory does not know, or activity on capacity nobody holds")
                         .Register(registry)),
        conflicts(prometheus::BuildCounter()
                      .Name("septa_usage_attribution_conflicts_total")
                      .Help("Pod labels or per-pod values that contradict the reservation holding the device")
                      .Register(registry)
                      .Add({})),
        unmeasurable(prometheus::BuildGauge()
                         .Name("septa_usage_unmeasurable_reservations")
                         .Help("Reservations on this replica's nodes whose devices the inventory cannot key "
                               "(GPU UUID or MIG GPU-instance id unknown), at the last accounting of each node")
                         .Register(registry)
                         .Add({})),
        identities(prometheus::BuildGauge()
                       .Name("septa_usage_exporter_identities")
                       .Help("GPUs and MIG instances of this replica's nodes whose UUID or GPU-instance id the "
                             "inventory lacks: learnt from the exporter, or ambiguous there and left unknown")
                       .Register(registry)),
        learnt(identities.Add({{"result", "learnt"}})),
        ambiguous(identities.Add({{"result", "ambiguous"}})),
        skipped(prometheus::BuildCounter()
                    .Name("septa_usage_skipped_seconds_total")
                    .Help("Time not billed because no replica accounted a node for longer than the maximum gap")
                    .Register(registry)
                    .Add({})) {}

  prometheus::Family<prometheus::Counter>& scrapes;
  prometheus::Gauge& bytes;
  prometheus::Family<prometheus::Counter>& dropped;
  prometheus::Family<prometheus::Counter>& unattributed;
  prometheus::Counter& conflicts;
  prometheus::Gauge& unmeasurable;
  prometheus::Family<prometheus::Gauge>& identities;
  prometheus::Gauge& learnt;
  prometheus::Gauge& ambiguous;
  prometheus::Counter& skipped;
  std::mutex mu;
  std::map<std::string, double> bytes_by_node;
  std::map<std::string, double> unmeasurable_by_node;
  std::map<std::string, double> learnt_by_node;
  std::map<std::string, double> ambiguous_by_node;

  static void Sum(prometheus::Gauge& gauge, std::map<std::string, double>& by_node, const std::string& node,
                  std::optional<double> value) {
    if (value) {
      by_node[node] = *value;
    } else {
      by_node.erase(node);
    }
    double total = 0;
    for (const auto& [n, v] : by_node) total += v;
    gauge.Set(total);
  }
  void Count(prometheus::Family<prometheus::Counter>& family, const std::string& reason, int n) {
    if (n > 0) family.Add({{"reason", reason}}).Increment(n);
  }
};

UsageScrapeController::UsageScrapeController(UsageScrapeControllerOptions options, DcgmScraper& scraper,
                                             core::UsageAccounting& accounting, UsageMetrics& usage_metrics,
                                             core::Store& store, const Clock& clock, prometheus::Registry& metrics)
    : options_(options),
      scraper_(scraper),
      accounting_(accounting),
      usage_metrics_(usage_metrics),
      store_(store),
      clock_(clock),
      instruments_(std::make_unique<Instruments>(metrics)),
      controller_(ControllerOptions<std::string>{.name = "usage-scrape",
                                                 .workers = options.workers,
                                                 .list_keys = [this] { return ListGpuNodes(); },
                                                 .shards = options.shards},
                  *this, clock, metrics) {}

UsageScrapeController::~UsageScrapeController() { Stop(); }

void UsageScrapeController::Start() {
  controller_.Start();
  discoverer_ = std::jthread([this](std::stop_token stop) { Discover(stop); });
}

void UsageScrapeController::Stop() {
  discoverer_ = {};  // requests stop and joins
  controller_.Stop();
}

Result<std::vector<std::string>> UsageScrapeController::ListGpuNodes() {
  SEPTA_ASSIGN_OR_RETURN(
      const std::vector<gpu::InventoryNode> nodes,
      core::TransactFor(store_, core::TxMode::kReadOnly, [](core::Tx& tx) { return tx.Inventory().ListNodes(); }));
  std::vector<std::string> names;
  for (const gpu::InventoryNode& node : nodes) {
    if (!node.gpus.empty()) names.push_back(node.name);
  }
  return names;
}

void UsageScrapeController::Discover(std::stop_token stop) {
  while (clock_.SleepUntil(clock_.Now() + options_.discover_every, stop)) {
    auto nodes = ListGpuNodes();
    if (!nodes.ok()) {
      spdlog::warn("usage-scrape: listing GPU nodes failed: {}", nodes.status().ToString());
      continue;
    }
    for (const std::string& node : *nodes) {
      std::lock_guard lock(mu_);
      if (!tracked_.contains(node)) controller_.Enqueue(node, Priority::kLow);
    }
  }
}

void UsageScrapeController::WarnOnChange(const std::string& what, const std::string& warning) {
  std::lock_guard lock(mu_);
  std::string& last = warnings_[what];
  if (warning == last) return;
  if (!warning.empty()) spdlog::warn("usage-scrape: {}", warning);
  if (warning.empty() && !last.empty()) spdlog::info("usage-scrape: {}: resolved", what);
  last = warning;
}

void UsageScrapeController::Track(const std::string& node, bool tracked) {
  std::lock_guard lock(mu_);
  if (tracked) {
    tracked_.insert(node);
  } else {
    tracked_.erase(node);
  }
}

Outcome UsageScrapeController::Reconcile(const std::string& node) {
  const TimePoint started = clock_.Now();
  DcgmScrapeResult read = scraper_.Scrape(node);
  std::optional<tenancy::usage::NodeScrape> scrape;
  {
    std::lock_guard lock(instruments_->mu);
    instruments_->scrapes
        .Add({{"result", read.failure ? std::string(ScrapeFailureName(*read.failure)) : std::string("ok")}})
        .Increment();
    Instruments::Sum(instruments_->bytes, instruments_->bytes_by_node, node, static_cast<double>(read.bytes));
    if (read.scrape) {
      const tenancy::usage::DcgmSeriesCounts& counts = read.scrape->counts;
      instruments_->Count(instruments_->dropped, "unknown_metric", counts.unknown_metric);
      instruments_->Count(instruments_->dropped, "unidentified", counts.unidentified);
      instruments_->Count(instruments_->dropped, "bad_label", counts.bad_label);
      instruments_->Count(instruments_->dropped, "bad_value", counts.bad_value);
      instruments_->Count(instruments_->dropped, "label_conflicts", counts.label_conflicts);
    }
  }
  WarnOnChange(node + "/scrape", read.failure ? read.error.ToString() : "");
  const TimePoint at = clock_.Now();
  if (read.scrape)
    scrape = tenancy::usage::NodeScrape{.node = node, .at = at, .samples = std::move(read.scrape->samples)};

  auto accounted = accounting_.Account(node, at, scrape);
  if (!accounted.ok()) {
    Track(node, false);
    return Outcome::Error(accounted.status());
  }
  {
    std::lock_guard lock(instruments_->mu);
    instruments_->Count(instruments_->unattributed, "unknown_gpu", accounted->unknown_gpu_samples);
    instruments_->Count(instruments_->unattributed, "unheld_activity", accounted->unheld_activity_samples);
    if (accounted->attribution_conflicts > 0) instruments_->conflicts.Increment(accounted->attribution_conflicts);
    if (accounted->skipped.count() > 0) {
      instruments_->skipped.Increment(std::chrono::duration<double>(accounted->skipped).count());
    }
    Instruments::Sum(instruments_->unmeasurable, instruments_->unmeasurable_by_node, node,
                     static_cast<double>(accounted->unmeasurable_reservations));
    Instruments::Sum(instruments_->learnt, instruments_->learnt_by_node, node,
                     static_cast<double>(accounted->learnt.uuids + accounted->learnt.gi_ids));
    Instruments::Sum(instruments_->ambiguous, instruments_->ambiguous_by_node, node,
                     static_cast<double>(accounted->learnt.ambiguous));
  }
  WarnOnChange(node + "/unmeasurable", accounted->unmeasurable_reservations == 0
                                           ? ""
                                           : "node " + node + ": " +
                                                 std::to_string(accounted->unmeasurable_reservations) +
                                                 " reservation(s) cannot be measured: " + accounted->unmeasurable);
  if (accounted->skipped.count() > 0) {
    spdlog::warn("usage-scrape: node {}: {} s were not accounted by any replica and are not billed", node,
                 std::chrono::duration_cast<std::chrono::seconds>(accounted->skipped).count());
  }
  if (!accounted->gpu_node) {  // gone, or without GPUs any more
    Track(node, false);
    usage_metrics_.Forget(node);
    std::lock_guard lock(instruments_->mu);
    Instruments::Sum(instruments_->bytes, instruments_->bytes_by_node, node, std::nullopt);
    Instruments::Sum(instruments_->unmeasurable, instruments_->unmeasurable_by_node, node, std::nullopt);
    Instruments::Sum(instruments_->learnt, instruments_->learnt_by_node, node, std::nullopt);
    Instruments::Sum(instruments_->ambiguous, instruments_->ambiguous_by_node, node, std::nullopt);
    return Outcome::Done();
  }
  if (accounted->recorded) usage_metrics_.Accounted(node, accounted->minutes, accounted->idle);
  Track(node, true);
  const auto spent = clock_.Now() - started;
  return Outcome::RequeueAfter(
      std::max<std::chrono::nanoseconds>(options_.interval - spent, std::chrono::nanoseconds(0)));
}

}  // namespace septa::reconcile
