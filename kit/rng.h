// The kit's random numbers: the splitmix64 generator (sim/seeded_tokens.h) with Box–Muller normals,
// and FlashMLA's test data drawn from it (randn / 10 clamped to [−1, 1], stored as bf16).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "attention/bf16.h"
#include "sim/seeded_tokens.h"

namespace mlasim::kit {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : s_(seed) {}

  std::uint64_t next() {
    const std::uint64_t z = splitmix64(s_);
    s_ += 0x9e3779b97f4a7c15ull;
    return z;
  }
  double uniform() { return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53; }  // (0, 1)
  // Normals in pairs: one Box–Muller draw gives r·cos t, the next call returns its r·sin t.
  double normal() {
    if (have_spare_) return have_spare_ = false, spare_;
    const double r = std::sqrt(-2.0 * std::log(uniform())), t = 6.283185307179586 * uniform();
    spare_ = r * std::sin(t), have_spare_ = true;
    return r * std::cos(t);
  }
  int below(int n) { return static_cast<int>(next() % static_cast<std::uint64_t>(n)); }  // [0, n)
  int between(int lo, int hi) { return lo + below(hi - lo + 1); }                           // [lo, hi]
  bool coin(int percent) { return below(100) < percent; }

 private:
  std::uint64_t s_;
  double spare_ = 0;
  bool have_spare_ = false;
};

// randn / divisor clamped to [−clip, clip], as bf16 bits (FlashMLA's test data: divisor 10, clip 1).
inline std::uint16_t randn_bf16(Rng& rng, double divisor = 10.0, double clip = 1.0) {
  return bf16_bits(static_cast<float>(std::clamp(rng.normal() / divisor, -clip, clip)));
}

}  // namespace mlasim::kit
