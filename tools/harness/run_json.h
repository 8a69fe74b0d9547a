// The run record as JSON (DESIGN.md, `mlasim run --json`): byte-identical for the same scenario.
#pragma once

#include <string>

#include "tools/harness/run_record.h"

namespace mlasim {

std::string run_record_to_json(const RunRecord& run);

}  // namespace mlasim
