// An owned GLPK problem (GLPK's C API frees with glp_delete_prob).
#pragma once

#include <glpk.h>

#include <memory>

namespace septa::gpu {

struct GlpkProblemDeleter {
  void operator()(glp_prob* p) const { glp_delete_prob(p); }
};
using GlpkProblem = std::unique_ptr<glp_prob, GlpkProblemDeleter>;

}  // namespace septa::gpu
