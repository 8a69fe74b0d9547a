// A Scenario (inline requests) as scenario YAML the strict loader reads back to the same replay:
// every key away from its default, prompts and listed outputs as token ids. Written through the
// one YAML writer (scenario/yaml_document.h); `write → load → write` gives the same bytes.
#pragma once

#include <string>

#include "config/scenario.h"
#include "scenario/yaml_document.h"

namespace mlasim {

// The document: version, name, description, then the sections in the schema's order, one flow
// mapping each; requests one flow mapping a line; s.expect as its invariants list.
YamlValue scenario_document(const Scenario& s);
// emit_yaml of scenario_document with `comment` as the first line (after "# ").
std::string scenario_to_yaml(const Scenario& s, const std::string& comment);

}  // namespace mlasim
