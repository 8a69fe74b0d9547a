// float8 e4m3fn on the host (OCP FP8: 1 sign, 4 exponent bits of bias 7, 3 mantissa bits; no
// infinities, 0x7f/0xff NaN, largest finite 448, smallest subnormal 2^-9): a float rounded to the
// nearest e4m3 value, ties to even, saturating to ±448 as CUDA's
// __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3) does (vLLM's fp8::scaled_convert,
// csrc/quantization/w8a8/fp8/nvidia/quant_utils.cuh), and the byte form of such values.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace mlasim {

inline constexpr float kFp8E4m3Max = 448.0f;

inline float round_to_fp8_e4m3(float x) {
  if (std::isnan(x)) return x;
  const float a = std::fabs(x);
  if (a >= kFp8E4m3Max) return std::copysign(kFp8E4m3Max, x);
  if (a == 0.0f) return x;
  const int e = std::max(std::ilogb(a), -6);       // below 2^-6 the spacing stays 2^-9 (subnormals)
  const float ulp = std::ldexp(1.0f, e - 3);        // 3 mantissa bits
  const float r = std::nearbyint(a / ulp) * ulp;    // a / ulp is exact; nearbyint rounds ties to even
  return std::copysign(std::min(r, kFp8E4m3Max), x);
}

// The e4m3fn byte of a value round_to_fp8_e4m3 returns (exact); NaN is 0x7f with its sign.
inline std::uint8_t fp8_e4m3_bits(float v) {
  const std::uint8_t sign = std::signbit(v) ? 0x80 : 0x00;
  if (std::isnan(v)) return static_cast<std::uint8_t>(sign | 0x7f);
  const float a = std::fabs(v);
  if (a == 0.0f) return sign;
  const int e = std::ilogb(a);
  if (e < -6) return static_cast<std::uint8_t>(sign | static_cast<int>(std::ldexp(a, 9)));  // subnormal: a / 2^-9
  const int mantissa = static_cast<int>(std::ldexp(a, 3 - e)) - 8;
  return static_cast<std::uint8_t>(sign | ((e + 7) << 3) | mantissa);
}

// The value an e4m3fn byte stands for (exact in float).
inline float fp8_e4m3_value(std::uint8_t bits) {
  const float sign = (bits & 0x80) ? -1.0f : 1.0f;
  const int exp = (bits >> 3) & 0xf, mantissa = bits & 0x7;
  if (exp == 0xf && mantissa == 0x7) return std::copysign(NAN, sign);
  if (exp == 0) return sign * std::ldexp(static_cast<float>(mantissa), -9);
  return sign * std::ldexp(static_cast<float>(8 + mantissa), exp - 10);
}

}  // namespace mlasim
