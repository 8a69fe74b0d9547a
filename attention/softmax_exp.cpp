// exp_in_place: eight floats at a time with GCC vector extensions; the AVX2 clone is picked at
// load time on CPUs that have it.
#include "attention/softmax_exp.h"

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

__attribute__((target_clones("avx2", "default"))) void exp_in_place(float* x, int n) {
  int i = 0;
  for (; i + 8 <= n; i += 8) {
    v8f v, e;
    std::memcpy(&v, x + i, sizeof(v));
    exp8(v, e);
    std::memcpy(x + i, &e, sizeof(e));
  }
  if (i < n) {  // the tail through one padded vector
    v8f v = v8f{} - 100.0f, e;
    std::memcpy(&v, x + i, sizeof(float) * static_cast<size_t>(n - i));
    exp8(v, e);
    std::memcpy(x + i, &e, sizeof(float) * static_cast<size_t>(n - i));
  }
}

void exp_in_place(double* x, int n) {
  for (int i = 0; i < n; ++i) x[i] = std::exp(x[i]);
}

}  // namespace mlasim
