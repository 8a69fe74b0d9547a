// What the tests holding mlasim to vLLM 0.33's own tables (tests/data/vllm033_*.json) share: the
// table's text and its values as the cells write them.
#pragma once

#include <fstream>
#include <sstream>
#include <string>

#include "base/formats/json_value.h"
#include "deploy/deploy_report.h"

namespace mlasim::test {

inline std::string read_table(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A cell's string, or "<null>"; a cell's integer, or -1 when null.
inline std::string text(const JsonValue* v) { return v && v->is_string() ? v->string() : std::string("<null>"); }
inline long long integer(const JsonValue* v) { return v && v->is_number() ? static_cast<long long>(v->number()) : -1; }

// `mlasim deploy`'s options for a cell: its config (under scenarios/hf_configs), GPU, KV dtype, TP
// and --block-size (the member `block_key`, null when unset).
inline DeployOptions deploy_options(const JsonValue& cell, const std::string& root, const char* block_key) {
  DeployOptions o;
  o.hf_config = root + "/scenarios/hf_configs/" + text(cell.find("config"));
  o.gpu = text(cell.find("gpu"));
  o.kv_cache_dtype = text(cell.find("kv"));
  o.tensor_parallel_size = static_cast<int>(integer(cell.find("tp")));
  if (integer(cell.find(block_key)) > 0) o.block_size = static_cast<int>(integer(cell.find(block_key)));
  return o;
}

}  // namespace mlasim::test
