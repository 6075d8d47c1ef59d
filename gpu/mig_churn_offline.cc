// B3, MIG-BENCH §5's offline bound: over a window of arrivals into an empty
// cluster, every lifetime known in advance, the most compute slices (or pods)
// any loss-mode admission could accept if instances were re-laid out and pods
// migrated for free at every arrival. MIG-BENCH asks for the integer program;
// this is its LP relaxation (admissions and layouts fractional), a looser
// bound and still a strict one: an upper bound on every policy's acceptance
// of the same arrivals.
//
// The program, per arrival instant j (capacity only grows at arrivals):
//   Σ_p x_pj ≤ G                        GPUs laid out as patterns p
//   Σ_p n_s(p) x_pj ≥ r_sj              instances of shape s cover the running
//   r_sj = r_s,j-1 + Σ_{i arrives at j} g_i a_i [s_i = s]
//                  − Σ_{i ends in (t_j-1, t_j]} g_i a_i [s_i = s]
//   0 ≤ a_i ≤ 1,  max Σ_i w_i a_i
// The running totals r keep every a_i in two rows instead of one per instant
// it runs, so the matrix stays sparse.
#include <glpk.h>

#include <algorithm>
#include <cmath>

#include "gpu/glpk_problem.h"
#include "gpu/mig_churn.h"
#include "gpu/mig_churn_support.h"

namespace septa::gpu {
namespace {

// Takes note of every arrival and admits none: in loss mode the simulator's
// arrivals (times, pods) depend on the seed only, not on what is admitted.
class ArrivalRecorder : public ChurnPolicy {
 public:
  explicit ArrivalRecorder(std::vector<OfflineArrival>& out) : out_(out) {}
  std::string name() const override { return "arrivals"; }
  std::optional<ChurnDecision> Place(const ChurnState& state, const ChurnPod& pod, bool /*may_relayout*/) override {
    out_.push_back({.at_s = state.now(), .pod = pod});
    return std::nullopt;
  }

 private:
  std::vector<OfflineArrival>& out_;
};

// Column and row numbering of the program (GLPK counts from 1).
struct OfflineLayout {
  int arrivals = 0;
  int patterns = 0;
  int Admit(int i) const { return 1 + i; }
  int Pattern(int j, int p) const { return 1 + arrivals + j * (patterns + kMigShapeCount) + p; }
  int Running(int j, int s) const { return 1 + arrivals + j * (patterns + kMigShapeCount) + patterns + s; }
  int Columns() const { return arrivals * (1 + patterns + kMigShapeCount); }
  int GpuRow(int j) const { return 1 + j * (1 + 2 * kMigShapeCount); }
  int CoverRow(int j, int s) const { return GpuRow(j) + 1 + s; }
  int RunningRow(int j, int s) const { return GpuRow(j) + 1 + kMigShapeCount + s; }
  int Rows() const { return arrivals * (1 + 2 * kMigShapeCount); }
};

}  // namespace

std::vector<OfflineArrival> ChurnArrivals(const ChurnCluster& cluster, const std::vector<ChurnPod>& workload,
                                          ChurnConfig config) {
  std::vector<OfflineArrival> arrivals;
  ArrivalRecorder recorder(arrivals);
  config.queue = false;
  config.clock_ns = nullptr;
  RunChurn(cluster, workload, recorder, config);
  return arrivals;
}

Result<OfflineBound> SolveOfflineBound(const ChurnCluster& cluster, const std::vector<OfflineArrival>& arrivals) {
  if (cluster.models.empty() || cluster.node_model.empty()) {
    return InvalidArgument("the offline bound needs a cluster with GPUs");
  }
  const std::vector<std::array<int, kMigShapeCount>> patterns = ChurnMaximalPatterns(*cluster.models[0]);
  const OfflineLayout at{.arrivals = static_cast<int>(arrivals.size()), .patterns = static_cast<int>(patterns.size())};
  const double gpus = static_cast<double>(cluster.Gpus());
  OfflineBound out;
  if (arrivals.empty()) return out;

  GlpkProblem lp(glp_create_prob());
  glp_set_obj_dir(lp.get(), GLP_MAX);
  glp_add_rows(lp.get(), at.Rows());
  glp_add_cols(lp.get(), at.Columns());
  std::vector<int> rows = {0}, cols = {0};
  std::vector<double> values = {0.0};
  auto entry = [&](int row, int col, double value) {
    rows.push_back(row);
    cols.push_back(col);
    values.push_back(value);
  };
  // The instant each pod ends at or before, as the first arrival at or after its end.
  std::vector<std::vector<int>> ending(arrivals.size());
  for (int i = 0; i < at.arrivals; ++i) {
    const double end = arrivals[i].at_s + arrivals[i].pod.lifetime_s;
    const auto j = std::lower_bound(arrivals.begin() + i + 1, arrivals.end(), end,
                                    [](const OfflineArrival& a, double t) { return a.at_s < t; }) -
                   arrivals.begin();
    if (j < at.arrivals) ending[j].push_back(i);
  }
  for (int i = 0; i < at.arrivals; ++i) {
    const ChurnPod& pod = arrivals[i].pod;
    glp_set_col_bnds(lp.get(), at.Admit(i), GLP_DB, 0.0, 1.0);
    glp_set_obj_coef(lp.get(), at.Admit(i), pod.ComputeSlices());
    entry(at.RunningRow(i, pod.shape), at.Admit(i), -pod.gpus);  // running from its arrival
  }
  for (int j = 0; j < at.arrivals; ++j) {
    glp_set_row_bnds(lp.get(), at.GpuRow(j), GLP_UP, 0.0, gpus);
    for (int p = 0; p < at.patterns; ++p) {
      glp_set_col_bnds(lp.get(), at.Pattern(j, p), GLP_LO, 0.0, 0.0);
      entry(at.GpuRow(j), at.Pattern(j, p), 1.0);
      for (int s = 0; s < kMigShapeCount; ++s) {
        if (patterns[p][s] > 0) entry(at.CoverRow(j, s), at.Pattern(j, p), patterns[p][s]);
      }
    }
    for (int s = 0; s < kMigShapeCount; ++s) {
      glp_set_row_bnds(lp.get(), at.CoverRow(j, s), GLP_LO, 0.0, 0.0);
      glp_set_row_bnds(lp.get(), at.RunningRow(j, s), GLP_FX, 0.0, 0.0);
      glp_set_col_bnds(lp.get(), at.Running(j, s), GLP_LO, 0.0, 0.0);
      entry(at.CoverRow(j, s), at.Running(j, s), -1.0);
      entry(at.RunningRow(j, s), at.Running(j, s), 1.0);
      if (j > 0) entry(at.RunningRow(j, s), at.Running(j - 1, s), -1.0);
    }
    for (int i : ending[j]) entry(at.RunningRow(j, arrivals[i].pod.shape), at.Admit(i), arrivals[i].pod.gpus);
  }
  glp_load_matrix(lp.get(), static_cast<int>(values.size()) - 1, rows.data(), cols.data(), values.data());
  // Slices first (dual simplex after presolve); then pods from that optimal
  // basis, still feasible when only the objective changes (primal simplex).
  glp_smcp params;
  glp_init_smcp(&params);
  params.msg_lev = GLP_MSG_OFF;
  params.presolve = GLP_ON;
  params.meth = GLP_DUALP;
  auto solve = [&]() { return glp_simplex(lp.get(), &params) == 0 && glp_get_status(lp.get()) == GLP_OPT; };
  if (!solve()) return Internal("GLPK found no optimum of the offline bound's program (slices)");
  out.slices = glp_get_obj_val(lp.get());
  for (int i = 0; i < at.arrivals; ++i) glp_set_obj_coef(lp.get(), at.Admit(i), 1.0);
  params.presolve = GLP_OFF;
  params.meth = GLP_PRIMAL;
  if (!solve()) return Internal("GLPK found no optimum of the offline bound's program (pods)");
  out.pods = glp_get_obj_val(lp.get());
  for (int i = 0; i < at.arrivals; ++i) {
    out.class_pods[arrivals[i].pod.ShapeClass()] += glp_get_col_prim(lp.get(), at.Admit(i));
  }
  return out;
}

}  // namespace septa::gpu
