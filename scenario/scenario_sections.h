// Readers for each top-level section of a scenario (internal to the loader).
#pragma once

#include "config/scenario.h"
#include "scenario/yaml_reader.h"

namespace mlasim {

void read_model_section(const YamlReader& r, const YamlNode& node, ModelConfig& out);
void read_scheduler_section(const YamlReader& r, const YamlNode& node, SchedulerConfig& out);
void read_engine_section(const YamlReader& r, const YamlNode& node, EngineConfig& out);
// engine.gpu and the `cache` section (either node may be null).
void read_deployment_keys(const YamlReader& r, const YamlNode& engine, const YamlNode& cache, DeploymentConfig& out);
void read_parallel_section(const YamlReader& r, const YamlNode& node, ParallelConfig& out);
// Needs the model (vocabulary, EOS, seed) and scheduler (spec tokens, max_model_len resolved) already read.
void read_requests_section(const YamlReader& r, const YamlNode& node, Scenario& s);
void read_timing_section(const YamlReader& r, const YamlNode& node, TimingConfig& out);
// Needs the requests already read (ids are checked against them).
void read_expect_section(const YamlReader& r, const YamlNode& node, Scenario& s);

}  // namespace mlasim
