// `mlasim merge` of `mlasim check` reports: the JSON (or JUnit) reports of the N shards of one
// campaign joined into the report one unsharded run writes, byte for byte (JUnit's times aside:
// the suite's time is the sum of the shards' rounded case times). The shards must make one whole:
// each index 0..N-1 once, the same N and scenario count, no scenario twice, every scenario there.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"

namespace mlasim {

struct ReportFile {
  std::string path;  // as the user named it, for errors
  std::string text;
};

// The report's kind by its first bytes: "check-json", "check-junit", "fuzz-json", "matrix-json",
// or "" (unknown).
std::string report_kind(const std::string& text);

Result<std::string> merge_check_json(const std::vector<ReportFile>& shards);
Result<std::string> merge_check_junit(const std::vector<ReportFile>& shards);

}  // namespace mlasim
