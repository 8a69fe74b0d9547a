// Comparing logits with a golden by the kernel tests' rule (kit/compare.h: FlashMLA's, docs/spec/mla.md
// §5): NaN/inf positions must match; an element passes if |a - r| < abs_tol or |a - r| / (|r| + 1e-6)
// < rel_tol; the cosine difference 1 - 2·Σ(a·r) / Σ(a² + r²) (fp64) must be <= cos_tol; and, for
// logits only, the top-1 token of every row must agree unless the golden's top two are closer than
// abs_tol (a tie).
#pragma once

#include <string>
#include <vector>

#include "attention/precision_class.h"
#include "kit/compare.h"

namespace mlasim {

struct LogitsTolerance {
  std::string name;    // tolerance class, e.g. "fp32"
  double abs_tol = 0;
  double rel_tol = 0;
  double cos_tol = 0;
  std::string reason;  // why these numbers
};

// The tolerance for logits of precision class `compute` against the fp64 golden.
LogitsTolerance logits_tolerance(PrecisionClass compute);

struct LogitsComparison {
  bool pass = true;
  long rows = 0, cols = 0;
  long num_nonfinite_mismatches = 0;  // NaN/inf pattern differences
  long num_failing = 0;               // elements outside both abs and rel tolerance
  double max_abs = 0;                 // over finite pairs
  long max_abs_row = -1, max_abs_col = -1;
  double max_rel = 0;
  long max_rel_row = -1, max_rel_col = -1;
  double cos_diff = 0;
  long top1_mismatches = 0;           // rows whose argmax differs (ties excluded)
  long first_top1_mismatch_row = -1;
  std::string shape_error;            // non-empty when the shapes differ
  // One line: the verdict and the worst element; `row_label(row)` names a row (step, id, position).
  std::string summary(const LogitsTolerance& tol, const std::vector<std::string>& row_labels) const;
};

// compare_logits one row at a time, in row order: the same sums in the same order, so the same
// result, with nothing held but the running totals (a model run compares its rows as they come).
class LogitsComparer {
 public:
  LogitsComparer(long cols, const LogitsTolerance& tol);
  // One row of `cols` values of each side.
  void add_row(const double* actual, const double* golden);
  // Elements so far outside the tolerance or with a differing NaN/inf pattern.
  long num_outside() const { return static_cast<long>(rule_.num_outside()); }
  LogitsComparison result() const;

 private:
  long cols_ = 0, rows_ = 0;
  double abs_tol_ = 0;
  kit::Comparator rule_;
  long top1_mismatches_ = 0, first_top1_mismatch_row_ = -1;
};

LogitsComparison compare_logits(const std::vector<double>& actual, const std::vector<double>& golden, long rows,
                                long cols, const LogitsTolerance& tol);

}  // namespace mlasim
