// Usage on /metrics (docs/usage.md "/metrics"), as this replica accounted
// it: counters of allocated, measured, used and wasted GPU-hours and of
// cost, and gauges of memory held and used and of each held GPU's idle
// run, labelled by tenant, virtual cluster, tier, model and MIG profile —
// never by pod. Replicas account disjoint nodes, so the platform's figure
// is the sum over replicas (sum by (tenant) (rate(...))). Efficiency is a
// ratio of rates: used over measured.
//
// Cardinality: one label set per (tenant, virtual cluster, tier, model,
// profile) held; past `max_label_sets` new sets are folded into
// tenant="_other" (counted in septa_usage_metric_sets_folded_total). The
// gauges of a node are replaced at each of its accountings, so a virtual
// cluster gone leaves no gauge; its counters stay until septad restarts, as
// counters must.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "tenancy/usage/usage_rows.h"

namespace prometheus {
class Registry;
}  // namespace prometheus

namespace septa::reconcile {

class UsageMetrics {
 public:
  UsageMetrics(prometheus::Registry& registry, std::string currency, std::size_t max_label_sets = 20'000);
  ~UsageMetrics();

  // What one accounting of `node` added, and its idle runs now.
  void Accounted(const std::string& node, const std::vector<tenancy::usage::UsageMinuteRow>& minutes,
                 const std::vector<tenancy::usage::UsageIdleState>& idle);
  // The node is no longer scraped: its gauges go.
  void Forget(const std::string& node);

 private:
  using Labels = std::tuple<std::string, std::string, std::string, std::string, std::string>;
  Labels LabelsOf(const std::string& tenant, const std::string& vcluster, gpu::Tier tier, const std::string& model,
                  const std::string& mig_profile);
  void SetGauges();

  struct Instruments;
  std::unique_ptr<Instruments> instruments_;
  std::string currency_;
  std::size_t max_label_sets_;
  std::mutex mu_;
  std::map<Labels, bool> known_;  // label sets in use
  // Per node, its part of each gauge: memory reserved and used by label set.
  struct NodeGauges {
    std::map<Labels, double> reserved_mib;
    std::map<Labels, double> used_mib;
    std::vector<tenancy::usage::UsageIdleState> idle;
  };
  std::map<std::string, NodeGauges> nodes_;
};

}  // namespace septa::reconcile
