// The softmax row helpers: eight floats at a time with GCC vector extensions; the AVX2 clone is picked at
// load time on CPUs that have it.
#include "attention/cpu/softmax_exp.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace mlasim {
namespace {

typedef float v8f __attribute__((vector_size(32)));
typedef std::int32_t v8i __attribute__((vector_size(32)));

// e^x for eight lanes: x = n ln2 + r with |r| <= ln2 / 2, e^r by Cephes' expf polynomial, 2^n by
// building the exponent bits. Lanes below -87.3 give 0.
__attribute__((always_inline)) inline void exp8(const v8f& x_in, v8f& out) {
  const v8f lo = v8f{} - 87.3f, hi = v8f{} + 88.0f;
  v8f x = x_in < lo ? lo : x_in;
  x = x > hi ? hi : x;
  const v8f magic = v8f{} + 12582912.0f;  // 1.5 * 2^23: adding and subtracting it rounds to an integer
  const v8f n = (x * 1.44269504088896341f + magic) - magic;
  const v8f r = x - n * 0.693359375f + n * 2.12194440e-4f;
  v8f p = v8f{} + 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * (r * r) + r + 1.0f;
  const v8i bits = (__builtin_convertvector(n, v8i) + 127) << 23;
  v8f scale;
  std::memcpy(&scale, &bits, sizeof(scale));
  out = x_in < lo ? v8f{} : p * scale;
}

}  // namespace

__attribute__((target_clones("avx2", "default"))) float max_of(const float* x, int n) {
  v8f m = v8f{} + x[0];
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    v8f v;
    std::memcpy(&v, x + i, sizeof(v));
    m = v > m ? v : m;
  }
  float out = m[0];
  for (int k = 1; k < 8; ++k) out = std::max(out, m[k]);
  for (; i < n; ++i) out = std::max(out, x[i]);
  return out;
}

double max_of(const double* x, int n) {
  double out = x[0];
  for (int i = 1; i < n; ++i) out = std::max(out, x[i]);
  return out;
}

__attribute__((target_clones("avx2", "default"))) float exp_shifted_sum(float* x, int n, float scale, float shift) {
  v8f sum{};
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    v8f v, e;
    std::memcpy(&v, x + i, sizeof(v));
    v = v * scale - shift;
    exp8(v, e);
    sum += e;
    std::memcpy(x + i, &e, sizeof(e));
  }
  if (i < n) {  // the tail through one padded vector: padding lanes give e^-100 -> 0
    v8f v = v8f{} - 100.0f, e;
    std::memcpy(&v, x + i, sizeof(float) * static_cast<size_t>(n - i));
    for (int k = 0; k < n - i; ++k) v[k] = v[k] * scale - shift;
    exp8(v, e);
    for (int k = n - i; k < 8; ++k) e[k] = 0.0f;
    sum += e;
    std::memcpy(x + i, &e, sizeof(float) * static_cast<size_t>(n - i));
  }
  return ((sum[0] + sum[1]) + (sum[2] + sum[3])) + ((sum[4] + sum[5]) + (sum[6] + sum[7]));
}

double exp_shifted_sum(double* x, int n, double scale, double shift) {
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += (x[i] = std::exp(scale * x[i] - shift));
  return sum;
}

}  // namespace mlasim
