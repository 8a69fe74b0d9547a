// `mlasim check`: find scenarios under paths, replay each, compare with its expect: block (and
// goldens), and report per scenario. Reports (JUnit XML, JSON) are built here, written by the CLI.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "harness/check_shard.h"
#include "verify/logits_golden.h"
#include "harness/memory_budget.h"
#include "engine/replay.h"
#include "verify/split_golden.h"

namespace mlasim {

enum class CheckStatus { kPass, kFail, kBadInput };

struct ScenarioCheck {
  std::string path;
  std::string name;         // scenario name (or the file stem when it did not load)
  CheckStatus status = CheckStatus::kPass;
  int num_checks = 0;       // individual values compared
  std::vector<std::string> messages;  // failures, or the input error
  double seconds = 0;
  // For the HTML report: the split golden's first difference (when it had one), the logits
  // comparison (when the values were compared), and the timeline of a scenario that did not pass
  // (an <svg> element; only when CheckOptions::timelines).
  GoldenComparison split;
  LogitsCheck logits;
  std::string timeline_svg;
  std::string deployment_chain;  // with CheckOptions::explain: the deployment chain, one link a line
};

struct CheckOptions {
  std::string golden_dir = "golden";
  ReplayOptions replay;  // the backend under test (CPU float by default; faults for --inject)
  // When set: "" if the backend under test can run the scenario, else why not (reported as an
  // input error for that scenario).
  std::function<std::string(const Scenario&, const FaultSet&)> backend_support_error;
  bool timelines = false;  // record each replay's timeline and keep it for a scenario that fails
  bool explain = false;    // keep each scenario's deployment chain (explain_deployment)
  // `check -j N`: the memory the workers' models share (model_memory); null: no limit.
  MemoryBudget* memory = nullptr;
};

// Every *.yaml under each path (a file is taken as is), sorted, without duplicates. A path that
// does not exist is an error.
Result<std::vector<std::string>> collect_scenarios(const std::vector<std::string>& paths);
ScenarioCheck check_scenario(const std::string& path, const CheckOptions& options);
// The same for a scenario already loaded from `path`.
ScenarioCheck check_scenario(const Scenario& scenario, const std::string& path, const CheckOptions& options);

std::string format_check_line(const ScenarioCheck& c);  // "PASS name (N checks)" / "FAIL name: ..."
// A sharded run's reports say where it sits (`whole`: the scenarios of the list every shard was
// taken from): the JSON "shard": {"index", "count", "num_scenarios"}, the JUnit a property
// mlasim.shard = "I/N of M", which `mlasim merge` reads. An unsharded report has neither.
std::string check_reports_junit(const std::vector<ScenarioCheck>& checks, const std::optional<ShardPlace>& shard = {});
std::string check_reports_json(const std::vector<ScenarioCheck>& checks, const std::optional<ShardPlace>& shard = {});

}  // namespace mlasim
