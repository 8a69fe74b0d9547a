// `mlasim import`: reads a public trace (Azure, BurstGPT, Mooncake) as a stream and writes a
// scenario, SCENARIO.yaml, whose requests_file SCENARIO.jsonl holds one request per line.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace mlasim {

enum class TraceFormat { kAzure, kBurstGpt, kMooncake };

std::optional<TraceFormat> parse_trace_format(std::string_view name);
const char* to_string(TraceFormat f);

struct ImportOptions {
  TraceFormat format = TraceFormat::kAzure;
  std::string input;    // the trace file
  std::string output;   // SCENARIO.yaml (or .yml); SCENARIO.jsonl is written beside it
  long long limit = 0;  // import the first `limit` accepted requests; 0 = all
  std::string model_preset = "v3-attn";
  std::vector<std::string> sets;  // "key.path=value" overrides of the written YAML
};

struct ImportSummary {
  std::string input;
  std::string yaml_path;
  std::string jsonl_path;
  long long imported = 0;
  long long skipped_zero_output = 0;  // vLLM needs max_tokens >= 1
  long long skipped_zero_prompt = 0;
  long long skipped_too_long = 0;  // prompt_len >= max_model_len
  long long max_model_len = 0;
  bool stopped_at_limit = false;
  long long limit = 0;
  long long duration_us = 0;  // arrival time of the last imported request
  double prompt_tokens = 0;   // sums over the imported requests, for the means
  double output_tokens = 0;
  long long skipped() const { return skipped_zero_output + skipped_zero_prompt + skipped_too_long; }
};

// Writes both files only when the whole import succeeded (the .jsonl renamed into place first);
// on an Error nothing is left behind.
Result<ImportSummary> import_trace(const ImportOptions& options);

// What `mlasim import` prints: the counts and files, then the spread of the imported requests.
std::string format_import_summary(const ImportSummary& s);

}  // namespace mlasim
