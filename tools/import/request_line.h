// One line of the request file (SCENARIO.jsonl) the importer writes: arrival time in seconds,
// prompt length, max_tokens, ignore_eos and, for Mooncake, the prompt's block hash ids.
#pragma once

#include <string>
#include <vector>

namespace mlasim {

// `us` microseconds as seconds: "0", "1.5", "0.041251" (no trailing zeros, no exponent).
void append_seconds(std::string& out, long long us);

// Appends {"arrival_time": S, "prompt_len": P, "max_tokens": M, "ignore_eos": true[, "prompt_hash_ids": [...]]}
// and a newline; `hash_ids` null for formats without them.
void append_request_line(std::string& out, long long arrival_us, long long prompt_len, long long max_tokens,
                         const std::vector<unsigned long long>* hash_ids);

}  // namespace mlasim
