// The logits comparison rule: exact reporting of the worst element, NaN patterns, ties.
#include <catch2/catch.hpp>

#include <cmath>

#include "verify/logits_compare.h"

using namespace mlasim;

TEST_CASE("identical logits match, one perturbed element is named", "[logits]") {
  std::vector<double> g = {1.0, 2.0, 3.0, -1.0, 0.5, 0.25};
  LogitsTolerance tol = logits_tolerance(PrecisionClass::kFp32);
  LogitsComparison same = compare_logits(g, g, 2, 3, tol);
  CHECK(same.pass);
  CHECK(same.max_abs == 0.0);
  std::vector<double> a = g;
  a[4] += 0.01;  // row 1, column 1: 0.51 vs 0.5
  LogitsComparison c = compare_logits(a, g, 2, 3, tol);
  CHECK_FALSE(c.pass);
  CHECK(c.num_failing == 1);
  CHECK(c.max_abs_row == 1);
  CHECK(c.max_abs_col == 1);
  CHECK(c.max_abs == Approx(0.01).epsilon(1e-9));
  CHECK(c.summary(tol, {"step 0 a pos 3", "step 1 b pos 7"}).find("max abs 1.000e-02 at step 1 b pos 7 token 1") !=
        std::string::npos);
}

TEST_CASE("within either tolerance passes, NaN positions must match", "[logits]") {
  LogitsTolerance tol = logits_tolerance(PrecisionClass::kFp32);
  std::vector<double> g = {1000.0, 1.0, NAN, INFINITY};
  std::vector<double> a = {1000.05, 1.0 + 5e-5, NAN, INFINITY};  // rel 5e-5 < 1e-3; abs 5e-5 < 1e-4
  CHECK(compare_logits(a, g, 1, 4, tol).pass);
  a[2] = 0.0;
  LogitsComparison c = compare_logits(a, g, 1, 4, tol);
  CHECK_FALSE(c.pass);
  CHECK(c.num_nonfinite_mismatches == 1);
}

TEST_CASE("top-1 disagreement fails unless the golden's top two are a tie", "[logits]") {
  LogitsTolerance tol{"t", 1e-3, 1e-12, 1.0, ""};
  std::vector<double> g = {1.0, 1.00001, 0.0};  // top two within abs_tol: a tie
  std::vector<double> a = {1.00001, 1.0, 0.0};
  CHECK(compare_logits(a, g, 1, 3, tol).top1_mismatches == 0);
  std::vector<double> g2 = {1.0, 1.5, 0.0};
  std::vector<double> a2 = {1.6, 1.5, 0.0};
  LogitsComparison c = compare_logits(a2, g2, 1, 3, tol);
  CHECK(c.top1_mismatches == 1);
  CHECK(c.first_top1_mismatch_row == 0);
}

TEST_CASE("shape differences are reported, not compared", "[logits]") {
  LogitsComparison c = compare_logits({1, 2, 3}, {1, 2, 3, 4}, 2, 2, logits_tolerance(PrecisionClass::kFp64));
  CHECK_FALSE(c.pass);
  CHECK(c.summary(logits_tolerance(PrecisionClass::kFp64), {}).rfind("logits shape differs from the golden", 0) == 0);
}

TEST_CASE("fp64 logits a few ulps apart match: the cosine difference resolves below 1e-16", "[logits]") {
  // Two fp64 computations of the same logits differ in the last bits (associativity). FlashMLA's
  // 1 - 2 sum(a r) / sum(a^2 + r^2) rounds such a pair to 0 or to 1.1e-16..2.2e-16, above the fp64
  // class's cos 1e-18; the same quantity as sum((a - r)^2) / sum(a^2 + r^2) is ~1e-31 here.
  std::vector<double> g, a;
  for (int i = 0; i < 512; ++i) {
    g.push_back(std::sin(0.37 * i) * 4.0);
    a.push_back(std::nextafter(std::nextafter(g.back(), 10.0), 10.0));
  }
  const LogitsTolerance tol = logits_tolerance(PrecisionClass::kFp64);
  const LogitsComparison c = compare_logits(a, g, 1, 512, tol);
  CHECK(c.pass);
  CHECK(c.cos_diff > 0.0);
  CHECK(c.cos_diff < 1e-28);
  // A real difference (1e-9 relative) still fails.
  std::vector<double> b = g;
  for (double& x : b) x *= 1.0 + 1e-9;
  CHECK_FALSE(compare_logits(b, g, 1, 512, tol).pass);
}
