// e4m3fn and bf16 on the device (and under the emulator): the same rounding as
// model/fp8.h and model/bf16.h, written with CUDA's float intrinsics so the kernels need no fp8
// hardware types. e4m3: 3 mantissa bits, bias 7, largest 448, subnormal spacing 2^-9, round to
// nearest even, saturating (SATFINITE) as vLLM's fp8::scaled_convert.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace mlasim::fp8 {

constexpr float kE4m3Max = 448.0f;

// The nearest e4m3 value of x (ties to even), ±448 past the range; NaN stays NaN.
__device__ __forceinline__ float round_e4m3(float x) {
  if (x != x) return x;
  const float a = fabsf(x);
  if (a >= kE4m3Max) return copysignf(kE4m3Max, x);
  if (a == 0.0f) return x;
  int e = 0;
  frexpf(a, &e);                        // a = m · 2^e, m in [0.5, 1): floor(log2 a) = e − 1
  const float ulp = ldexpf(1.0f, (e - 1 > -6 ? e - 1 : -6) - 3);
  const float r = rintf(a / ulp) * ulp;  // exact division by a power of two; rintf: ties to even
  return copysignf(fminf(r, kE4m3Max), x);
}

// The byte of a value round_e4m3 returns.
__device__ __forceinline__ uint8_t e4m3_bits(float v) {
  const uint8_t sign = (__float_as_uint(v) >> 31) ? 0x80 : 0x00;
  if (v != v) return static_cast<uint8_t>(sign | 0x7f);
  const float a = fabsf(v);
  if (a == 0.0f) return sign;
  int e = 0;
  frexpf(a, &e);
  e -= 1;
  if (e < -6) return static_cast<uint8_t>(sign | static_cast<int>(ldexpf(a, 9)));
  const int mantissa = static_cast<int>(ldexpf(a, 3 - e)) - 8;
  return static_cast<uint8_t>(sign | ((e + 7) << 3) | mantissa);
}

// The value of an e4m3 byte (exact in float).
__device__ __forceinline__ float e4m3_value(uint8_t b) {
  const int exp = (b >> 3) & 0xf, mantissa = b & 7;
  const float sign = (b & 0x80) ? -1.0f : 1.0f;
  if (exp == 0xf && mantissa == 7) return __int_as_float(0x7fc00000);
  if (exp == 0) return sign * ldexpf(static_cast<float>(mantissa), -9);
  return sign * ldexpf(static_cast<float>(8 + mantissa), exp - 10);
}

// x rounded to bf16 (ties to even), kept as a float.
__device__ __forceinline__ float round_bf16(float x) {
  uint32_t u = __float_as_uint(x);
  if ((u & 0x7f800000u) == 0x7f800000u) return x;
  u += 0x7fffu + ((u >> 16) & 1u);
  return __uint_as_float(u & 0xffff0000u);
}

}  // namespace mlasim::fp8
