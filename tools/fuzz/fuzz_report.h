// `mlasim fuzz --json FILE`: a campaign's result (the runs replayed, the lowest violating run) as
// JSON, and `mlasim merge` of the shards' reports into the report one unsharded campaign writes,
// byte for byte: the lowest violating run of all shards, once every run below it is known to have
// passed in its shard.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "harness/check_merge.h"

namespace mlasim {

struct FuzzReport {
  std::string campaign;           // the flags that define the runs ("mlasim fuzz --seed 1 --runs 1000 ...")
  std::optional<int> runs_asked;  // --runs (none with --time alone)
  struct ShardPart {
    int index = 0, count = 1;
  };
  std::optional<ShardPart> shard;  // a shard's report only
  int runs = 0;                    // replayed, the violating one included (a shard's: its own)
  struct Found {
    int run = 0;
    std::string trace, batch, property;
    int step = -1;
    std::string detail;
    std::optional<std::string> finding;  // the shrunk scenario written (--out)
  };
  std::optional<Found> violation;
};

std::string fuzz_report_json(const FuzzReport& report);
Result<FuzzReport> read_fuzz_report(const ReportFile& file);
Result<std::string> merge_fuzz_reports(const std::vector<ReportFile>& shards);

}  // namespace mlasim
