// `mlasim check --html FILE`: the check as one self-contained HTML page (no network, no external
// scripts or styles): the summary line, a table of scenarios with status and number of checks,
// and per scenario a <details> section. A failing one is open and shows its messages, the first
// differing step of the split (expected and got side by side, the differing fields marked), the
// logits comparison (max abs/rel and where, cos diff, top-1 mismatches) and its timeline; a
// passing one is folded.
#pragma once

#include <string>
#include <vector>

#include "harness/check_runner.h"

namespace mlasim {

// `summary` is the closing line `mlasim check` prints ("35 passed, 1 failed").
std::string check_report_html(const std::vector<ScenarioCheck>& checks, const std::string& summary);

}  // namespace mlasim
