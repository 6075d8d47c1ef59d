// The LP relaxation of packing fractional pods into GPUs (Gilmore-Gomory's
// cutting-stock LP), solved by column generation with GLPK:
//
//   min  sum_c x_c   over configurations c (how many pods of each size share
//                    one GPU, sizes summing to at most 1000 milli)
//   s.t. sum_c n_s(c) x_c >= demand_s  for every size s,   x >= 0
//
// Its optimum is the fewest GPUs the demand can be packed into; its dual
// prices y_s say what one pod of size s is worth in GPUs when the mix is
// packed as well as it can be (a size that only fills room other pods leave
// anyway is worth 0). Septa's policy values free GPU capacity at these prices
// (docs/placement.md); the packing bound of septa-bench uses the optimum.
#pragma once

#include <vector>

#include "common/status.h"

namespace septa::gpu {

struct PackingDemand {
  int milli = 0;        // pod size, 1..999
  double demand = 0;    // pods (or frequency) to pack, >= 0
  int max_per_gpu = 0;  // at most this many on one GPU; 0 = as many as fit
};

struct PackingLpSolution {
  double gpus = 0;             // the LP optimum
  std::vector<double> prices;  // dual price y_s per input entry, in GPUs per pod
  int configurations = 0;      // columns generated
};

// K(w) for w = 0..1000 milli: the most `prices` (one per entry of `demand`)
// add up to over pod counts that fit in w, each size at most max_per_gpu
// times when that is set. The LP's pricing step uses K(1000); Septa's policy
// values a GPU with w milli free at K(w).
std::vector<double> MostValuableFill(const std::vector<PackingDemand>& demand, const std::vector<double>& prices);

// Sizes must be distinct and in 1..999. Fails (FailedPrecondition) if column
// generation does not converge within `max_rounds`.
Result<PackingLpSolution> SolvePackingLp(const std::vector<PackingDemand>& demand, int max_rounds = 500);

}  // namespace septa::gpu
