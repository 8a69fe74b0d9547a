// Small host numerics shared by the CPU MLA code: dot products, Linear (y = W x with W [out, in]),
// RMSNorm and SwiGLU. Templated on the scalar type (double for goldens, float for speed).
#pragma once

#include <cmath>

namespace mlasim {

// Sum of a[i] b[i] in eight interleaved partial sums (vectorisable, fixed order).
template <typename T>
inline T dot(const T* a, const T* b, int n) {
  T acc[8] = {};
  int i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) acc[k] += a[i + k] * b[i + k];
  T s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}

// y[o - row_begin] = W[o, col_begin : col_begin + n_in] . x for o in [row_begin, row_end); W has
// `ld` columns (row-major [out, ld]).
template <typename T>
inline void linear(const T* w, int ld, int row_begin, int row_end, int col_begin, int n_in, const T* x, T* y) {
  for (int o = row_begin; o < row_end; ++o)
    y[o - row_begin] = dot(w + static_cast<long long>(o) * ld + col_begin, x, n_in);
}

// y[i] = w[i] * (x[i] / sqrt(mean(x^2) + eps)); y may alias x.
template <typename T>
inline void rms_norm(const T* x, const T* w, int n, double eps, T* y) {
  T ss = dot(x, x, n);
  const T inv = static_cast<T>(1.0 / std::sqrt(static_cast<double>(ss) / n + eps));
  for (int i = 0; i < n; ++i) y[i] = w[i] * (x[i] * inv);
}

template <typename T>
inline T silu(T x) {
  return x / (T(1) + std::exp(-x));
}

// a[i] = silu(gate[i]) * up[i]
template <typename T>
inline void swiglu(const T* gate, const T* up, int n, T* a) {
  for (int i = 0; i < n; ++i) a[i] = silu(gate[i]) * up[i];
}

}  // namespace mlasim
