// The scenario document `mlasim import` writes (scenario/yaml_document.h, block style), its keys set
// by dotted path and `--set key.path=value` applied to it through the one --set walk
// (scenario/set_override.h).
#pragma once

#include <string>

#include "base/status.h"
#include "scenario/yaml_document.h"

namespace mlasim {

// Sets the scalar at a dotted path (creating block mappings on the way), e.g.
// "scheduler.max_num_seqs"; `origin` names where it came from in messages ("" = the importer).
void set_scalar(YamlValue& root, const std::string& dotted, std::string value, std::string origin = "");
// The scalar at a dotted path, or nullptr.
const YamlValue* find_scalar(const YamlValue& root, const std::string& dotted);

// Applies one `--set key.path=value`, not under `requests` or `requests_file` (the importer picks
// the requests). It may add keys but not replace a mapping by a scalar or go through a scalar.
Status apply_import_set(YamlValue& root, const std::string& set);

}  // namespace mlasim
