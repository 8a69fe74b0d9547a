// bfloat16 rounding on the host: a float rounded to the nearest bf16 value (ties to even), kept
// as a float. Seeded weights are drawn through it so that bf16 storage represents them exactly.
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

}  // namespace mlasim
