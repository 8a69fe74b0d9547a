// The kit's random numbers: mlasim's one generator (base/rng.h, splitmix64 with Box–Muller normals),
// and FlashMLA's test data drawn from it (randn / 10 clamped to [−1, 1], stored as bf16).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "model/bf16.h"
#include "base/rng.h"

namespace mlasim::kit {

using Rng = mlasim::Rng;  // base/rng.h

// randn / divisor clamped to [−clip, clip], as bf16 bits (FlashMLA's test data: divisor 10, clip 1).
inline std::uint16_t randn_bf16(Rng& rng, double divisor = 10.0, double clip = 1.0) {
  return bf16_bits(static_cast<float>(std::clamp(rng.normal() / divisor, -clip, clip)));
}

}  // namespace mlasim::kit
