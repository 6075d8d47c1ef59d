#include "services/reconcile/usage_metrics.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

namespace septa::reconcile {

namespace {
constexpr char kOther[] = "_other";
}  // namespace

struct UsageMetrics::Instruments {
  explicit Instruments(prometheus::Registry& registry)
      : allocated(Counter(registry, "septa_gpu_allocated_gpu_hours_total", "GPU-hours held (billed), by holder")),
        measured(Counter(registry, "septa_gpu_measured_gpu_hours_total",
                         "GPU-hours held and covered by exporter samples (efficiency = used / measured)")),
        used(Counter(registry, "septa_gpu_used_gpu_hours_total",
                     "GPU-hours used: GR engine activity x weight x covered time")),
        waste(Counter(registry, "septa_gpu_waste_gpu_hours_total", "GPU-hours measured and not used")),
        cost(Counter(registry, "septa_gpu_cost_total", "Cost accrued at the rates in force, in the currency label")),
        reserved(Gauge(registry, "septa_gpu_memory_reserved_mib", "GPU memory held, as last accounted")),
        used_memory(Gauge(registry, "septa_gpu_memory_used_mib", "GPU memory in use (FB_USED), as last sampled")),
        idle(Gauge(registry, "septa_gpu_idle_seconds",
                   "A held GPU's or MIG instance's idle run: 30 s windows below 1 % activity in a row")),
        folded(prometheus::BuildCounter()
                   .Name("septa_usage_metric_sets_folded_total")
                   .Help("Label sets folded into tenant=\"_other\" past the bound on series")
                   .Register(registry)
                   .Add({})) {}

  static prometheus::Family<prometheus::Counter>& Counter(prometheus::Registry& r, const char* name, const char* help) {
    return prometheus::BuildCounter().Name(name).Help(help).Register(r);
  }
  static prometheus::Family<prometheus::Gauge>& Gauge(prometheus::Registry& r, const char* name, const char* help) {
    return prometheus::BuildGauge().Name(name).Help(help).Register(r);
  }

  prometheus::Family<prometheus::Counter>& allocated;
  prometheus::Family<prometheus::Counter>& measured;
  prometheus::Family<prometheus::Counter>& used;
  prometheus::Family<prometheus::Counter>& waste;
  prometheus::Family<prometheus::Counter>& cost;
  prometheus::Family<prometheus::Gauge>& reserved;
  prometheus::Family<prometheus::Gauge>& used_memory;
  prometheus::Family<prometheus::Gauge>& idle;
  prometheus::Counter& folded;
  // Set last time, by family, to remove.
  std::vector<prometheus::Gauge*> reserved_set, used_memory_set, idle_set;
};

UsageMetrics::UsageMetrics(prometheus::Registry& registry, std::string currency, std::size_t max_label_sets)
    : instruments_(std::make_unique<Instruments>(registry)),
      currency_(std::move(currency)),
      max_label_sets_(max_label_sets) {}

UsageMetrics::~UsageMetrics() = default;

UsageMetrics::Labels UsageMetrics::LabelsOf(const std::string& tenant, const std::string& vcluster, gpu::Tier tier,
                                            const std::string& model, const std::string& mig_profile) {
  Labels labels{tenant, vcluster, std::string(gpu::TierName(tier)), model, mig_profile};
  if (known_.contains(labels)) return labels;
  if (known_.size() >= max_label_sets_) {
    instruments_->folded.Increment();
    labels = Labels{kOther, kOther, std::get<2>(labels), model, mig_profile};
  }
  known_[labels] = true;
  return labels;
}

namespace {

std::map<std::string, std::string> Named(
    const std::tuple<std::string, std::string, std::string, std::string, std::string>& labels) {
  return {{"tenant", std::get<0>(labels)},
          {"vcluster", std::get<1>(labels)},
          {"tier", std::get<2>(labels)},
          {"model", std::get<3>(labels)},
          {"mig_profile", std::get<4>(labels)}};
}

}  // namespace

void UsageMetrics::Accounted(const std::string& node, const std::vector<tenancy::usage::UsageMinuteRow>& minutes,
                             const std::vector<tenancy::usage::UsageIdleState>& idle) {
  std::lock_guard lock(mu_);
  NodeGauges gauges;
  for (const auto& row : minutes) {
    const Labels labels = LabelsOf(row.entity.tenant, row.entity.vcluster, row.tier, row.model, row.mig_profile);
    const auto named = Named(labels);
    instruments_->allocated.Add(named).Increment(row.allocated_gpu_seconds / 3600.0);
    instruments_->measured.Add(named).Increment(row.measured_gpu_seconds / 3600.0);
    instruments_->used.Add(named).Increment(row.used_gpu_seconds / 3600.0);
    instruments_->waste.Add(named).Increment(row.waste_gpu_seconds / 3600.0);
    auto with_currency = named;
    with_currency["currency"] = currency_;
    instruments_->cost.Add(with_currency).Increment(row.cost);
  }
  // The gauges: the last minute each entity was accounted in.
  std::map<tenancy::usage::UsageEntityKey, const tenancy::usage::UsageMinuteRow*> last;
  for (const auto& row : minutes) {
    const auto* kept = last[row.entity];
    if (kept == nullptr || kept->minute <= row.minute) last[row.entity] = &row;
  }
  for (const auto& [key, row] : last) {
    const Labels labels = LabelsOf(key.tenant, key.vcluster, row->tier, row->model, row->mig_profile);
    gauges.reserved_mib[labels] += row->reserved_memory_mib;
    if (row->used_memory_mib) gauges.used_mib[labels] += *row->used_memory_mib;
  }
  gauges.idle = idle;
  nodes_[node] = std::move(gauges);
  SetGauges();
}

void UsageMetrics::Forget(const std::string& node) {
  std::lock_guard lock(mu_);
  if (nodes_.erase(node) > 0) SetGauges();
}

void UsageMetrics::SetGauges() {
  for (prometheus::Gauge* gauge : instruments_->reserved_set) instruments_->reserved.Remove(gauge);
  for (prometheus::Gauge* gauge : instruments_->used_memory_set) instruments_->used_memory.Remove(gauge);
  for (prometheus::Gauge* gauge : instruments_->idle_set) instruments_->idle.Remove(gauge);
  instruments_->reserved_set.clear();
  instruments_->used_memory_set.clear();
  instruments_->idle_set.clear();
  std::map<Labels, double> reserved, used;
  for (const auto& [node, gauges] : nodes_) {
    for (const auto& [labels, mib] : gauges.reserved_mib) reserved[labels] += mib;
    for (const auto& [labels, mib] : gauges.used_mib) used[labels] += mib;
  }
  for (const auto& [labels, mib] : reserved) {
    prometheus::Gauge& gauge = instruments_->reserved.Add(Named(labels));
    gauge.Set(mib);
    instruments_->reserved_set.push_back(&gauge);
  }
  for (const auto& [labels, mib] : used) {
    prometheus::Gauge& gauge = instruments_->used_memory.Add(Named(labels));
    gauge.Set(mib);
    instruments_->used_memory_set.push_back(&gauge);
  }
  for (const auto& [node, gauges] : nodes_) {
    for (const auto& state : gauges.idle) {
      prometheus::Gauge& gauge = instruments_->idle.Add({{"tenant", state.entity.tenant},
                                                         {"vcluster", state.entity.vcluster},
                                                         {"tier", std::string(gpu::TierName(state.tier))},
                                                         {"node", state.entity.node},
                                                         {"gpu_uuid", state.entity.gpu_uuid},
                                                         {"gpu_i_id", std::to_string(state.entity.gi_id)}});
      gauge.Set(static_cast<double>(state.idle_ms) / 1000.0);
      instruments_->idle_set.push_back(&gauge);
    }
  }
}

}  // namespace septa::reconcile
