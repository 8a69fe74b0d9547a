// Rotary position embedding of MLA (docs/spec/mla.md §2): YaRN frequencies, the interleaved rotation
// of DeepSeek's reference and vLLM (pairs x[2i], x[2i+1]), the NeoX half rotation (only to model a
// fault), and the model's softmax scale with the YaRN mscale.
#pragma once

#include <span>
#include <vector>

#include "config/model_config.h"

namespace mlasim {

// The d_r/2 rotation frequencies f_i' (spec §2): f_i = theta^(-2i/d_r);
// corr(r) = d_r ln(orig / (2 pi r)) / (2 ln theta); low = max(floor(corr(beta_fast)), 0),
// high = min(ceil(corr(beta_slow)), d_r - 1) (high += 0.001 when equal, as HF);
// rho_i = clamp((i - low) / (high - low), 0, 1); f_i' = rho_i f_i / factor + (1 - rho_i) f_i.
// With factor <= 1: f_i unchanged. (HF's cos/sin multiplier mscale/mscale_all_dim is taken as 1:
// DeepSeek's configs set both equal.)
std::vector<double> yarn_inv_freq(const ModelConfig& config);

// The YaRN correction range (low, high) before clamping, for tests: V3 geometry gives (10, 23).
struct YarnRange {
  double low = 0, high = 0;
};
YarnRange yarn_correction_range(const ModelConfig& config);

// m = 0.1 * mscale_all_dim * ln(factor) + 1 when factor > 1, else 1.
double yarn_mscale(double factor, double mscale_all_dim);

// (d_n + d_r)^(-1/2) * m^2: V3 0.1352338, V2-Lite 0.1147214, no YaRN (192) 0.0721688.
double softmax_scale(const ModelConfig& config);

// cos(p f_i'), sin(p f_i') for one position, computed in double.
struct RopeAngles {
  std::vector<double> cos, sin;  // d_r / 2 each
};
RopeAngles rope_angles(std::span<const double> inv_freq, int position);

// In place on d_r = 2 * angles.cos.size() values.
// Interleaved: (x[2i], x[2i+1]) <- (x[2i] c_i - x[2i+1] s_i, x[2i] s_i + x[2i+1] c_i).
template <typename T>
void apply_rope_interleaved(T* x, const RopeAngles& angles);
// NeoX: (x[i], x[i + d_r/2]) rotated by angle i instead.
template <typename T>
void apply_rope_neox(T* x, const RopeAngles& angles);

}  // namespace mlasim
