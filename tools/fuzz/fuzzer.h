// The fuzz loop: draw trace after trace from the distribution and check the properties on each
// until one is violated or the run or time budget is spent.
#pragma once

#include <cstdint>
#include <optional>

#include "harness/check_shard.h"
#include "tools/fuzz/property.h"
#include "tools/fuzz/trace_distribution.h"

namespace mlasim {

struct FuzzOptions {
  TraceDistribution distribution;
  PropertyOptions properties;
  std::uint64_t seed = 0;
  int max_runs = 1000;     // --runs: the campaign's runs 0..max_runs-1
  double max_seconds = 0;  // --time; 0: no time limit
  int jobs = 1;            // -j: threads replaying runs at once
  Shard shard;             // --shard I/N: only the runs r with r % N == I
};

// The number of runs of [0, max_runs) that `shard` replays.
int shard_runs(int max_runs, const Shard& shard);

struct FuzzResult {
  int runs = 0;                        // traces replayed (the violating one included): this shard's
  std::optional<Violation> violation;  // the first one found
  std::optional<Scenario> trace;       // the trace that showed it
  int run = -1;                        // its run number
};

// The same result for any `jobs`: the violation of the lowest run number, and the runs before it
// (with --time, how many runs fit may differ). Runs are handed to threads in chunks, in order; a
// thread stops at the lowest violation found so far. The shards' first violations together give
// one run's: the lowest of them.
FuzzResult fuzz(const FuzzOptions& options);

}  // namespace mlasim
