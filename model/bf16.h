// bfloat16 on the host: a float rounded to the nearest bf16 value (ties to even), kept as a float
// (seeded weights are drawn through it so that bf16 storage represents them exactly), and the
// 16-bit storage form of such values.
#pragma once

#include <bit>
#include <cstdint>

namespace mlasim {

inline float round_to_bf16(float x) {
  std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  if ((u & 0x7f800000u) == 0x7f800000u) {  // inf stays, NaN stays NaN (quiet)
    return (u & 0x007fffffu) ? std::bit_cast<float>(u | 0x00400000u) : x;
  }
  u += 0x7fffu + ((u >> 16) & 1u);
  return std::bit_cast<float>(u & 0xffff0000u);
}

inline bool is_bf16_exact(float x) { return (std::bit_cast<std::uint32_t>(x) & 0xffffu) == 0; }

// The bf16 bits of x rounded to bf16, and the float a bf16 bit pattern stands for (exact).
inline std::uint16_t bf16_bits(float x) {
  return static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(round_to_bf16(x)) >> 16);
}
inline float bf16_value(std::uint16_t bits) { return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16); }

inline constexpr std::uint16_t kBf16NaNBits = 0x7fc0;  // a quiet NaN, the poison of unused rows

}  // namespace mlasim
