#include "services/reconcile/hoarding_controller.h"

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>
#include <spdlog/spdlog.h>

#include <string>

#include "gpu/inventory.h"
#include "services/reconcile/shard.h"

namespace septa::reconcile {

struct HoardingController::Instruments {
  explicit Instruments(prometheus::Registry& registry)
      : hoarding(prometheus::BuildGauge()
                     .Name("septa_gpu_hoarding")
                     .Help("1 for each virtual cluster all of whose GPUs have idled past its tier's threshold "
                           "(this replica's shards)")
                     .Register(registry)),
        actions(prometheus::BuildCounter()
                    .Name("septa_usage_hoarding_actions_total")
                    .Help("Virtual clusters flagged as hoarding, unflagged, put to sleep, or changed by another writer "
                          "meanwhile (conflict: decided again at the next pass)")
                    .Register(registry)),
        passes(prometheus::BuildCounter()
                   .Name("septa_usage_hoarding_passes_total")
                   .Help("Passes of the hoarding controller, by result")
                   .Register(registry)) {}
  prometheus::Family<prometheus::Gauge>& hoarding;
  prometheus::Family<prometheus::Counter>& actions;
  prometheus::Family<prometheus::Counter>& passes;
  std::vector<prometheus::Gauge*> flagged;  // the last pass's, removed at the next
};

HoardingController::HoardingController(HoardingControllerOptions options, core::HoardingActor& actor,
                                       prometheus::Registry& metrics)
    : options_(options),
      actor_(actor),
      instruments_(std::make_unique<Instruments>(metrics)),
      periodic_(options_.interval, [this] {
        if (Result<core::HoardingPass> pass = RunOnce(); !pass.ok()) {
          spdlog::warn("usage: hoarding pass failed (the next one tries again): {}", pass.status().ToString());
        }
      }) {}

HoardingController::~HoardingController() = default;

bool HoardingController::Owns(const tenancy::VirtualClusterRef& ref) const {
  if (options_.shards == nullptr) return true;
  return options_.shards->Holds(ShardOf(ref.ToString(), options_.shards->shard_count()));
}

Result<core::HoardingPass> HoardingController::RunOnce() {
  std::lock_guard lock(pass_mu_);  // one pass at a time: its gauges replace the last pass's
  Result<core::HoardingPass> pass = actor_.RunOnce([this](const tenancy::VirtualClusterRef& ref) { return Owns(ref); });
  Instruments& m = *instruments_;
  m.passes.Add({{"result", pass.ok() ? "ok" : "error"}}).Increment();
  if (!pass.ok()) return pass;
  m.actions.Add({{"action", "flagged"}}).Increment(pass->flagged);
  m.actions.Add({{"action", "unflagged"}}).Increment(pass->unflagged);
  m.actions.Add({{"action", "slept"}}).Increment(pass->slept);
  m.actions.Add({{"action", "conflict"}}).Increment(pass->conflicts);
  for (prometheus::Gauge* gauge : m.flagged) m.hoarding.Remove(gauge);
  m.flagged.clear();
  for (const core::HoardingPass::Flagged& f : pass->flagged_now) {
    prometheus::Gauge& gauge = m.hoarding.Add({{"tenant", f.hoarder.holder.tenant},
                                               {"vcluster", f.hoarder.holder.vcluster},
                                               {"tier", std::string(gpu::TierName(f.hoarder.holder.tier))},
                                               {"reason", f.reason}});
    gauge.Set(1);
    m.flagged.push_back(&gauge);
  }
  return pass;
}

}  // namespace septa::reconcile
