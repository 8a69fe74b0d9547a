// `mlasim check --shard I/N` and GTEST_SHARD_INDEX / GTEST_TOTAL_SHARDS: which scenarios of the
// sorted list one shard runs (index i with i % N == I, gtest's rule), so N shards cover it once.
// `--shard auto` (check, fuzz) reads the shard from the batch system's environment.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace mlasim {

struct Shard {
  int index = 0;  // I, 0 <= I < N
  int total = 1;  // N >= 1
};

// Where a shard's report sits in its campaign (what `mlasim merge` checks): its index of `count`,
// and the size of the whole (scenarios, cells) the shards were taken from.
struct ShardPlace {
  long long index = 0, count = 1, whole = 0;
};

// Parses "I/N" as given to --shard (two whole numbers, 0 <= I < N).
Result<Shard> parse_shard(const std::string& text);

// The shard named by the values of GTEST_SHARD_INDEX and GTEST_TOTAL_SHARDS (nullptr: unset).
// std::nullopt when neither is set; an error naming the variable when one is missing or bad.
Result<std::optional<Shard>> shard_from_env(const char* index, const char* total);

// Reads an environment variable (std::getenv; tests pass a map): nullptr when unset.
using EnvLookup = std::function<const char*(const char*)>;

// `--shard auto`: the shard the environment names, the first of
//   GTEST_SHARD_INDEX of GTEST_TOTAL_SHARDS (gtest, Bazel, ctest's sharding);
//   a Slurm job array's SLURM_ARRAY_TASK_ID, counted from SLURM_ARRAY_TASK_MIN in steps of
//   SLURM_ARRAY_TASK_STEP, of SLURM_ARRAY_TASK_COUNT;
//   a Kubernetes Indexed Job's JOB_COMPLETION_INDEX of MLASIM_TOTAL_SHARDS (its completions, which
//   Kubernetes does not pass on: the Job sets it);
// an error naming the variables when none is set or one is bad.
Result<Shard> shard_from_environment(const EnvLookup& env);
// --shard's value: "auto" (shard_from_environment, the process's environment by default) or I/N
// (parse_shard).
Result<Shard> parse_shard_option(const std::string& text, const EnvLookup& env = EnvLookup(std::getenv));

// The indices in [0, count) that `shard` runs, ascending.
std::vector<std::size_t> shard_indices(std::size_t count, const Shard& shard);

// Creates `path` if it does not exist (gtest's GTEST_SHARD_STATUS_FILE: "this runner shards").
Status touch_shard_status_file(const std::string& path);

}  // namespace mlasim
