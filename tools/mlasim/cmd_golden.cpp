// `mlasim golden update SCENARIO...`: regenerate goldens from the reference backend.
#include <iostream>
#include <map>

#include "scenario/scenario_loader.h"
#include "harness/check_runner.h"
#include "harness/golden_stage.h"
#include "verify/golden_update.h"
#include "sim/vllm_cannot_run.h"
#include "tools/mlasim/commands.h"

namespace mlasim::cli {
namespace {

int update_goldens(const std::vector<std::string>& inputs, const std::string& golden_dir) {
  Result<std::vector<std::string>> files = collect_scenarios(inputs);
  if (!files) {
    std::cerr << files.error().format() << "\n";
    return kExitBadInput;
  }
  // Load everything first: nothing is written unless every scenario is valid and names are unique.
  std::map<std::string, std::string> by_name;
  for (const std::string& f : files.value()) {
    Result<Scenario> s = load_scenario_file(f);
    if (!s) {
      std::cerr << s.error().format() << "\n";
      return kExitBadInput;
    }
    auto [it, inserted] = by_name.emplace(s.value().name, f);
    if (!inserted) {
      std::cerr << f << ": error: name: scenario name \"" << s.value().name << "\" is also used by " << it->second
                << "\n  hint: goldens live in golden/<name>/, so names must be unique\n";
      return kExitBadInput;
    }
  }
  const std::string generator = std::string("mlasim ") + MLASIM_VERSION + " (commit " + MLASIM_GIT_COMMIT + ")";
  for (const std::string& note : recover_golden_leftovers(golden_dir)) std::cerr << "note: " << note << "\n";
  // Every golden is staged first; only then are they all swapped in: a failure updates none.
  GoldenUpdate update(golden_dir, generator);
  for (const std::string& f : files.value()) {
    Status st = Status::Ok();
    try {
      st = stage_golden(update, f);
    } catch (const VllmCannotRun& e) {  // a trace vLLM cannot run has no golden: exit 4, as `run`
      std::cerr << f << ": vLLM cannot run this trace: " << e.what() << "\n";
      std::cerr << "mlasim golden update: no golden was updated\n";
      return kExitVllmCannotRun;
    }
    if (!st) {
      const int rc = report_error(st.error());
      std::cerr << "mlasim golden update: no golden was updated\n";
      return rc;
    }
  }
  Result<std::vector<std::string>> written = update.commit();
  if (!written) return report_error(written.error());
  for (const std::string& dir : written.value()) std::cout << "wrote " << dir << "\n";
  return kExitOk;
}

}  // namespace

void add_golden_command(CLI::App& app, int& exit_code) {
  auto scenarios = std::make_shared<std::vector<std::string>>();
  auto golden_dir = std::make_shared<std::string>("golden");
  CLI::App* cmd = app.add_subcommand("golden", "Manage goldens (nobody edits them by hand).\n"
                                               "Example: mlasim golden update scenarios/seed/*.yaml");
  cmd->require_subcommand(1);
  CLI::App* update = cmd->add_subcommand(
      "update",
      "Regenerate golden/<name>/ (split.txt, logits.npy, logits_index.json, meta.yaml) for each\n"
      "SCENARIO (files or directories) from one fp64 CPU reference replay, stamping the generator\n"
      "version and commit. All or nothing: every scenario is loaded, replayed and written beside its old\n"
      "folder first; only then are the folders swapped in. A bad scenario or a full disk updates none;\n"
      "a kill leaves a journal that the next update (or check) completes.\n"
      "Example: mlasim golden update scenarios/seed/lone_one_token_prompt.yaml");
  update->add_option("scenarios", *scenarios, "Scenario files or directories")->required();
  update->add_option("--golden-dir", *golden_dir, "Where goldens live (default: golden)");
  add_cpu_threads_option(update);
  update->callback([scenarios, golden_dir, &exit_code] { exit_code = update_goldens(*scenarios, *golden_dir); });
}

}  // namespace mlasim::cli
