// Flash attention's online softmax for one block of queries over key blocks (docs/spec/cpu_reference.md
// §3): per query the running maximum m, the running sum l of e^(s - m) and the unnormalised output
// o; each key block rescales them by e^(m_old - m_new). Memory: the block's rows, never the whole
// score matrix.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "attention/cpu/softmax_exp.h"
#include "base/check.h"

namespace mlasim {

template <typename T>
class OnlineSoftmax {
 public:
  // Starts `rows` queries with no keys seen, outputs of width dv.
  void reset(int rows, int dv) {
    rows_ = rows, dv_ = dv;
    m_.assign(static_cast<size_t>(rows), -std::numeric_limits<T>::infinity());
    l_.assign(static_cast<size_t>(rows), T(0));
    o_.assign(static_cast<size_t>(rows) * static_cast<size_t>(dv), T(0));
  }

  // s [rows, nk] (row stride lds) holds one key block's raw dot products; query i sees the first
  // clamp(visible_base + i, 0, nk) keys of it. Turns s into the block's probabilities
  // e^(scale s - m_new) (0 for keys not seen) and rescales the running sums; the caller then adds
  // s V to o() (gemm_nn with accumulate).
  void add_block(T* s, int lds, int nk, long long visible_base, T scale) {
    MLASIM_CHECK(scale > T(0), "the softmax scale must be positive");
    for (int i = 0; i < rows_; ++i) {
      T* si = s + static_cast<long long>(i) * lds;
      const int n = static_cast<int>(std::clamp<long long>(visible_base + i, 0, nk));
      std::fill(si + n, si + nk, T(0));
      if (n == 0) continue;
      const T m_old = m_[static_cast<size_t>(i)];
      const T m_new = std::max(m_old, scale * max_of(si, n));
      const T sum = exp_shifted_sum(si, n, scale, m_new);
      const T alpha = m_old == -std::numeric_limits<T>::infinity() ? T(0) : std::exp(m_old - m_new);
      m_[static_cast<size_t>(i)] = m_new;
      l_[static_cast<size_t>(i)] = l_[static_cast<size_t>(i)] * alpha + sum;
      if (alpha != T(1)) {
        T* oi = &o_[static_cast<size_t>(i) * static_cast<size_t>(dv_)];
        for (int k = 0; k < dv_; ++k) oi[k] *= alpha;
      }
    }
  }

  // add_block with a key mask: query i also skips the keys j with keep[i * keep_stride + j] == 0 (a
  // sparse model's unselected positions). Skipped keys get probability exactly 0: their scores are
  // -inf, whose exponential is 0 in float and double (the row's maximum is a selected key's).
  void add_block_masked(T* s, int lds, int nk, long long visible_base, T scale, const char* keep, int keep_stride) {
    MLASIM_CHECK(scale > T(0), "the softmax scale must be positive");
    for (int i = 0; i < rows_; ++i) {
      T* si = s + static_cast<long long>(i) * lds;
      const char* ki = keep + static_cast<long long>(i) * keep_stride;
      const int n = static_cast<int>(std::clamp<long long>(visible_base + i, 0, nk));
      std::fill(si + n, si + nk, T(0));
      T best = -std::numeric_limits<T>::infinity();
      for (int j = 0; j < n; ++j)
        if (ki[j]) best = std::max(best, si[j]);
      if (best == -std::numeric_limits<T>::infinity()) {  // nothing of this block is selected
        std::fill(si, si + n, T(0));
        continue;
      }
      const T m_old = m_[static_cast<size_t>(i)];
      const T m_new = std::max(m_old, scale * best);
      for (int j = 0; j < n; ++j)
        if (!ki[j]) si[j] = -std::numeric_limits<T>::infinity();
      const T sum = exp_shifted_sum(si, n, scale, m_new);
      const T alpha = m_old == -std::numeric_limits<T>::infinity() ? T(0) : std::exp(m_old - m_new);
      m_[static_cast<size_t>(i)] = m_new;
      l_[static_cast<size_t>(i)] = l_[static_cast<size_t>(i)] * alpha + sum;
      if (alpha != T(1)) {
        T* oi = &o_[static_cast<size_t>(i) * static_cast<size_t>(dv_)];
        for (int k = 0; k < dv_; ++k) oi[k] *= alpha;
      }
    }
  }

  T* o() { return o_.data(); }

  // out[i] = o_i / l_i (row stride ldo) and lse[i] = m_i + log l_i (-inf and zeros for a query
  // that saw no key).
  void finish(T* out, long long ldo, T* lse) const {
    for (int i = 0; i < rows_; ++i) {
      const T l = l_[static_cast<size_t>(i)];
      const T* oi = &o_[static_cast<size_t>(i) * static_cast<size_t>(dv_)];
      T* dst = out + i * ldo;
      for (int k = 0; k < dv_; ++k) dst[k] = l > T(0) ? oi[k] / l : T(0);
      lse[i] = l > T(0) ? m_[static_cast<size_t>(i)] + std::log(l) : -std::numeric_limits<T>::infinity();
    }
  }

 private:
  int rows_ = 0, dv_ = 0;
  std::vector<T> m_, l_, o_;
};

}  // namespace mlasim
