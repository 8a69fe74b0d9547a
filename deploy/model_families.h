// The MLA model families vLLM 0.33 serves, as `mlasim releases` and the README list them: every
// model_type of scenario/hf_families.h with how mlasim reads it, the config files shipped for it
// (scenarios/hf_configs/), and what of it was checked against vLLM 0.33.0 and transformers 5.20
// (tools/conformance/; the figures are tools/bench/RESULTS.md's, and a test holds them to it).
#pragma once

#include <string>
#include <vector>

#include "base/formats/json_writer.h"
#include "scenario/hf_families.h"

namespace mlasim {

struct ModelFamilyEntry {
  const HfFamily* family = nullptr;
  std::vector<std::string> shipped_configs;  // file names under scenarios/hf_configs/
  std::string status;                        // how mlasim reads it, or why it does not
  std::string checks;                        // what was run against vLLM / transformers, with counts
};

// In hf_families()'s order.
const std::vector<ModelFamilyEntry>& model_family_table();

std::string model_families_text();
std::string model_families_markdown();
// The "families" array, written into an open JSON object.
void write_model_families_json(JsonWriter& w);

}  // namespace mlasim
