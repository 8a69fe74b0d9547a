// Loading a scenario file (schema version 1) strictly: every problem is an Error naming file,
// line, column and key path, with a hint. `--set key=value` overrides are applied before
// validation, so they are checked exactly like the file's own keys.
#pragma once

#include <string>
#include <vector>

#include "config/scenario.h"
#include "base/status.h"

namespace mlasim {

// Why `name` cannot name a folder golden/<name>/ (empty, over 200 bytes, a leading '.', a path
// separator, a control character), or "" when it can.
std::string golden_name_problem(const std::string& name);

// `sets` holds "key.path=value" strings (list entries by index: requests.0.max_tokens=4).
Result<Scenario> load_scenario_file(const std::string& path, const std::vector<std::string>& sets = {});
// The same from text already in memory; `display_name` stands for the file in messages.
Result<Scenario> load_scenario_text(const std::string& text, const std::string& display_name,
                                    const std::vector<std::string>& sets = {});

}  // namespace mlasim
