// BurstGPT traces (HPMLL/BurstGPT): CSV `Timestamp,Model,Request tokens,Response tokens,Total
// tokens,Log Type`, Timestamp in seconds; a failed request has Response tokens 0.
#pragma once

#include <memory>
#include <string>

#include "tools/import/trace_reader.h"

namespace mlasim {

std::unique_ptr<TraceReader> make_burstgpt_reader(const std::string& path);

}  // namespace mlasim
