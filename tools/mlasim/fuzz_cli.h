// What mlasim fuzz, shrink and matrix share: property names from flags, the properties' help text,
// -j and --shard, and writing a shrunk finding as a scenario file.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "harness/check_shard.h"
#include "tools/fuzz/property.h"

namespace mlasim::cli {

// Parses --property names; on an unknown name, or a model property without --model, prints why
// and returns false.
bool parse_properties(const std::vector<std::string>& names, bool with_model, std::vector<Property>& out);

// -j and --shard (empty: not given; `auto` from the environment): on a bad value prints why and
// returns false.
bool parse_jobs_and_shard(const std::string& jobs_text, const std::string& shard_text, int& jobs,
                          std::optional<Shard>& shard);

// "  no_fresh_prefill_on_decode_path  no row with ..." for every property.
std::string properties_help();

// Writes `text` to `path` atomically, creating its folder first.
Status write_creating_folder(const std::string& path, const std::string& text);

// The keys of "key=value" overrides: the shrinker keeps them as given.
std::vector<std::string> set_keys(const std::vector<std::string>& sets);

// Shrinks `trace` (violating v; `keep` keys stay), writes the finding to `path` atomically (creating its folder) and
// prints what it wrote. Returns an exit code: 1 (a violation, written) or 2 (cannot write).
// matches_golden_split is not shrunk (a smaller trace has no golden): the trace is written as it
// is, with its golden copied to <path's folder>/golden/<name>/split.txt, so that
// `mlasim check PATH --golden-dir <folder>/golden` fails on the same step.
int shrink_and_write(const Scenario& trace, const Violation& v, const FaultSet& faults,
                     const std::vector<std::string>& keep, const std::string& path, const std::string& origin,
                     const std::string& golden_dir = "");

}  // namespace mlasim::cli
