// B2, the free-repack reference of MIG-BENCH §5: an arrival is admitted iff
// the running pods and it fit the cluster's GPUs under *some* layouts, as if
// instances could be re-laid out and pods migrated for free and at once.
#include <glpk.h>

#include <cmath>
#include <memory>

#include "gpu/glpk_problem.h"
#include "gpu/mig_churn.h"
#include "gpu/mig_churn_support.h"

namespace septa::gpu {

// Its LP relaxation answers most questions alone: above the limit, the
// integer optimum is too; rounding a basic solution up (at most one nonzero
// column per row, so at most kMigShapeCount GPUs more) is an integer
// solution, so if that fits the limit the demand fits. Only between the two,
// near a full cluster, does branch and bound run.
struct RepackProgram::Glpk {
  static constexpr double kEps = 1e-6;

  explicit Glpk(const GpuModel& model) : lp(glp_create_prob()) {
    glp_set_obj_dir(lp.get(), GLP_MIN);
    glp_add_rows(lp.get(), kMigShapeCount);
    for (int s = 0; s < kMigShapeCount; ++s) glp_set_row_bnds(lp.get(), s + 1, GLP_LO, 0.0, 0.0);
    for (const auto& pattern : ChurnMaximalPatterns(model)) {
      const int col = glp_add_cols(lp.get(), 1);
      glp_set_col_bnds(lp.get(), col, GLP_LO, 0.0, 0.0);
      glp_set_col_kind(lp.get(), col, GLP_IV);  // the simplex ignores it; branch and bound honours it
      glp_set_obj_coef(lp.get(), col, 1.0);
      std::vector<int> rows = {0};
      std::vector<double> values = {0.0};
      for (int s = 0; s < kMigShapeCount; ++s) {
        if (pattern[s] == 0) continue;
        rows.push_back(s + 1);
        values.push_back(pattern[s]);
      }
      glp_set_mat_col(lp.get(), col, static_cast<int>(values.size()) - 1, rows.data(), values.data());
    }
    glp_init_smcp(&simplex);
    simplex.msg_lev = GLP_MSG_OFF;
    glp_init_iocp(&branch);
    branch.msg_lev = GLP_MSG_OFF;
  }

  // The LP relaxation for `demand` (warm-started from the previous basis).
  bool Relax(const std::array<int, kMigShapeCount>& demand) {
    for (int s = 0; s < kMigShapeCount; ++s) glp_set_row_bnds(lp.get(), s + 1, GLP_LO, demand[s], 0.0);
    return glp_simplex(lp.get(), &simplex) == 0 && glp_get_status(lp.get()) == GLP_OPT;
  }

  // An integer solution: the relaxation's, each column rounded up.
  double RoundedUp() const {
    double gpus = 0;
    for (int col = 1; col <= glp_get_num_cols(lp.get()); ++col)
      gpus += std::ceil(glp_get_col_prim(lp.get(), col) - kEps);
    return gpus;
  }

  // Branch and bound from the relaxation's optimal basis.
  int Integer() {
    if (glp_intopt(lp.get(), &branch) != 0 || glp_mip_status(lp.get()) != GLP_OPT) return -1;
    return static_cast<int>(std::lround(glp_mip_obj_val(lp.get())));
  }

  GlpkProblem lp;
  glp_smcp simplex{};
  glp_iocp branch{};
};

RepackProgram::RepackProgram(const GpuModel& model) : glpk_(std::make_unique<Glpk>(model)) {}
RepackProgram::~RepackProgram() = default;

bool RepackProgram::Fits(const std::array<int, kMigShapeCount>& demand, int limit) {
  if (!glpk_->Relax(demand)) return false;
  if (glp_get_obj_val(glpk_->lp.get()) > limit + Glpk::kEps) return false;
  if (glpk_->RoundedUp() <= limit + Glpk::kEps) return true;
  const int optimum = glpk_->Integer();
  return optimum >= 0 && optimum <= limit;
}

int RepackProgram::Gpus(const std::array<int, kMigShapeCount>& demand) {
  return glpk_->Relax(demand) ? glpk_->Integer() : -1;
}

namespace {

class RepackBound : public ChurnPolicy {
 public:
  std::string name() const override { return "bound-repack"; }
  std::optional<ChurnDecision> Place(const ChurnState& state, const ChurnPod& pod, bool /*may_relayout*/) override {
    if (!program_) {
      program_ = std::make_unique<RepackProgram>(*state.cluster().models[0]);
      gpus_ = static_cast<int>(state.gpus().size());
    }
    std::array<int, kMigShapeCount> demand = running_;
    demand[pod.shape] += pod.gpus;
    double compute = 0, memory = 0;
    for (int s = 0; s < kMigShapeCount; ++s) {
      compute += demand[s] * kShapeCompute[s];
      memory += demand[s] * kShapeMemory[s];
    }
    if (compute > 7 * gpus_ || memory > 8 * gpus_) return std::nullopt;
    if (!program_->Fits(demand, gpus_)) return std::nullopt;
    running_ = demand;
    return ChurnDecision{};
  }
  void OnDepart(const ChurnPod& pod) override { running_[pod.shape] -= pod.gpus; }

 private:
  std::unique_ptr<RepackProgram> program_;
  int gpus_ = 0;
  std::array<int, kMigShapeCount> running_ = {};
};

}  // namespace

std::unique_ptr<ChurnPolicy> MakeRepackBound() { return std::make_unique<RepackBound>(); }

}  // namespace septa::gpu
