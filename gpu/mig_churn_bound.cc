// B2, the free-repack reference of MIG-BENCH §5: an arrival is admitted iff
// the running pods and it fit the cluster's GPUs under *some* layouts, as if
// instances could be re-laid out and pods migrated for free and at once.
#include <glpk.h>

#include <memory>
#include <set>

#include "gpu/mig_churn.h"

namespace septa::gpu {
namespace {

struct ChurnGlpDeleter {
  void operator()(glp_prob* p) const { glp_delete_prob(p); }
};

// Shape counts of every maximal layout of `model` (deduplicated).
std::vector<std::array<int, kMigShapeCount>> RepackPatterns(const GpuModel& model) {
  std::set<std::array<int, kMigShapeCount>> patterns;
  for (const MigLayout& layout : MaximalLayouts(model)) {
    std::array<int, kMigShapeCount> counts = {};
    bool ok = true;
    for (const MigInstance& inst : layout) {
      const MigProfile& p = model.mig_profiles[inst.profile];
      const int shape = ProfileShape(p);
      if (shape < 0) {
        ok = false;  // a +me instance: the same layout without it is covered by another pattern
        break;
      }
      ++counts[shape];
    }
    if (ok) patterns.insert(counts);
  }
  return {patterns.begin(), patterns.end()};
}

// The cutting-stock LP: min sum x_p  s.t.  sum_p n_s(p) x_p >= d_s, x >= 0.
class RepackLp {
 public:
  explicit RepackLp(const GpuModel& model) : lp_(glp_create_prob()) {
    glp_set_obj_dir(lp_.get(), GLP_MIN);
    glp_add_rows(lp_.get(), kMigShapeCount);
    for (int s = 0; s < kMigShapeCount; ++s) glp_set_row_bnds(lp_.get(), s + 1, GLP_LO, 0.0, 0.0);
    for (const auto& pattern : RepackPatterns(model)) {
      const int col = glp_add_cols(lp_.get(), 1);
      glp_set_col_bnds(lp_.get(), col, GLP_LO, 0.0, 0.0);
      glp_set_obj_coef(lp_.get(), col, 1.0);
      std::vector<int> rows = {0};
      std::vector<double> values = {0.0};
      for (int s = 0; s < kMigShapeCount; ++s) {
        if (pattern[s] == 0) continue;
        rows.push_back(s + 1);
        values.push_back(pattern[s]);
      }
      glp_set_mat_col(lp_.get(), col, static_cast<int>(values.size()) - 1, rows.data(), values.data());
    }
    glp_init_smcp(&params_);
    params_.msg_lev = GLP_MSG_OFF;
  }

  // The LP optimum for `demand`; -1 if GLPK finds none.
  double Gpus(const std::array<int, kMigShapeCount>& demand) {
    for (int s = 0; s < kMigShapeCount; ++s) glp_set_row_bnds(lp_.get(), s + 1, GLP_LO, demand[s], 0.0);
    if (glp_simplex(lp_.get(), &params_) != 0 || glp_get_status(lp_.get()) != GLP_OPT) return -1;
    return glp_get_obj_val(lp_.get());
  }

 private:
  std::unique_ptr<glp_prob, ChurnGlpDeleter> lp_;
  glp_smcp params_{};
};

class RepackBound : public ChurnPolicy {
 public:
  std::string name() const override { return "bound-repack"; }
  std::optional<ChurnDecision> Place(const ChurnState& state, const ChurnPod& pod, bool /*may_relayout*/) override {
    if (!lp_) {
      lp_ = std::make_unique<RepackLp>(*state.cluster().models[0]);
      gpus_ = static_cast<double>(state.gpus().size());
    }
    std::array<int, kMigShapeCount> demand = running_;
    demand[pod.shape] += pod.gpus;
    double compute = 0, memory = 0;
    for (int s = 0; s < kMigShapeCount; ++s) {
      compute += demand[s] * kShapeCompute[s];
      memory += demand[s] * kShapeMemory[s];
    }
    if (compute > 7 * gpus_ || memory > 8 * gpus_) return std::nullopt;
    const double need = lp_->Gpus(demand);
    if (need < 0 || need > gpus_ + 1e-6) return std::nullopt;
    running_ = demand;
    return ChurnDecision{};
  }
  void OnDepart(const ChurnPod& pod) override { running_[pod.shape] -= pod.gpus; }

 private:
  std::unique_ptr<RepackLp> lp_;
  double gpus_ = 0;
  std::array<int, kMigShapeCount> running_ = {};
};

}  // namespace

double RepackLpGpus(const GpuModel& model, const std::array<int, kMigShapeCount>& demand) {
  RepackLp lp(model);
  return lp.Gpus(demand);
}

std::unique_ptr<ChurnPolicy> MakeRepackBound() { return std::make_unique<RepackBound>(); }

}  // namespace septa::gpu
