// The KV cache groups of a hybrid family in `mlasim deploy`'s report (text and JSON): each group's
// kind, layers, block size, page bytes, tokens per state, sliding window and backends, and the
// pool they share. Plain MLA models (one group) print nothing here.
#pragma once

#include <string>
#include <vector>

#include "base/formats/json_writer.h"
#include "config/scenario.h"

namespace mlasim {

// Whether the report shows KV cache groups: the model's layers are not all plain MLA.
bool reports_kv_cache_groups(const Scenario& s);

// The text lines ("kv cache: ..." and one line per group); "" for a plain MLA model.
std::string kv_cache_groups_text(const Scenario& s);

// The JSON members "kv_cache" (the pool) and "kv_cache_groups", written into the open object.
void write_kv_cache_groups_json(JsonWriter& w, const Scenario& s);

// Layer names compressed to one pattern per template, the layer numbers as ranges:
// "model.layers.[0..42/2].attn.swa_cache" for layers 0, 2, ..., 42.
std::vector<std::string> layer_name_patterns(const std::vector<std::string>& names);

}  // namespace mlasim
