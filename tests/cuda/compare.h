// FlashMLA's comparison rule for kernel outputs against a double-precision host reference:
// NaN/±inf positions must match exactly; a finite element passes if |a − r| < abs_tol or
// |a − r| / (|r| + 1e-6) < rel_tol; and cos_diff = 1 − 2Σ(a·r) / Σ(a² + r²) (fp64) ≤ cos_tol.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <string>

namespace mlasim::gpu_test {

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
  double max_abs = 0, max_rel = 0;
  std::size_t max_abs_idx = 0, max_rel_idx = 0;
  double worst_a = 0, worst_r = 0;  // values at the first failing element (or the max-abs one)
  std::size_t worst_idx = 0;
  double cos_diff = 0;

  std::string describe(const CompareTol& tol) const {
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "%s: n=%zu failing=%zu nonfinite-mismatch=%zu max_abs=%.3e@%zu max_rel=%.3e@%zu "
                  "cos_diff=%.3e (tol abs %.1e rel %.2e cos %.1e) worst: a=%.8g r=%.8g @%zu",
                  pass ? "ok" : "FAIL", n, num_failing, num_nonfinite_mismatches, max_abs, max_abs_idx, max_rel,
                  max_rel_idx, cos_diff, tol.abs_tol, tol.rel_tol, tol.cos_tol, worst_a, worst_r, worst_idx);
    return buf;
  }
};

namespace compare_detail {
inline bool same_nonfinite(double a, double r) {
  if (std::isnan(a) || std::isnan(r)) return std::isnan(a) && std::isnan(r);
  if (std::isinf(a) || std::isinf(r)) return a == r;
  return true;
}
}  // namespace compare_detail

// a: kernel output (any arithmetic type convertible to double), r: reference; both n elements.
template <class A, class R>
CompareResult compare_values(const A* a, const R* r, std::size_t n, const CompareTol& tol) {
  CompareResult c;
  c.n = n;
  double dot = 0, norms = 0;
  bool have_worst = false;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = static_cast<double>(a[i]), y = static_cast<double>(r[i]);
    if (!std::isfinite(x) || !std::isfinite(y)) {
      if (!compare_detail::same_nonfinite(x, y)) {
        if (c.num_nonfinite_mismatches++ == 0) c.first_nonfinite_mismatch = i;
        if (!have_worst) c.worst_a = x, c.worst_r = y, c.worst_idx = i, have_worst = true;
      }
      continue;
    }
    const double d = std::fabs(x - y), rel = d / (std::fabs(y) + 1e-6);
    if (d > c.max_abs) c.max_abs = d, c.max_abs_idx = i;
    if (rel > c.max_rel) c.max_rel = rel, c.max_rel_idx = i;
    if (!(d < tol.abs_tol) && !(rel < tol.rel_tol)) {
      if (c.num_failing++ == 0 && !have_worst) c.worst_a = x, c.worst_r = y, c.worst_idx = i, have_worst = true;
    }
    dot += x * y;
    norms += x * x + y * y;
  }
  if (!have_worst && n > 0) {
    c.worst_idx = c.max_abs_idx;
    c.worst_a = static_cast<double>(a[c.worst_idx]);
    c.worst_r = static_cast<double>(r[c.worst_idx]);
  }
  c.cos_diff = norms > 0 ? 1.0 - 2.0 * dot / norms : 0.0;
  c.pass = c.num_nonfinite_mismatches == 0 && c.num_failing == 0 && (tol.cos_tol < 0 || c.cos_diff <= tol.cos_tol);
  return c;
}

// Compares, prints one line "  <what>: ..." on failure (or always when verbose), returns pass.
template <class A, class R>
bool check_close(const char* what, const A* a, const R* r, std::size_t n, const CompareTol& tol, bool verbose = false) {
  const CompareResult c = compare_values(a, r, n, tol);
  if (!c.pass || verbose) std::printf("  %s: %s\n", what, c.describe(tol).c_str());
  return c.pass;
}

}  // namespace mlasim::gpu_test
