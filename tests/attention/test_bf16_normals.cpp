// The weight draw's fast path: its log, cos and sin within 2^-50 relative of long double (the
// exactness argument in model/bf16_normals.cpp needs far less than 2^-44), and the drawn bf16
// values bit-identical to the libm definition for the three kinds of tensor (Linear, norm,
// embedding) over a few million values.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <numbers>
#include <vector>

#include "model/bf16_normals.h"

using namespace mlasim;

TEST_CASE("box_muller_log is within 2^-50 relative of ln over (0, 1)", "[weights]") {
  double worst = 0;
  for (std::uint64_t k = 0; k < 2000000; ++k) {
    const double u = seeded_uniform(7, k);
    const long double want = std::log(static_cast<long double>(u));
    worst = std::max(worst, static_cast<double>(std::fabs((box_muller_log(u) - want) / want)));
  }
  for (double u : {0x1p-54, 0x1.6a09e667f3bccp-1, 0x1.6a09e667f3bcdp-1, 0.5, 0.999999999999, 1.0 - 0x1p-53}) {
    const long double want = std::log(static_cast<long double>(u));
    worst = std::max(worst, static_cast<double>(std::fabs((box_muller_log(u) - want) / want)));
  }
  CHECK(worst < 0x1p-50);
}

TEST_CASE("box_muller_sincos is within 2^-50 relative of cos and sin over (0, 2 pi)", "[weights]") {
  double worst = 0;
  int skipped = 0;
  const auto check = [&](double theta) {
    double c = 0, s = 0;
    if (!box_muller_sincos(theta, &c, &s)) {
      ++skipped;
      return;
    }
    const long double t = theta;
    worst = std::max(worst, static_cast<double>(std::fabs((c - std::cos(t)) / std::cos(t))));
    worst = std::max(worst, static_cast<double>(std::fabs((s - std::sin(t)) / std::sin(t))));
  };
  for (std::uint64_t k = 0; k < 2000000; ++k) check(2.0 * std::numbers::pi * seeded_uniform(11, k));
  // Near the multiples of pi/2, where the quadrant changes and one of the two is small.
  for (int q = 1; q <= 3; ++q)
    for (double off : {0x1p-19, -0x1p-19, 0x1p-10, -0x1p-10, 0.78, -0.78})
      check(q * std::numbers::pi / 2 + off);
  CHECK(worst < 0x1p-50);
  CHECK(skipped < 20);  // |r| < 2^-20: about 2^-20 * 4 / pi of the random angles, none of the listed ones
  double c = 0, s = 0;
  CHECK_FALSE(box_muller_sincos(std::numbers::pi / 2, &c, &s));  // within 2^-20: left to libm
}

TEST_CASE("draw_bf16_normals gives the libm definition's bits", "[weights]") {
  struct Kind {
    double mean, std_dev;
  };
  for (const Kind kind : {Kind{0.0, 1.0 / std::sqrt(7168.0)}, Kind{1.0, 0.2}, Kind{0.0, 1.0}}) {
    const long long n = 2000001;  // odd: the last pair has one value
    std::vector<float> fast(n), libm(n);
    const long long fallbacks = draw_bf16_normals(0x1234abcd, kind.mean, kind.std_dev, 0, (n + 1) / 2, n, fast.data());
    for (long long p = 0; p < (n + 1) / 2; ++p) bf16_normal_pair_libm(0x1234abcd, kind.mean, kind.std_dev, p, n, libm.data());
    CHECK(std::memcmp(fast.data(), libm.data(), n * sizeof(float)) == 0);
    CHECK(fallbacks < 10);  // about 2^-20 of the angles and 2^-35 of the values fall back
  }
}
