// The run record as JSON (docs/design.md, `mlasim run --json`): byte-identical for the same scenario.
#pragma once

#include <string>
#include <string_view>

#include "engine/run_record.h"

namespace mlasim {

class JsonWriter;

std::string run_record_to_json(const RunRecord& run);
// The pieces, for writers that stream a run: the members of one step / request object, and the
// document's opening up to and including `"steps": [`. A step's requests are named through `names`.
void write_step_fields(JsonWriter& w, const StepRecord& step, const RequestNames& names);
void write_request_fields(JsonWriter& w, const RequestRecord& request);
void begin_run_json(JsonWriter& w, const std::string& scenario);
// The six split counts as members, in the order of docs/design.md: num_decodes, num_decode_tokens,
// num_prefills, num_prefill_tokens, num_mqa_tokens, num_mha_tokens.
void write_split_counts(JsonWriter& w, const SplitCounts& counts);
// One routed row as an object: id, q, nct, prompt_len, region, path, fresh_on_decode_path, reason.
// `reason` is route_explain's words (word_row_reason), written as they are: they hold no character
// JSON escapes.
void write_row_json(JsonWriter& w, const RowRecord& row, std::string_view id, std::string_view reason);

}  // namespace mlasim
