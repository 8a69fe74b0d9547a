// mlasim's one random-number generator: splitmix64 (base/hash.h) stepped by the golden
// ratio, so a seed draws the same numbers with every compiler and standard library (std::
// distributions differ across them). Used by the fuzzer's trace distribution, the kit's test data
// and the benchmarks' synthetic traces.
#pragma once

#include <cmath>
#include <cstdint>
#include <initializer_list>

#include "base/hash.h"

namespace mlasim {

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
  bool coin(int percent) { return below(100) < percent; }  // true with probability percent / 100
  // One of `values`, each equally likely (repeat a value to weight it).
  template <class T>
  T pick(std::initializer_list<T> values) {
    return *(values.begin() + between(0, static_cast<int>(values.size()) - 1));
  }

 private:
  std::uint64_t s_;
  double spare_ = 0;
  bool have_spare_ = false;
};

}  // namespace mlasim
