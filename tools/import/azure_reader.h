// Azure LLM inference traces (Azure/AzurePublicDataset, 2023 and 2024):
// CSV `TIMESTAMP,ContextTokens,GeneratedTokens`, TIMESTAMP a wall-clock date and time.
#pragma once

#include <memory>
#include <string>

#include "tools/import/trace_reader.h"

namespace mlasim {

std::unique_ptr<TraceReader> make_azure_reader(const std::string& path);

}  // namespace mlasim
