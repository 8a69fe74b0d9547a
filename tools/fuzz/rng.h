// The fuzzer's random numbers: the splitmix64 generator, so a seed draws the same traces with every
// compiler and standard library (std:: distributions differ across them).
#pragma once

#include <cstdint>
#include <initializer_list>

#include "sim/seeded_tokens.h"

namespace mlasim {

class FuzzRng {
 public:
  explicit FuzzRng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    const std::uint64_t z = splitmix64(state_);
    state_ += 0x9e3779b97f4a7c15ULL;
    return z;
  }
  // Uniform in [lo, hi]; hi >= lo.
  int uniform(int lo, int hi) {
    return lo + static_cast<int>(next() % (static_cast<std::uint64_t>(hi - lo) + 1));
  }
  // True with probability percent / 100.
  bool chance(int percent) { return uniform(0, 99) < percent; }
  // One of `values`, each equally likely (repeat a value to weight it).
  template <class T>
  T pick(std::initializer_list<T> values) {
    const int i = uniform(0, static_cast<int>(values.size()) - 1);
    return *(values.begin() + i);
  }

 private:
  std::uint64_t state_;
};

// The generator of run `run` under `seed`: each run's trace can be drawn on its own.
inline FuzzRng run_rng(std::uint64_t seed, int run) {
  return FuzzRng(splitmix64(seed) ^ splitmix64(0x5bd1e995ULL + static_cast<std::uint64_t>(run)));
}

}  // namespace mlasim
