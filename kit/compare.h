// FlashMLA's comparison rule for computed values against a reference (docs/spec/mla.md §5), used by
// the kernel tests, the benchmarks' validation and the logits comparison: NaN/±inf positions must
// match exactly; a finite element passes if |a − r| < abs_tol or |a − r| / (|r| + 1e-6) < rel_tol;
// and cos_diff = 1 − 2Σ(a·r) / Σ(a² + r²) (fp64, over the finite pairs) must be ≤ cos_tol. It is
// computed as Σ(a − r)² / Σ(a² + r²), the same quantity without the cancellation of 1 − x: FlashMLA's
// form cannot resolve below ~1e-16 (one ulp of 1), which the fp64 logits class (cos 1e-18) needs.
#pragma once

#include <cmath>
#include <cstddef>
#include <string>

namespace mlasim::kit {

struct CompareTol {
  double abs_tol = 0;
  double rel_tol = 0;
  double cos_tol = -1;  // < 0: no cosine check (FlashMLA checks LSE with abs/rel only)
};

// Dense decode (docs/spec/mla.md §5): outputs abs 8e-4, rel 2.01/128, cos 5e-6; LSE abs 1e-6, rel 8.01/65536.
inline constexpr CompareTol kDecodeOutTol{8e-4, 2.01 / 128, 5e-6};
inline constexpr CompareTol kDecodeLseTol{1e-6, 8.01 / 65536, -1};
// Dense prefill (192/128): abs 1e-3, rel 8.01/128, cos 7e-6.
inline constexpr CompareTol kPrefillOutTol{1e-3, 8.01 / 128, 7e-6};

struct CompareResult {
  bool pass = true;
  std::size_t n = 0;
  std::size_t num_failing = 0;               // finite elements outside both abs and rel tolerance
  std::size_t num_nonfinite_mismatches = 0;  // NaN/inf pattern differences
  std::size_t first_nonfinite_mismatch = 0;
  double max_abs = 0, max_rel = 0;  // over finite pairs; an index is set only when its maximum is > 0
  std::size_t max_abs_idx = 0, max_rel_idx = 0;
  double worst_a = 0, worst_r = 0;  // values at the first failing element (or the max-abs one)
  std::size_t worst_idx = 0;
  double cos_diff = 0;

  // "ok|FAIL: n=... failing=... max_abs=...@i max_rel=...@i cos_diff=... (tol ...) worst: a=... r=... @i"
  std::string describe(const CompareTol& tol) const;
};

// The rule applied one element at a time, in index order; result() closes the cosine and the verdict.
class Comparator {
 public:
  explicit Comparator(const CompareTol& tol) : tol_(tol) {}

  // Adds the pair (computed a, reference r) at flat index i; returns whether both are finite.
  bool add(double a, double r, std::size_t i) {
    ++c_.n;
    if (!std::isfinite(a) || !std::isfinite(r)) {
      if (!same_nonfinite(a, r)) {
        if (c_.num_nonfinite_mismatches++ == 0) c_.first_nonfinite_mismatch = i;
        note_worst(a, r, i);
      }
      return false;
    }
    const double d = std::fabs(a - r), rel = d / (std::fabs(r) + 1e-6);
    if (d > c_.max_abs) c_.max_abs = d, c_.max_abs_idx = i, max_abs_a_ = a, max_abs_r_ = r;
    if (rel > c_.max_rel) c_.max_rel = rel, c_.max_rel_idx = i;
    if (!(d < tol_.abs_tol) && !(rel < tol_.rel_tol)) {
      if (c_.num_failing++ == 0) note_worst(a, r, i);
    }
    sq_diff_ += (a - r) * (a - r);
    norms_ += a * a + r * r;
    return true;
  }

  CompareResult result() const;
  // Pairs so far outside the tolerance or with a differing NaN/inf pattern.
  std::size_t num_outside() const { return c_.num_failing + c_.num_nonfinite_mismatches; }

 private:
  static bool same_nonfinite(double a, double r) {
    if (std::isnan(a) || std::isnan(r)) return std::isnan(a) && std::isnan(r);
    return a == r;
  }
  void note_worst(double a, double r, std::size_t i) {
    if (have_worst_) return;
    c_.worst_a = a, c_.worst_r = r, c_.worst_idx = i, have_worst_ = true;
  }

  CompareTol tol_;
  CompareResult c_;
  double sq_diff_ = 0, norms_ = 0;
  double max_abs_a_ = 0, max_abs_r_ = 0;
  bool have_worst_ = false;
};

// a: computed values (any arithmetic type convertible to double), r: reference; both n elements.
template <class A, class R>
CompareResult compare_values(const A* a, const R* r, std::size_t n, const CompareTol& tol) {
  Comparator c(tol);
  for (std::size_t i = 0; i < n; ++i) c.add(static_cast<double>(a[i]), static_cast<double>(r[i]), i);
  return c.result();
}

}  // namespace mlasim::kit
