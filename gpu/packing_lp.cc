#include "gpu/packing_lp.h"

#include <glpk.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>

#include "gpu/cluster_state.h"
#include "gpu/glpk_problem.h"

namespace septa::gpu {
namespace {

// Reduced costs at or below this count as zero: the prices come from a
// floating-point simplex.
constexpr double kPricingTolerance = 1e-9;

int MaxPerGpu(const PackingDemand& d) {
  const int fit = kMilliPerGpu / d.milli;
  return d.max_per_gpu > 0 ? std::min(d.max_per_gpu, fit) : fit;
}

// best[s][w]: the most the prices of sizes < s add up to within w milli
// (bounded knapsack over 1000 milli; a few thousand cells, so a plain DP
// over copies is enough).
std::vector<std::vector<double>> KnapsackTable(const std::vector<PackingDemand>& demand,
                                               const std::vector<double>& prices) {
  const int cap = kMilliPerGpu;
  std::vector<std::vector<double>> best(demand.size() + 1, std::vector<double>(cap + 1, 0.0));
  for (std::size_t s = 0; s < demand.size(); ++s) {
    const int size = demand[s].milli, most = MaxPerGpu(demand[s]);
    for (int w = 0; w <= cap; ++w) {
      double v = best[s][w];
      for (int k = 1; k <= most && k * size <= w; ++k) v = std::max(v, best[s][w - k * size] + k * prices[s]);
      best[s + 1][w] = v;
    }
  }
  return best;
}

// Pricing: the configuration of largest total price, read back from the table.
std::vector<int> BestConfiguration(const std::vector<PackingDemand>& demand, const std::vector<double>& prices,
                                   double& value) {
  const std::vector<std::vector<double>> best = KnapsackTable(demand, prices);
  value = best.back()[kMilliPerGpu];
  std::vector<int> counts(demand.size(), 0);
  int w = kMilliPerGpu;
  for (std::size_t s = demand.size(); s-- > 0;) {
    const int size = demand[s].milli, most = MaxPerGpu(demand[s]);
    for (int k = 0; k <= most && k * size <= w; ++k) {
      if (best[s][w - k * size] + k * prices[s] >= best[s + 1][w] - kPricingTolerance) {
        counts[s] = k;
        w -= k * size;
        break;
      }
    }
  }
  return counts;
}

void AddColumn(glp_prob* lp, const std::vector<int>& counts) {
  const int col = glp_add_cols(lp, 1);
  glp_set_col_bnds(lp, col, GLP_LO, 0.0, 0.0);
  glp_set_obj_coef(lp, col, 1.0);
  std::vector<int> rows{0};  // GLPK's vectors are 1-based
  std::vector<double> values{0};
  for (std::size_t s = 0; s < counts.size(); ++s) {
    if (counts[s] == 0) continue;
    rows.push_back(static_cast<int>(s) + 1);
    values.push_back(counts[s]);
  }
  glp_set_mat_col(lp, col, static_cast<int>(values.size()) - 1, rows.data(), values.data());
}

}  // namespace

std::vector<double> MostValuableFill(const std::vector<PackingDemand>& demand, const std::vector<double>& prices) {
  return KnapsackTable(demand, prices).back();
}

Result<PackingLpSolution> SolvePackingLp(const std::vector<PackingDemand>& demand, int max_rounds) {
  std::set<int> seen;
  for (const PackingDemand& d : demand) {
    if (d.milli <= 0 || d.milli >= kMilliPerGpu) {
      return InvalidArgument("pod size " + std::to_string(d.milli) + " milli is not in 1..999");
    }
    if (!(d.demand >= 0)) return InvalidArgument("demand for size " + std::to_string(d.milli) + " is negative");
    if (d.max_per_gpu < 0) return InvalidArgument("max_per_gpu for size " + std::to_string(d.milli) + " is negative");
    if (!seen.insert(d.milli).second) return InvalidArgument("size " + std::to_string(d.milli) + " is listed twice");
  }
  PackingLpSolution solution;
  solution.prices.assign(demand.size(), 0.0);
  if (demand.empty()) return solution;

  GlpkProblem lp(glp_create_prob());
  glp_set_obj_dir(lp.get(), GLP_MIN);
  glp_add_rows(lp.get(), static_cast<int>(demand.size()));
  for (std::size_t s = 0; s < demand.size(); ++s) {
    glp_set_row_bnds(lp.get(), static_cast<int>(s) + 1, GLP_LO, demand[s].demand, 0.0);
    std::vector<int> alone(demand.size(), 0);  // start: each size alone, as many as fit
    alone[s] = MaxPerGpu(demand[s]);
    AddColumn(lp.get(), alone);
  }
  glp_smcp params;
  glp_init_smcp(&params);
  params.msg_lev = GLP_MSG_OFF;
  for (int round = 0; round < max_rounds; ++round) {
    if (glp_simplex(lp.get(), &params) != 0 || glp_get_status(lp.get()) != GLP_OPT) {
      return Internal("the packing LP has no optimum (GLPK status " + std::to_string(glp_get_status(lp.get())) + ")");
    }
    for (std::size_t s = 0; s < demand.size(); ++s) {
      solution.prices[s] = std::max(0.0, glp_get_row_dual(lp.get(), static_cast<int>(s) + 1));
    }
    double value = 0;
    const std::vector<int> column = BestConfiguration(demand, solution.prices, value);
    if (value <= 1.0 + kPricingTolerance) {  // no configuration has negative reduced cost: optimal
      solution.gpus = glp_get_obj_val(lp.get());
      solution.configurations = glp_get_num_cols(lp.get());
      return solution;
    }
    AddColumn(lp.get(), column);
  }
  return FailedPrecondition("the packing LP did not converge in " + std::to_string(max_rounds) + " rounds");
}

}  // namespace septa::gpu
