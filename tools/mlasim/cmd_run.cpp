// `mlasim run SCENARIO`: replay one scenario step by step.
#include <iostream>

#include "sim/scenario_loader.h"
#include "tools/harness/atomic_file.h"
#include "tools/harness/engine.h"
#include "tools/harness/expectations.h"
#include "tools/harness/run_json.h"
#include "tools/harness/scenario_printer.h"
#include "tools/harness/step_table.h"
#include "tools/mlasim/commands.h"

namespace mlasim::cli {
namespace {

struct RunOptions {
  std::string scenario;
  std::string json_path;
  std::string logits_dir;
  std::string device = "cpu";
  int tp = 0;
  bool dry_run = false;
  bool explain = false;
  std::string compare_profile;
  std::vector<std::string> injects;
  std::vector<std::string> sets;
};

int run(const RunOptions& o) {
  std::vector<std::string> sets = o.sets;
  if (o.tp > 0) sets.push_back("parallel.tensor_parallel_size=" + std::to_string(o.tp));
  Result<Scenario> loaded = load_scenario_file(o.scenario, sets);
  if (!loaded) {
    std::cerr << loaded.error().format() << "\n";
    return kExitBadInput;
  }
  if (int rc = check_device(o.device); rc != kExitOk) return rc;
  if (!o.logits_dir.empty()) return not_implemented("run", "--logits-dir");
  if (!o.compare_profile.empty()) return not_implemented("run", "--compare-profile");
  if (!o.injects.empty()) return not_implemented("run", "--inject");
  if (!o.dry_run) return not_implemented("run", "the MLA model (run with --dry-run for scheduler and routing only)");
  const Scenario& scenario = loaded.value();
  std::cout << describe_scenario(scenario) << "\n";
  Engine engine(scenario);
  while (!engine.done()) {
    const StepRecord& st = engine.step();
    std::cout << format_step_line(st) << "\n";
    if (o.explain) std::cout << format_step_explanation(st);
  }
  RunRecord record = engine.run();
  std::cout << "\n" << format_request_summary(record);
  std::vector<ExpectationFailure> failures = check_expectations(scenario, record);
  if (int n = count_expectation_checks(scenario); n > 0) {
    if (failures.empty()) std::cout << "expect: all " << n << " checks hold\n";
    for (const auto& f : failures) std::cout << f.format() << "\n";
  }
  if (!o.json_path.empty()) {
    if (Status st = write_file_atomically(o.json_path, run_record_to_json(record)); !st) {
      std::cerr << st.error().format() << "\n";
      return kExitBadInput;
    }
  }
  return failures.empty() ? kExitOk : kExitRegression;
}

}  // namespace

void add_run_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* cmd = app.add_subcommand(
      "run",
      "Replay one scenario through the scheduler, the attention routing and (unless --dry-run) the MLA\n"
      "model, printing a per-step table: scheduled tokens per request, the decode/prefill split,\n"
      "num_mqa/num_mha, preemptions and finished requests. Checks the scenario's expect: block and\n"
      "exits 1 when it does not hold.\n"
      "Examples:\n"
      "  mlasim run scenarios/seed/lone_one_token_prompt.yaml --dry-run\n"
      "  mlasim run scenarios/seed/lone_one_token_prompt.yaml --set engine.profile=strict --json out.json");
  cmd->add_option("scenario", o->scenario, "Scenario YAML file")->required();
  cmd->add_option("--json", o->json_path, "Write the run record as JSON to FILE (atomically)");
  cmd->add_option("--logits-dir", o->logits_dir, "Write logits.npy and logits_index.json to DIR");
  cmd->add_option("--device", o->device, "Backend for the model: cpu (reference) or cuda")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  cmd->add_option("--tp", o->tp, "Tensor-parallel size, overriding parallel.tensor_parallel_size (1..8)")
      ->check(CLI::Range(1, 8));
  cmd->add_flag("--dry-run", o->dry_run, "Scheduler and routing only; skip the model");
  cmd->add_flag("--explain", o->explain, "Say for each row why it took its path");
  cmd->add_option("--compare-profile", o->compare_profile, "Run again under engine profile P and diff splits and logits");
  cmd->add_option("--inject", o->injects, "Inject a known fault into the attention math (repeatable)");
  cmd->add_option("--set", o->sets, "Override a scenario key, e.g. --set engine.profile=strict (repeatable)");
  cmd->callback([o, &exit_code] { exit_code = run(*o); });
}

}  // namespace mlasim::cli
