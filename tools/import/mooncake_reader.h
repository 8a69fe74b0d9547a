// Mooncake traces (kvcache-ai/Mooncake, FAST'25 release): JSON lines with `timestamp` (ms),
// `input_length`, `output_length` and `hash_ids`, one id per 512-token block of the prompt.
#pragma once

#include <memory>
#include <string>

#include "tools/import/trace_reader.h"

namespace mlasim {

// Tokens per hash id in a Mooncake trace.
inline constexpr long long kMooncakeBlockTokens = 512;

std::unique_ptr<TraceReader> make_mooncake_reader(const std::string& path);

}  // namespace mlasim
