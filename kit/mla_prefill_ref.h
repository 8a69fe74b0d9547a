// The dense MLA prefill test problem on the host (no CUDA): varlen sequences of bf16-exact q, k, v
// (FlashMLA's randn/10 clamped to [−1, 1] unless sharpened) and the double-precision reference of
// bottom-right causal or full attention, for all or a sample of the (row, head) pairs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kit/rng.h"

namespace mlasim::kit {

inline constexpr int kPrefillDqk = 192, kPrefillDv = 128;  // [q_nope | q_pe] and v head widths

// One varlen prefill problem: per-sequence lengths and bf16-exact inputs (floats).
struct PrefillProblem {
  std::vector<int> s_q, s_k;
  int H = 1;
  bool causal = false;
  float scale = 0.1352338f;  // DeepSeek-V3's model softmax scale (docs/spec/mla.md §2)
  std::vector<int> cu_q, cu_k;
  std::vector<float> q, k, v;  // [total_q, H, 192], [total_k, H, 192], [total_k, H, 128]

  int batch() const { return static_cast<int>(s_q.size()); }
  int total_q() const { return cu_q.back(); }
  int total_k() const { return cu_k.back(); }
  int max_q() const { return s_q.empty() ? 0 : *std::max_element(s_q.begin(), s_q.end()); }
  int max_k() const { return s_k.empty() ? 0 : *std::max_element(s_k.begin(), s_k.end()); }
};

// Lengths N(mean, mean/2) rounded, clipped to [1, 3·mean].
std::vector<int> varlen_lengths(int n, int mean, Rng& rng);

// n values randn / divisor clamped to [−clip, clip], rounded to bf16; filled in parallel, one Rng
// stream per block of 2^16 values, so the result depends only on (seed, n).
std::vector<float> randn_bf16_values(std::size_t n, std::uint64_t seed, double divisor = 10.0, double clip = 1.0);

// FlashMLA's data; `qk_divisor` / `qk_clip` sharpen the scores (1 and 4: N(0, 1) clamped to ±4).
PrefillProblem make_prefill_problem(std::vector<int> s_q, std::vector<int> s_k, int H, bool causal, std::uint64_t seed,
                                    double qk_divisor = 10.0, double qk_clip = 1.0);

// The same queries over key rows [begin[b], begin[b] + len[b]) of each sequence of `full`.
PrefillProblem slice_keys(const PrefillProblem& full, const std::vector<int>& begin, const std::vector<int>& len,
                          bool causal);

// Keys query i of a (s_q, s_k) sequence sees: bottom-right causal j < s_k − s_q + i + 1.
inline int visible_keys(int i, int s_q, int s_k, bool causal) {
  return causal ? std::clamp(s_k - s_q + i + 1, 0, s_k) : s_k;
}

// Reference for the checked (row, head) pairs: out [rows][heads][128], lse [heads][rows].
// rows are global query token indices. A row with no visible key: out 0, lse −inf.
struct PrefillReference {
  std::vector<int> rows, heads;
  std::vector<double> out, lse;
};

PrefillReference prefill_reference(const PrefillProblem& p, std::vector<int> rows, std::vector<int> heads);

std::vector<int> iota_vec(int n);  // 0, 1, ..., n − 1

// Every `every`-th query token plus the last `tail` tokens of each sequence (the causal
// diagonal's far end), in increasing order.
std::vector<int> sampled_rows(const PrefillProblem& p, int every, int tail);

}  // namespace mlasim::kit
