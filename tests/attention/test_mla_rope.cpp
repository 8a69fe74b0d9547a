// Softmax scale with the YaRN mscale, YaRN frequencies, interleaved vs NeoX rotation.
#include <catch2/catch.hpp>

#include <cmath>

#include "model/rope.h"
#include "mla_test_util.h"

using namespace mlasim;

TEST_CASE("softmax scale: V3, V2-Lite, no YaRN (docs/spec/mla.md §2)", "[mla]") {
  ModelConfig v3 = *model_preset("v3-attn");
  CHECK(softmax_scale(v3) == Approx(0.1352338).margin(5e-8));
  ModelConfig v2 = *model_preset("v2-lite-attn");
  CHECK(softmax_scale(v2) == Approx(0.1147214).margin(5e-8));
  CHECK(softmax_scale(*model_preset("tiny")) == Approx(0.1147214).margin(5e-8));
  ModelConfig plain = v3;
  plain.rope_scaling_factor = 1.0;
  CHECK(softmax_scale(plain) == Approx(0.0721688).margin(5e-8));
  CHECK(softmax_scale(plain) != Approx(1.0 / 24.0));  // never 1/sqrt(576)
  CHECK(yarn_mscale(40.0, 1.0) == Approx(1.0 + 0.1 * std::log(40.0)));
}

TEST_CASE("YaRN frequencies: correction range 10..23, ramp between", "[mla]") {
  const ModelConfig c = *model_preset("v3-attn");
  const YarnRange r = yarn_correction_range(c);
  CHECK(r.low == 10.0);
  CHECK(r.high == 23.0);
  const std::vector<double> f = yarn_inv_freq(c);
  REQUIRE(f.size() == 32);
  for (int i = 0; i < 32; ++i) {
    const double base = std::pow(10000.0, -2.0 * i / 64.0);
    const double rho = std::clamp((i - 10.0) / 13.0, 0.0, 1.0);
    CHECK(f[static_cast<size_t>(i)] == Approx(rho * base / 40.0 + (1 - rho) * base).epsilon(1e-14));
  }
  CHECK(f[0] == 1.0);                                         // high frequencies untouched
  CHECK(f[31] == Approx(std::pow(10000.0, -62.0 / 64) / 40));  // low ones divided by the factor
  ModelConfig plain = c;
  plain.rope_scaling_factor = 1.0;
  CHECK(yarn_inv_freq(plain)[31] == Approx(std::pow(10000.0, -62.0 / 64)));
}

TEST_CASE("interleaved RoPE: adjacent pairs, relative positions, NeoX = permuted interleaved", "[mla]") {
  const ModelConfig c = *model_preset("tiny");
  const std::vector<double> f = yarn_inv_freq(c);
  std::vector<double> q(64), k(64);
  for (int i = 0; i < 64; ++i) q[static_cast<size_t>(i)] = std::sin(i + 1.0), k[static_cast<size_t>(i)] = std::cos(3.0 * i);
  auto rotated_dot = [&](int pq, int pk) {
    std::vector<double> a = q, b = k;
    apply_rope_interleaved(a.data(), rope_angles(f, pq));
    apply_rope_interleaved(b.data(), rope_angles(f, pk));
    double s = 0;
    for (int i = 0; i < 64; ++i) s += a[static_cast<size_t>(i)] * b[static_cast<size_t>(i)];
    return s;
  };
  CHECK(rotated_dot(17, 5) == Approx(rotated_dot(112, 100)).epsilon(1e-12));
  // Position 0 is the identity; pair 0 rotates by p radians (f_0 = 1).
  std::vector<double> x = q;
  apply_rope_interleaved(x.data(), rope_angles(f, 0));
  CHECK(x == q);
  apply_rope_interleaved(x.data(), rope_angles(f, 2));
  CHECK(x[0] == Approx(q[0] * std::cos(2.0) - q[1] * std::sin(2.0)));
  CHECK(x[1] == Approx(q[0] * std::sin(2.0) + q[1] * std::cos(2.0)));
  // HF's NeoX on evens-then-odds equals interleaved, permuted the same way.
  std::vector<double> perm(64), inter = q;
  for (int i = 0; i < 32; ++i) perm[static_cast<size_t>(i)] = q[static_cast<size_t>(2 * i)], perm[static_cast<size_t>(i + 32)] = q[static_cast<size_t>(2 * i + 1)];
  apply_rope_neox(perm.data(), rope_angles(f, 9));
  apply_rope_interleaved(inter.data(), rope_angles(f, 9));
  for (int i = 0; i < 32; ++i) {
    CHECK(perm[static_cast<size_t>(i)] == Approx(inter[static_cast<size_t>(2 * i)]).margin(1e-15));
    CHECK(perm[static_cast<size_t>(i + 32)] == Approx(inter[static_cast<size_t>(2 * i + 1)]).margin(1e-15));
  }
}
