// The run record as JSON (docs/design.md, `mlasim run --json`): byte-identical for the same scenario.
#pragma once

#include <string>

#include "tools/harness/run_record.h"

namespace mlasim {

class JsonWriter;

std::string run_record_to_json(const RunRecord& run);
// One routed row as an object: id, q, nct, prompt_len, region, path, fresh_on_decode_path, reason.
void write_row_json(JsonWriter& w, const RowRecord& row);

}  // namespace mlasim
