// The scenario's `cache.kv_cache_groups`: the model's KV cache groups as vLLM 0.33 lays them out
// (config/kv_cache_layout.h), stated explicitly, one mapping per group. Absent: one MLA group of
// scheduler.block_size, as before. Read, checked against the rest of the scenario, and echoed by
// the scenario writer, the resolved trace and `describe`.
#pragma once

#include <string>

#include "base/formats/json_writer.h"
#include "config/scenario.h"
#include "scenario/yaml_document.h"
#include "scenario/yaml_reader.h"

namespace mlasim {

// Reads the list into s.scheduler.kv_cache_layout (defaults from the scheduler section, read
// before: Mamba's mode from prefix caching, its speculative blocks from num_speculative_tokens).
void read_kv_cache_groups(const YamlReader& r, const YamlNode& node, Scenario& s);
// cache.prefix_cache_retention_interval (`cache` holds it): an int >= 0, or `dense` (vLLM's None).
void read_retention_interval(const YamlReader& r, const YamlNode& cache, Scenario& s);
// The rules across sections (the profile, the MLA group's block size, Mamba's mode against prefix
// caching, the block sizes' lcm, the retention interval) for s.scheduler.kv_cache_layout, listed in
// the scenario or derived from the model; errors at the `cache` section's keys and groups, or at
// `cache` itself (the scenario's root when it has none). Then resolves the scheduler and hash
// block sizes. Nothing for an empty layout.
void check_kv_cache_groups(const YamlReader& r, const YamlNode& cache, Scenario& s);

// The writer's `kv_cache_groups` list (each group's keys that differ from their defaults).
YamlValue kv_cache_groups_yaml(const Scenario& s);
// The resolved layout as JSON members: "kv_cache_groups" (every field), "scheduler_block_size",
// "hash_block_size".
void write_kv_cache_layout_json(JsonWriter& w, const KvCacheLayout& layout);
// `describe`'s line: "kv_cache_groups: mamba/16 x4, mla_attention/16 (scheduler block 16, hash block 16)".
std::string describe_kv_cache_layout(const KvCacheLayout& layout);

}  // namespace mlasim
