// `mlasim check PATH...`: compare scenarios against their goldens and expect blocks.
#include <iostream>

#include "tools/harness/atomic_file.h"
#include "tools/harness/check_runner.h"
#include "tools/mlasim/cli_backend.h"
#include "tools/mlasim/commands.h"

namespace mlasim::cli {
namespace {

struct CheckOptions {
  std::vector<std::string> paths;
  std::string golden_dir = "golden";
  std::string device = "cpu";
  std::string junit_path;
  std::string json_path;
  std::vector<std::string> injects;
  bool dry_run = false;
};

int run_check(const CheckOptions& o) {
  if (int rc = check_device(o.device); rc != kExitOk) return rc;
  if (!output_path_ok("--junit", o.junit_path) || !output_path_ok("--json", o.json_path)) return kExitBadInput;
  std::vector<std::string> paths = o.paths.empty() ? std::vector<std::string>{"scenarios"} : o.paths;
  Result<std::vector<std::string>> files = collect_scenarios(paths);
  if (!files) {
    std::cerr << files.error().format() << "\n";
    return kExitBadInput;
  }
  if (files.value().empty()) {
    std::cerr << "mlasim check: no scenario files under the given paths\n";
    return kExitBadInput;
  }
  mlasim::CheckOptions options;
  options.golden_dir = o.golden_dir;
  options.replay.with_model = !o.dry_run;
  if (!parse_faults(o.injects, options.replay.faults)) return kExitBadInput;
  if (o.device == "cuda" && !o.dry_run) {
    const std::string device = o.device;
    options.replay.make_backend = [device](const MlaWeights& w, const Scenario& s, const FaultSet& f) {
      return make_backend(device, w, s, f);
    };
    options.replay.compute_class = "bf16";
    options.backend_support_error = [device](const Scenario& s, const FaultSet& f) {
      return backend_support_error(device, s, f);
    };
  }
  std::vector<ScenarioCheck> checks;
  int passed = 0, failed = 0, bad = 0;
  for (const std::string& f : files.value()) {
    checks.push_back(check_scenario(f, options));
    const ScenarioCheck& c = checks.back();
    std::cout << format_check_line(c) << std::endl;
    (c.status == CheckStatus::kPass ? passed : failed)++;
    bad += c.status == CheckStatus::kBadInput;
  }
  std::cout << passed << " passed, " << failed << " failed" << std::endl;
  for (const auto& [path, text] : {std::pair{o.junit_path, check_reports_junit(checks)},
                                   std::pair{o.json_path, check_reports_json(checks)}}) {
    if (path.empty()) continue;
    if (Status st = write_file_atomically(path, text); !st) {
      std::cerr << st.error().format() << "\n";
      return kExitBadInput;
    }
  }
  if (bad > 0) return kExitBadInput;
  return failed > 0 ? kExitRegression : kExitOk;
}

}  // namespace

void add_check_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<CheckOptions>();
  CLI::App* cmd = app.add_subcommand(
      "check",
      "Run every scenario under PATH (files or directories) and compare the split (exactly) and the\n"
      "logits (within the backend's tolerance class) with golden/<name>/, plus each scenario's expect:\n"
      "block. The CPU backend under test computes in float; goldens are fp64.\n"
      "Prints one line per scenario and a closing `N passed, N failed` line.\n"
      "Exit 0 all pass, 1 a regression, 2 bad input, 77 a GPU was requested and none is present.\n"
      "Example: mlasim check scenarios/ --junit report.xml");
  cmd->add_option("paths", o->paths, "Scenario files or directories (default: scenarios/)");
  cmd->add_option("--golden-dir", o->golden_dir, "Directory holding <scenario>/split.txt and logits goldens");
  cmd->add_option("--device", o->device, "Backend: cpu or cuda")->check(CLI::IsMember({"cpu", "cuda"}));
  cmd->add_option("--junit", o->junit_path, "Write a JUnit XML report to FILE");
  cmd->add_option("--json", o->json_path, "Write a JSON report to FILE");
  cmd->add_option("--inject", o->injects, "Inject a fault into the backend under test (repeatable); see `mlasim run --help`");
  cmd->add_flag("--dry-run", o->dry_run, "Compare splits and expect: blocks only, without the model and logits");
  cmd->callback([o, &exit_code] { exit_code = run_check(*o); });
}

}  // namespace mlasim::cli
