// Runs fn(i) for i in [0, n) on the hardware threads: the references and test data generators of
// the kit are per-item independent, so their results do not depend on the thread count.
#pragma once

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace mlasim::kit {

template <typename Fn>
void parallel_for(long n, Fn fn) {
  const long hw = static_cast<long>(std::max(1u, std::min(std::thread::hardware_concurrency(), 64u)));
  const long nt = std::max(1L, std::min(hw, n));
  std::atomic<long> next{0};
  std::vector<std::thread> pool;
  for (long t = 0; t < nt; ++t)
    pool.emplace_back([&] {
      for (long i; (i = next.fetch_add(1)) < n;) fn(i);
    });
  for (auto& th : pool) th.join();
}

}  // namespace mlasim::kit
