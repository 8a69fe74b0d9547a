// YaRN frequencies, rotations and the softmax scale (docs/spec/mla.md §2).
#include "model/rope.h"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace mlasim {
namespace {

double correction_dim(double num_rotations, const ModelConfig& c) {
  return c.qk_rope_head_dim * std::log(c.original_max_position_embeddings / (num_rotations * 2.0 * std::numbers::pi)) /
         (2.0 * std::log(c.rope_theta));
}

}  // namespace

YarnRange yarn_correction_range(const ModelConfig& c) {
  return {std::floor(correction_dim(c.beta_fast, c)), std::ceil(correction_dim(c.beta_slow, c))};
}

std::vector<double> yarn_inv_freq(const ModelConfig& c) {
  const int half = c.qk_rope_head_dim / 2;
  std::vector<double> f(static_cast<size_t>(half));
  for (int i = 0; i < half; ++i) f[static_cast<size_t>(i)] = std::pow(c.rope_theta, -2.0 * i / c.qk_rope_head_dim);
  if (c.rope_scaling_factor <= 1.0) return f;
  const YarnRange r = yarn_correction_range(c);
  const double low = std::max(r.low, 0.0);
  double high = std::min(r.high, static_cast<double>(c.qk_rope_head_dim - 1));
  if (high == low) high += 0.001;
  for (int i = 0; i < half; ++i) {
    const double rho = std::clamp((i - low) / (high - low), 0.0, 1.0);
    double& fi = f[static_cast<size_t>(i)];
    fi = rho * fi / c.rope_scaling_factor + (1.0 - rho) * fi;
  }
  return f;
}

double yarn_mscale(double factor, double mscale_all_dim) {
  return factor <= 1.0 ? 1.0 : 0.1 * mscale_all_dim * std::log(factor) + 1.0;
}

double softmax_scale(const ModelConfig& c) {
  const double m = yarn_mscale(c.rope_scaling_factor, c.mscale_all_dim);
  return m * m / std::sqrt(static_cast<double>(c.qk_nope_head_dim + c.qk_rope_head_dim));
}

RopeAngles rope_angles(std::span<const double> inv_freq, int position) {
  RopeAngles a;
  a.cos.resize(inv_freq.size());
  a.sin.resize(inv_freq.size());
  for (size_t i = 0; i < inv_freq.size(); ++i) {
    const double t = position * inv_freq[i];
    a.cos[i] = std::cos(t);
    a.sin[i] = std::sin(t);
  }
  return a;
}

template <typename T>
void apply_rope_interleaved(T* x, const RopeAngles& a) {
  for (size_t i = 0; i < a.cos.size(); ++i) {
    const T c = static_cast<T>(a.cos[i]), s = static_cast<T>(a.sin[i]);
    const T x0 = x[2 * i], x1 = x[2 * i + 1];
    x[2 * i] = x0 * c - x1 * s;
    x[2 * i + 1] = x0 * s + x1 * c;
  }
}

template <typename T>
void apply_rope_neox(T* x, const RopeAngles& a) {
  const size_t half = a.cos.size();
  for (size_t i = 0; i < half; ++i) {
    const T c = static_cast<T>(a.cos[i]), s = static_cast<T>(a.sin[i]);
    const T x0 = x[i], x1 = x[i + half];
    x[i] = x0 * c - x1 * s;
    x[i + half] = x0 * s + x1 * c;
  }
}

template void apply_rope_interleaved<float>(float*, const RopeAngles&);
template void apply_rope_interleaved<double>(double*, const RopeAngles&);
template void apply_rope_neox<float>(float*, const RopeAngles&);
template void apply_rope_neox<double>(double*, const RopeAngles&);

}  // namespace mlasim
