// The comparison's verdict and its one-line description.
#include "kit/compare.h"

#include <cstdio>

namespace mlasim::kit {

CompareResult Comparator::result() const {
  CompareResult c = c_;
  if (!have_worst_ && c.n > 0) {  // nothing failed: the worst is the largest absolute difference
    c.worst_idx = c.max_abs_idx;
    c.worst_a = max_abs_a_;
    c.worst_r = max_abs_r_;
  }
  c.cos_diff = norms_ > 0 ? sq_diff_ / norms_ : 0.0;
  c.pass = c.num_nonfinite_mismatches == 0 && c.num_failing == 0 && (tol_.cos_tol < 0 || c.cos_diff <= tol_.cos_tol);
  return c;
}

std::string CompareResult::describe(const CompareTol& tol) const {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "%s: n=%zu failing=%zu nonfinite-mismatch=%zu max_abs=%.3e@%zu max_rel=%.3e@%zu "
                "cos_diff=%.3e (tol abs %.1e rel %.2e cos %.1e) worst: a=%.8g r=%.8g @%zu",
                pass ? "ok" : "FAIL", n, num_failing, num_nonfinite_mismatches, max_abs, max_abs_idx, max_rel,
                max_rel_idx, cos_diff, tol.abs_tol, tol.rel_tol, tol.cos_tol, worst_a, worst_r, worst_idx);
  return buf;
}

}  // namespace mlasim::kit
