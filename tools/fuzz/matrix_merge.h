// `mlasim merge` of `mlasim matrix --shard I/N --json` reports: the shards' cells joined into the
// report of the whole matrix, byte for byte as one unsharded run writes it. The shards must be one
// run's: every index 0..N-1 once, the same options, each holding exactly its cells.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "harness/check_merge.h"

namespace mlasim {

Result<std::string> merge_matrix_reports(const std::vector<ReportFile>& shards);

}  // namespace mlasim
