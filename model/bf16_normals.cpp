// Box–Muller bf16 normals: the libm definition and a faster path that returns the same bits.
//
// Why the fast path is exact: let v be the value the definition computes in double and w the fast
// path's. Both are within a few ulp of the true value (libm's log, cos and sin are within 1 ulp;
// the polynomials below within about 2^-50 relative), so |v - w| <= e = (|t| + |w|) 2^-44, where
// t = std_dev r cos(theta) is the scaled term before the mean is added. Rounding double -> float
// -> bf16 is monotone, so when w - e and w + e round to the same bf16, v rounds to it as well.
#include "model/bf16_normals.h"

#include <bit>
#include <cmath>
#include <limits>
#include <numbers>

#include "model/bf16.h"
#include "config/seeded_tokens.h"

namespace mlasim {
namespace {

float to_bf16(double x) { return round_to_bf16(static_cast<float>(x)); }

// ln(u) for u in (0, 1) (normal doubles): u = m 2^e with m in [sqrt(1/2), sqrt(2)),
// ln m = 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.1716, the series to s^21 (next term < 2^-55).
[[gnu::always_inline]] inline double box_muller_log_impl(double u) {
  const auto bits = std::bit_cast<std::uint64_t>(u);
  const double m1 = std::bit_cast<double>((bits & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL);
  const int above = m1 > std::numbers::sqrt2;  // branch-free: this is a coin flip per value
  static constexpr double kHalve[] = {1.0, 0.5};
  const double m = m1 * kHalve[above];
  const int e = static_cast<int>((bits >> 52) & 0x7ff) - 1023 + above;
  const double s = (m - 1.0) / (m + 1.0), s2 = s * s;
  // 1 + s2/3 + s2^2/5 + ... + s2^10/21 by Estrin's scheme (short dependency chains).
  const double x = s2, x2 = x * x, x4 = x2 * x2, x8 = x4 * x4;
  const double poly = ((1.0 + x * (1.0 / 3)) + x2 * (1.0 / 5 + x * (1.0 / 7))) +
                      x4 * ((1.0 / 9 + x * (1.0 / 11)) + x2 * (1.0 / 13 + x * (1.0 / 15))) +
                      x8 * ((1.0 / 17 + x * (1.0 / 19)) + x2 * (1.0 / 21));
  const double ln_m = 2.0 * s * poly;
  constexpr double kLn2Hi = 0x1.62e42feep-1, kLn2Lo = 0x1.a39ef35793c76p-33;  // e * kLn2Hi is exact
  return e * kLn2Hi + (e * kLn2Lo + ln_m);
}

// cos and sin of theta in (0, 2 pi): theta = k pi/2 + r, |r| <= pi/4, with pi/2 in two parts
// (k * kPio2Hi and theta - k * kPio2Hi are exact); Taylor series to r^17 and r^16 (next terms
// < 2^-58 relative). Returns false when |r| < 2^-20, where the reduction's absolute error
// (< 2^-85) is no longer small relative to r.
[[gnu::always_inline]] inline bool box_muller_sincos_impl(double theta, double* c, double* s) {
  constexpr double kPio2Hi = 0x1.921fb544p+0, kPio2Lo = 0x1.0b4611a626331p-34;
  const int k = static_cast<int>(theta * (2.0 / std::numbers::pi) + 0.5);
  const double r = (theta - k * kPio2Hi) - k * kPio2Lo;
  // sin r = r (1 - r2/3! + ... + r2^8/17!), cos r = 1 - r2/2! + ... + r2^8/16!, by Estrin's scheme.
  const double x = r * r, x2 = x * x, x4 = x2 * x2, x8 = x4 * x4;
  const double sin_poly = ((1.0 - x * (1.0 / 6)) + x2 * (1.0 / 120 - x * (1.0 / 5040))) +
                          x4 * ((1.0 / 362880 - x * (1.0 / 39916800)) + x2 * (1.0 / 6227020800.0 - x * (1.0 / 1307674368000.0))) +
                          x8 * (1.0 / 355687428096000.0);
  const double cos_r = ((1.0 - x * (1.0 / 2)) + x2 * (1.0 / 24 - x * (1.0 / 720))) +
                       x4 * ((1.0 / 40320 - x * (1.0 / 3628800)) + x2 * (1.0 / 479001600.0 - x * (1.0 / 87178291200.0))) +
                       x8 * (1.0 / 20922789888000.0);
  const double sin_r = r * sin_poly;
  // Quadrant q: (cos, sin) = (C, S), (-S, C), (-C, -S), (S, -C); by table, as q is random.
  const int q = k & 3;
  const double cs[2] = {cos_r, sin_r};
  static constexpr double kCosSign[] = {1.0, -1.0, -1.0, 1.0}, kSinSign[] = {1.0, 1.0, -1.0, -1.0};
  *c = kCosSign[q] * cs[q & 1];
  *s = kSinSign[q] * cs[(q & 1) ^ 1];
  return std::abs(r) >= 0x1p-20;
}

// The bf16 of w when every double within e of it has the same bf16, else NaN.
float settled_bf16(double t, double w) {
  const double e = (std::abs(t) + std::abs(w)) * 0x1p-44;
  const float lo = to_bf16(w - e), hi = to_bf16(w + e);
  return lo == hi ? lo : std::numeric_limits<float>::quiet_NaN();
}

}  // namespace

double box_muller_log(double u) { return box_muller_log_impl(u); }
bool box_muller_sincos(double theta, double* c, double* s) { return box_muller_sincos_impl(theta, c, s); }

double seeded_uniform(std::uint64_t stream, std::uint64_t k) {
  const std::uint64_t z = splitmix64(stream + k * 0x9e3779b97f4a7c15ULL);
  // z >> 11 < 2^53: the signed conversion is exact and one instruction (the unsigned one branches).
  return (static_cast<double>(static_cast<std::int64_t>(z >> 11)) + 0.5) * 0x1.0p-53;
}

void bf16_normal_pair_libm(std::uint64_t stream, double mean, double std_dev, long long p, long long n, float* values) {
  const auto k = static_cast<std::uint64_t>(2 * p);
  const double r = std::sqrt(-2.0 * std::log(seeded_uniform(stream, k)));
  const double theta = 2.0 * std::numbers::pi * seeded_uniform(stream, k + 1);
  values[2 * p] = round_to_bf16(static_cast<float>(mean + std_dev * r * std::cos(theta)));
  if (2 * p + 1 < n) values[2 * p + 1] = round_to_bf16(static_cast<float>(mean + std_dev * r * std::sin(theta)));
}

long long draw_bf16_normals(std::uint64_t stream, double mean, double std_dev, long long pair_begin, long long pair_end,
                            long long n, float* values) {
  long long fallbacks = 0;
  for (long long p = pair_begin; p < pair_end; ++p) {
    const auto k = static_cast<std::uint64_t>(2 * p);
    const double u1 = seeded_uniform(stream, k), u2 = seeded_uniform(stream, k + 1);
    const double scaled = std_dev * std::sqrt(-2.0 * box_muller_log_impl(u1));
    const double theta = 2.0 * std::numbers::pi * u2;
    double c = 0.0, s = 0.0;
    float a = std::numeric_limits<float>::quiet_NaN(), b = 0.0f;
    if (box_muller_sincos_impl(theta, &c, &s)) {
      a = settled_bf16(scaled * c, mean + scaled * c);
      b = 2 * p + 1 < n ? settled_bf16(scaled * s, mean + scaled * s) : 0.0f;
    }
    if (std::isnan(a) || std::isnan(b)) {
      bf16_normal_pair_libm(stream, mean, std_dev, p, n, values);
      ++fallbacks;
      continue;
    }
    values[2 * p] = a;
    if (2 * p + 1 < n) values[2 * p + 1] = b;
  }
  return fallbacks;
}

}  // namespace mlasim
