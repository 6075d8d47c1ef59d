// W0, MIG-BENCH's fill workload (continuity with the placement benchmark):
// pods that never leave arrive into an empty cluster, loss mode; what share
// of the cluster's compute slices is allocated once the offer reaches 100 %
// and 130 % of them.
#include <cmath>

#include "gpu/mig_churn.h"

namespace septa::gpu {
namespace {

constexpr double kFillLifetimeS = 1e15;  // never, within the fill

}  // namespace

Result<ChurnFill> RunFill(const ChurnCluster& cluster, const std::vector<ChurnPod>& workload,
                          const std::function<std::unique_ptr<ChurnPolicy>()>& make_policy, std::uint64_t seed) {
  if (workload.empty()) return InvalidArgument("the fill workload has no pods");
  std::vector<ChurnPod> staying = workload;
  for (ChurnPod& pod : staying) pod.lifetime_s = kFillLifetimeS;
  const double capacity = 7.0 * cluster.Gpus();
  ChurnConfig config;
  // The load only spaces the arrivals: offering 1.3 × capacity takes 1.3 ×
  // lifetime / load, a thousandth of a lifetime (nobody leaves), with
  // arrivals E[compute slices] × 1e12 / capacity s apart (~1e8 s on
  // mix-6208: every re-layout is over long before the next).
  config.load = 1e3;
  config.queue = false;
  config.prefill = false;
  config.warmup = 0;
  config.seed = seed;
  // Enough arrivals to offer 130 % even if every pod were a 1g: the seed's
  // sequence, cut where the offer crosses 100 % and 130 %.
  config.measured = static_cast<int>(std::ceil(1.3 * capacity)) + 1;
  const std::vector<OfflineArrival> arrivals = ChurnArrivals(cluster, staying, config);
  ChurnFill fill;
  double offered = 0;
  for (std::size_t i = 0; i < arrivals.size() && fill.arrivals_130 == 0; ++i) {
    offered += arrivals[i].pod.ComputeSlices();
    if (fill.arrivals_100 == 0 && offered >= capacity) fill.arrivals_100 = static_cast<int>(i) + 1;
    if (offered >= 1.3 * capacity) fill.arrivals_130 = static_cast<int>(i) + 1;
  }
  auto allocated = [&](int arrivals_count) {
    config.measured = arrivals_count;
    const std::unique_ptr<ChurnPolicy> policy = make_policy();
    const ChurnResult r = RunChurn(cluster, staying, *policy, config);
    return r.accepted_slices / capacity;
  };
  fill.allocated_100 = allocated(fill.arrivals_100);
  fill.allocated_130 = allocated(fill.arrivals_130);
  return fill;
}

}  // namespace septa::gpu
