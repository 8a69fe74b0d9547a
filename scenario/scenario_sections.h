// Readers for each top-level section of a scenario (internal to the loader).
#pragma once

#include "config/scenario.h"
#include "scenario/yaml_reader.h"

namespace mlasim {

void read_model_section(const YamlReader& r, const YamlNode& node, ModelConfig& out);
// The scheduler, engine, cache, parallel and timing keys are read through their table
// (scenario/scenario_keys.h). The scheduler's are read after the profile set its rules.
void read_scheduler_section(const YamlReader& r, const YamlNode& node, Scenario& s);
void read_engine_section(const YamlReader& r, const YamlNode& node, Scenario& s);
// engine.gpu and the `cache` section (either node may be null).
void read_deployment_keys(const YamlReader& r, const YamlNode& engine, const YamlNode& cache, Scenario& s);
void read_parallel_section(const YamlReader& r, const YamlNode& node, Scenario& s);
// Needs the model (vocabulary, EOS, seed) and scheduler (spec tokens, max_model_len resolved) already read.
void read_requests_section(const YamlReader& r, const YamlNode& node, Scenario& s);
void read_timing_section(const YamlReader& r, const YamlNode& node, Scenario& s);
// Needs the requests already read (ids are checked against them).
void read_expect_section(const YamlReader& r, const YamlNode& node, Scenario& s);

}  // namespace mlasim
