// `mlasim merge` of `mlasim check` reports: the JSON (or JUnit) reports of the N shards of one
// campaign joined into the report one unsharded run writes, byte for byte (JUnit's times aside:
// the suite's time is the sum of the shards' rounded case times). The shards must make one whole:
// each index 0..N-1 once, the same N and scenario count, no scenario twice, every scenario there.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "harness/check_shard.h"
#include "scenario/json_field_reader.h"

namespace mlasim {

struct ReportFile {
  std::string path;  // as the user named it, for errors
  std::string text;
};

// An error of a report being merged (file, line and column where known, the key) with its hint.
Error merge_error(const std::string& file, int line, int column, const std::string& key, const std::string& message,
                  const std::string& hint);

// The shards' places (one per file) make one campaign: one count and whole, every index
// 0..count-1 exactly once; else the error naming the file. `whole_name`: "scenarios", "cells".
Status check_shards_whole(const std::vector<ReportFile>& files, const std::vector<ShardPlace>& places,
                          const char* whole_name);

// A JSON report's head: its `format` and `version` 1, and its `"shard": {"index", "count"[,
// whole_key]}` (the whole 0 without whole_key). Throws LoadError on a bad value; an error when the
// report has no shard (an unsharded run's).
Result<ShardPlace> read_report_head(const JsonFieldReader& r, const JsonNode& root, const char* format,
                                    const char* whole_key);

// The report's kind by its first bytes: "check-json", "check-junit", "fuzz-json", "matrix-json",
// or "" (unknown).
std::string report_kind(const std::string& text);

Result<std::string> merge_check_json(const std::vector<ReportFile>& shards);
Result<std::string> merge_check_junit(const std::vector<ReportFile>& shards);

}  // namespace mlasim
