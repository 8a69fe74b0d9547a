// Distributions in constant memory for the run summary: exact counts of small integers (tokens
// and rows per step) and a log-bucketed histogram of durations (relative error <= 1/128).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

namespace mlasim {

// Exact: one counter per distinct value (per-step values are bounded by the token budget). Values
// in [0, kDense) are counted in a flat array indexed by value (an add per value per step must not
// walk a tree); others, in an ordered map.
class ValueCounts {
 public:
  static constexpr long long kDense = 1 << 16;
  void add(long long v);
  long long count() const { return n_; }
  long long min() const { return n_ ? min_ : 0; }
  long long max() const { return n_ ? max_ : 0; }
  double mean() const { return n_ ? static_cast<double>(sum_) / static_cast<double>(n_) : 0; }
  // The smallest value v with at least ceil(p * count) values <= v (nearest rank); 0 when empty.
  long long percentile(double p) const;

 private:
  std::vector<long long> dense_;          // dense_[v]: the count of v, for 0 <= v < kDense
  std::map<long long, long long> other_;  // values below 0 or from kDense up
  long long n_ = 0, sum_ = 0, min_ = 0, max_ = 0;
};

// Non-negative durations in ns, 128 buckets per power of two; percentiles return the bucket's
// midpoint, min/max/mean are exact.
class LogHistogram {
 public:
  void add(std::int64_t ns);
  long long count() const { return n_; }
  std::int64_t min() const { return n_ ? min_ : 0; }
  std::int64_t max() const { return n_ ? max_ : 0; }
  double mean() const { return n_ ? sum_ / static_cast<double>(n_) : 0; }
  double percentile(double p) const;

 private:
  static constexpr int kSubBits = 7;
  std::vector<long long> buckets_ = std::vector<long long>(64 << kSubBits, 0);
  long long n_ = 0;
  double sum_ = 0;
  std::int64_t min_ = 0, max_ = 0;
};

}  // namespace mlasim
