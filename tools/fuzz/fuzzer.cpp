// The fuzz loop over runs 0, 1, 2, ... of one seed (or one shard of them), on one or more threads.
#include "tools/fuzz/fuzzer.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>
#include <mutex>

#include "base/check.h"
#include "harness/ordered_pool.h"
#include "tools/fuzz/scenario_validity.h"

namespace mlasim {
namespace {

// Runs handed to a thread at a time: small enough that threads stop soon after a violation, large
// enough that the counter is not contended (a small trace replays in ~50 us).
constexpr int kChunk = 64;

}  // namespace

int shard_runs(int max_runs, const Shard& shard) {
  if (max_runs <= shard.index) return 0;
  return static_cast<int>((static_cast<long long>(max_runs) - shard.index + shard.total - 1) / shard.total);
}

FuzzResult fuzz(const FuzzOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const int count = shard_runs(options.max_runs, options.shard);  // this shard's runs, k = 0..count-1
  // r = I + k N stays below max_runs: count holds only such k.
  auto run_of = [&](int k) {
    return static_cast<int>(options.shard.index + static_cast<long long>(k) * options.shard.total);
  };
  auto out_of_time = [&] {
    return options.max_seconds > 0 &&
           std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >= options.max_seconds;
  };
  std::atomic<int> next_chunk{0};
  std::atomic<int> lowest{std::numeric_limits<int>::max()};  // the lowest k found violating
  std::atomic<int> chunks_taken{0};
  std::mutex found_mutex;
  FuzzResult found;
  auto work = [&] {
    for (;;) {
      // In 64 bits: with --time alone `count` is INT_MAX, and a chunk's end passes it.
      const long long first = static_cast<long long>(kChunk) * next_chunk.load();
      if (first >= count || first >= lowest.load() || out_of_time()) return;
      const long long k0 = static_cast<long long>(kChunk) * next_chunk.fetch_add(1);
      if (k0 >= count || k0 >= lowest.load()) return;
      chunks_taken.fetch_add(1);
      const int end = static_cast<int>(std::min<long long>(count, k0 + kChunk));
      for (int k = static_cast<int>(k0); k < end && k < lowest.load(); ++k) {
        const int run = run_of(k);
        Scenario trace = generate_trace(options.distribution, options.seed, run);
        const std::string problem = scenario_problem(trace);
        MLASIM_CHECK(problem.empty(), "the fuzzer drew an invalid trace (" + trace.name + "): " + problem);
        if (std::optional<Violation> v = check_properties(trace, options.properties)) {
          const std::lock_guard<std::mutex> lock(found_mutex);
          if (k < lowest.load()) {
            lowest.store(k);
            found.violation = std::move(v);
            found.trace = std::move(trace);
            found.run = run;
          }
          return;
        }
      }
    }
  };
  const int jobs = static_cast<int>(
      std::max<long long>(1, std::min<long long>(options.jobs, (static_cast<long long>(count) + kChunk - 1) / kChunk)));
  // run_ordered: the threads joined, and an exception of one (a failed check) rethrown here.
  run_ordered(
      static_cast<std::size_t>(jobs), jobs, [&](std::size_t) { work(); }, [](std::size_t) {});
  // Every chunk taken was replayed to its end or to the lowest violation: the runs before it all
  // ran, and without one, the first chunks_taken chunks did.
  if (found.violation)
    found.runs = lowest.load() + 1;
  else
    found.runs = static_cast<int>(std::min<long long>(count, static_cast<long long>(chunks_taken.load()) * kChunk));
  return found;
}

}  // namespace mlasim
