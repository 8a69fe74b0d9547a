// bf16 types and conversions of cuda_bf16.h for mlasim's SIMT emulator: storage is the upper 16 bits
// of an IEEE float; float → bf16 rounds to nearest even and keeps NaN a (quiet) NaN.
#pragma once

#include <bit>
#include <cstdint>

#include "cuda_runtime.h"

struct __nv_bfloat16 {
  unsigned short __x;
  __nv_bfloat16() = default;
  __nv_bfloat16(float f) : __x(from_float(f)) {}
  operator float() const { return std::bit_cast<float>(static_cast<std::uint32_t>(__x) << 16); }
  static unsigned short from_float(float f) {
    const std::uint32_t u = std::bit_cast<std::uint32_t>(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<unsigned short>((u >> 16) | 0x40u);
    return static_cast<unsigned short>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  }
};
struct alignas(4) __nv_bfloat162 {
  __nv_bfloat16 x, y;
};
using nv_bfloat16 = __nv_bfloat16;
using nv_bfloat162 = __nv_bfloat162;

inline __nv_bfloat16 __float2bfloat16(float f) { return __nv_bfloat16(f); }
inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16(f); }
inline float __bfloat162float(__nv_bfloat16 h) { return static_cast<float>(h); }
inline __nv_bfloat162 __floats2bfloat162_rn(float lo, float hi) { return {__nv_bfloat16(lo), __nv_bfloat16(hi)}; }
inline __nv_bfloat162 __float22bfloat162_rn(float2 f) { return __floats2bfloat162_rn(f.x, f.y); }
inline float2 __bfloat1622float2(__nv_bfloat162 h) { return {static_cast<float>(h.x), static_cast<float>(h.y)}; }
inline float __low2float(__nv_bfloat162 h) { return static_cast<float>(h.x); }
inline float __high2float(__nv_bfloat162 h) { return static_cast<float>(h.y); }
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return h.__x; }
inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short x) {
  __nv_bfloat16 h;
  h.__x = x;
  return h;
}
