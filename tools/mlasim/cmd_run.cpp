// `mlasim run SCENARIO`: replay one scenario step by step.
#include <iostream>

#include <filesystem>
#include <memory>
#include <optional>

#include "attention/cpu_backend.h"
#include "attention/mla_weights.h"
#include "sim/scenario_loader.h"
#include "tools/harness/logits_golden.h"
#include "tools/harness/profile_diff.h"
#include "tools/harness/replay.h"
#include "tools/harness/atomic_file.h"
#include "tools/harness/engine.h"
#include "tools/harness/expectations.h"
#include "tools/harness/run_json.h"
#include "tools/harness/scenario_printer.h"
#include "tools/harness/step_table.h"
#include "tools/mlasim/cli_backend.h"
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
  std::string golden_dir = "golden";
};

// Replays under the scenario's profile and `other` in fp64 and prints the differences.
int compare_profiles(const Scenario& scenario, const std::string& other, const FaultSet& faults) {
  std::optional<EngineProfile> profile = parse_engine_profile(other);
  if (!profile) {
    std::cerr << "--compare-profile: unknown engine profile \"" << other
              << "\"\n  hint: vllm-2025-early | vllm-0.11 | vllm-3region | vllm-current | strict | sglang\n";
    return kExitBadInput;
  }
  Scenario b = scenario;
  b.engine.profile = *profile;
  ReplayOptions options;
  options.precision = CpuPrecision::kDouble;  // so only the routing, not float rounding, can differ
  options.faults = faults;
  const RunRecord ra = replay(scenario, options), rb = replay(b, options);
  const ProfileDiff d = diff_profiles(ra, rb, to_string(scenario.engine.profile), other, logits_tolerance("fp64"));
  std::cout << d.text;
  return kExitOk;
}

int run(const RunOptions& o) {
  std::vector<std::string> sets = o.sets;
  if (o.tp > 0) sets.push_back("parallel.tensor_parallel_size=" + std::to_string(o.tp));
  Result<Scenario> loaded = load_scenario_file(o.scenario, sets);
  if (!loaded) {
    std::cerr << loaded.error().format() << "\n";
    return kExitBadInput;
  }
  if (int rc = check_device(o.device); rc != kExitOk) return rc;
  if (!output_path_ok("--json", o.json_path)) return kExitBadInput;
  FaultSet faults;
  if (!parse_faults(o.injects, faults)) return kExitBadInput;
  if (o.dry_run && (!o.logits_dir.empty() || !o.compare_profile.empty() || !faults.empty())) {
    std::cerr << "mlasim run: --dry-run skips the model, so --logits-dir, --compare-profile and --inject do not apply\n";
    return kExitBadInput;
  }
  const Scenario& scenario = loaded.value();
  if (!o.compare_profile.empty()) return compare_profiles(scenario, o.compare_profile, faults);

  if (!o.dry_run) {
    if (std::string why = backend_support_error(o.device, scenario, faults); !why.empty()) {
      std::cerr << "mlasim run: --device " << o.device << " cannot run this scenario: " << why << "\n";
      return kExitBadInput;
    }
  }
  std::cout << describe_scenario(scenario) << "\n";
  std::optional<MlaWeights> weights;
  std::unique_ptr<Backend> backend;
  EngineOptions engine_options;
  if (!o.dry_run) {
    weights.emplace(seeded_weights(scenario.model));
    backend = make_backend(o.device, *weights, scenario, faults);
    engine_options.backend = backend.get();
  }
  Engine engine(scenario, engine_options);
  while (!engine.done()) {
    const StepRecord& st = engine.step();
    std::cout << format_step_line(st) << "\n";
    if (o.explain) std::cout << format_step_explanation(st);
  }
  RunRecord record = engine.run();
  std::cout << "\n" << format_request_summary(record) << format_misrouting_summary(record);
  int rc = kExitOk;
  std::vector<ExpectationFailure> failures = check_expectations(scenario, record);
  if (int n = count_expectation_checks(scenario); n > 0) {
    if (failures.empty()) std::cout << "expect: all " << n << " checks hold\n";
    for (const auto& f : failures) std::cout << f.format() << "\n";
  }
  if (!failures.empty()) rc = kExitRegression;
  if (backend) {
    std::cout << "logits: " << record.logits.index.size() << " rows x " << record.logits.vocab_size << " from "
              << backend->name() << "\n";
    const std::string golden = o.golden_dir + "/" + scenario.name;
    if (std::filesystem::exists(golden + "/logits.npy")) {
      Result<LogitsFiles> files = read_logits_files(golden);
      if (!files) {
        std::cerr << files.error().format() << "\n";
        return kExitBadInput;
      }
      LogitsCheck lc = check_logits_against(files.value(), record.logits,
                                            logits_tolerance(tolerance_class(o.device, scenario)), golden);
      std::cout << "vs " << golden << ": " << lc.message << "\n";
      if (!lc.pass) rc = kExitRegression;
    }
  }
  if (!o.json_path.empty()) {
    if (Status st = write_file_atomically(o.json_path, run_record_to_json(record)); !st) {
      std::cerr << st.error().format() << "\n";
      return kExitBadInput;
    }
  }
  if (!o.logits_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.logits_dir, ec);
    Status st = ec ? Status(Error{o.logits_dir, 0, 0, "", "cannot create the directory: " + ec.message(), ""})
                   : write_logits_files(o.logits_dir, record.logits);
    if (!st) {
      std::cerr << st.error().format() << "\n";
      return kExitBadInput;
    }
    std::cout << "wrote " << o.logits_dir << "/logits.npy and logits_index.json\n";
  }
  return rc;
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
  cmd->add_option("--compare-profile", o->compare_profile,
                  "Replay under the scenario's profile and profile P (both fp64) and show where the splits\n"
                  "differ and whether the logits do");
  cmd->add_option("--inject", o->injects,
                  "Inject a known fault into the backend (repeatable): decode_skips_cache_write_for_fresh_rows,\n"
                  "decode_scale_1_over_sqrt_576, rope_neox_instead_of_interleaved, kv_norm_dropped,\n"
                  "w_uk_transposed, chunk_lse_merge_wrong");
  cmd->add_option("--golden-dir", o->golden_dir, "Where to find golden/<name>/ for the logits comparison");
  cmd->add_option("--set", o->sets, "Override a scenario key, e.g. --set engine.profile=strict (repeatable)");
  cmd->callback([o, &exit_code] { exit_code = run(*o); });
}

}  // namespace mlasim::cli
