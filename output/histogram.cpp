// Counting and log-bucketed histograms.
#include "output/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace mlasim {
namespace {

long long rank_of(double p, long long n) {
  return std::max(1LL, static_cast<long long>(std::ceil(p * static_cast<double>(n))));
}

}  // namespace

void ValueCounts::add(long long v) {
  if (v >= 0 && v < kDense) {
    if (static_cast<std::size_t>(v) >= dense_.size()) dense_.resize(static_cast<std::size_t>(v) + 1, 0);
    ++dense_[static_cast<std::size_t>(v)];
  } else {
    ++other_[v];
  }
  min_ = n_ ? std::min(min_, v) : v;
  max_ = n_ ? std::max(max_, v) : v;
  ++n_;
  sum_ += v;
}

long long ValueCounts::percentile(double p) const {
  if (n_ == 0) return 0;
  const long long rank = rank_of(p, n_);
  long long seen = 0;
  // In value order: the map's negative values, the flat array, the map's values from kDense up.
  auto above = other_.lower_bound(0);
  for (auto it = other_.begin(); it != above; ++it)
    if ((seen += it->second) >= rank) return it->first;
  for (std::size_t v = 0; v < dense_.size(); ++v)
    if ((seen += dense_[v]) >= rank) return static_cast<long long>(v);
  for (auto it = above; it != other_.end(); ++it)
    if ((seen += it->second) >= rank) return it->first;
  return max();
}

void LogHistogram::add(std::int64_t ns) {
  const std::uint64_t v = static_cast<std::uint64_t>(std::max<std::int64_t>(ns, 0));
  int bucket = 0;
  if (v < (1u << kSubBits)) {
    bucket = static_cast<int>(v);
  } else {
    const int e = 63 - std::countl_zero(v);  // >= kSubBits
    const int sub = static_cast<int>((v >> (e - kSubBits)) & ((1u << kSubBits) - 1));
    bucket = ((e - kSubBits + 1) << kSubBits) + sub;
  }
  ++buckets_[static_cast<std::size_t>(bucket)];
  if (n_ == 0 || ns < min_) min_ = ns;
  if (n_ == 0 || ns > max_) max_ = ns;
  ++n_;
  sum_ += static_cast<double>(ns);
}

double LogHistogram::percentile(double p) const {
  if (n_ == 0) return 0;
  const long long rank = rank_of(p, n_);
  long long seen = 0;
  for (std::size_t b = 0; b < buckets_.size(); ++b) {
    seen += buckets_[b];
    if (seen < rank) continue;
    const int bucket = static_cast<int>(b);
    if (bucket < (1 << kSubBits)) return bucket;
    const int e = (bucket >> kSubBits) + kSubBits - 1;
    const int sub = bucket & ((1 << kSubBits) - 1);
    const double lo = std::ldexp(1.0, e) + sub * std::ldexp(1.0, e - kSubBits);
    const double mid = lo + std::ldexp(1.0, e - kSubBits) / 2;
    return std::clamp(mid, static_cast<double>(min_), static_cast<double>(max_));
  }
  return static_cast<double>(max_);
}

}  // namespace mlasim
