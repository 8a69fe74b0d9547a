// `mlasim check PATH...`: compare scenarios against their goldens and expect blocks.
#include <cstdlib>
#include <functional>
#include <iostream>
#include <numeric>
#include <optional>
#include <sstream>
#include <thread>

#include "base/atomic_file.h"
#include "base/output_set.h"
#include "harness/check_report_html.h"
#include "harness/check_runner.h"
#include "verify/golden_update.h"
#include "harness/check_shard.h"
#include "harness/ordered_pool.h"
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
  std::string html_path;
  std::vector<std::string> injects;
  bool dry_run = false;
  bool explain = false;
  std::string jobs = "1";
  std::string shard;         // "I/N"; read only when shard_given
  bool shard_given = false;
};

// The shard to run: --shard, else GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS, else none (everything).
// Creates GTEST_SHARD_STATUS_FILE when it is set, as gtest does. False (after saying why) on bad input.
bool resolve_shard(const CheckOptions& o, std::optional<Shard>& shard) {
  if (const char* status_file = std::getenv("GTEST_SHARD_STATUS_FILE")) {
    if (Status st = touch_shard_status_file(status_file); !st) {
      std::cerr << st.error().format() << "\n";
      return false;
    }
  }
  if (o.shard_given) {
    Result<Shard> parsed = parse_shard_option(o.shard);
    if (!parsed) std::cerr << parsed.error().format() << "\n";
    if (parsed) shard = parsed.value();
    return parsed.ok();
  }
  Result<std::optional<Shard>> env = shard_from_env(std::getenv("GTEST_SHARD_INDEX"), std::getenv("GTEST_TOTAL_SHARDS"));
  if (!env) std::cerr << env.error().format() << "\n";
  if (env) shard = env.value();
  return env.ok();
}

// The flags checked and the scenario files found (every file, sorted): kExitOk, or the exit code
// after saying why.
int resolve_inputs(const CheckOptions& o, int& num_jobs, std::optional<Shard>& shard, std::vector<std::string>& files) {
  Result<int> jobs = parse_jobs(o.jobs, std::thread::hardware_concurrency());
  if (!jobs) {
    std::cerr << jobs.error().format() << "\n";
    return kExitBadInput;
  }
  num_jobs = jobs.value();
  if (!resolve_shard(o, shard)) return kExitBadInput;
  if (int rc = check_device(o.device); rc != kExitOk) return rc;
  if (!output_path_ok("--junit", o.junit_path) || !output_path_ok("--json", o.json_path) ||
      !output_path_ok("--html", o.html_path))
    return kExitBadInput;
  std::vector<std::string> paths = o.paths.empty() ? std::vector<std::string>{"scenarios"} : o.paths;
  Result<std::vector<std::string>> found = collect_scenarios(paths);
  if (!found) {
    std::cerr << found.error().format() << "\n";
    return kExitBadInput;
  }
  files = found.value();
  NamedPaths inputs;
  for (const std::string& f : files) inputs.emplace_back("a scenario file", f);
  if (!outputs_distinct({{"--junit", o.junit_path}, {"--json", o.json_path}, {"--html", o.html_path}}, inputs))
    return kExitBadInput;
  if (files.empty()) {
    std::cerr << "mlasim check: no scenario files under the given paths\n";
    return kExitBadInput;
  }
  return kExitOk;
}

// What each scenario's check asks of its replay: the goldens, the backend under test and its
// faults. False after saying why.
bool scenario_options(const CheckOptions& o, mlasim::CheckOptions& options) {
  options.golden_dir = o.golden_dir;
  options.replay.with_model = !o.dry_run;
  options.explain = o.explain;
  options.timelines = !o.html_path.empty();
  if (!parse_faults(o.injects, options.replay.faults)) return false;
  if (o.device == "cuda" && !o.dry_run) {
    const std::string device = o.device;
    options.replay.make_backend = [device](const MlaWeights& w, const Scenario& s, const FaultSet& f) {
      return make_backend(device, w, s, f);
    };
    options.backend_support_error = [device](const Scenario& s, const FaultSet& f) {
      return backend_support_error(device, s, f);
    };
  }
  return true;
}

struct CheckTally {
  int passed = 0, failed = 0, bad = 0;
};

// Checks `files[selected[k]]` on `num_jobs` workers; the lines come out in scenario order, as a
// serial run prints them.
std::vector<ScenarioCheck> check_all(const std::vector<std::string>& files, const std::vector<std::size_t>& selected,
                                     int num_jobs, const mlasim::CheckOptions& options, CheckTally& tally) {
  std::vector<ScenarioCheck> checks(selected.size());
  run_ordered(
      selected.size(), num_jobs, [&](std::size_t k) { checks[k] = check_scenario(files[selected[k]], options); },
      [&](std::size_t k) {
        const ScenarioCheck& c = checks[k];
        std::cout << format_check_line(c) << std::endl;
        if (!c.deployment_chain.empty()) {  // --explain: each link, indented under the scenario's line
          std::istringstream links(c.deployment_chain);
          for (std::string link; std::getline(links, link);) std::cout << "    " << link << "\n";
        }
        (c.status == CheckStatus::kPass ? tally.passed : tally.failed)++;
        tally.bad += c.status == CheckStatus::kBadInput;
      });
  return checks;
}

// The closing line: "N passed, N failed", and the shard when one was checked.
std::string summary_line(const CheckTally& tally, const std::optional<Shard>& shard, std::size_t num_files) {
  std::string summary = std::to_string(tally.passed) + " passed, " + std::to_string(tally.failed) + " failed";
  if (shard)
    summary += " (shard " + std::to_string(shard->index) + "/" + std::to_string(shard->total) + " of " +
               std::to_string(num_files) + (num_files == 1 ? " scenario)" : " scenarios)");
  return summary;
}

// The reports are one set: all written and synced, then published together (base/output_set.h).
int publish_reports(const CheckOptions& o, const std::vector<ScenarioCheck>& checks, const std::string& summary,
                    const std::optional<ShardPlace>& shard) {
  std::vector<std::string> targets;
  for (const std::string* p : {&o.junit_path, &o.json_path, &o.html_path})
    if (!p->empty()) targets.push_back(*p);
  for (const std::string& note : recover_output_leftovers(targets)) std::cerr << "note: " << note << "\n";
  AtomicOutputFile reports[3];
  std::vector<AtomicOutputFile*> finished;
  int k = 0;
  for (const auto& [path, report] : {std::pair<std::string, std::function<std::string()>>{
                                         o.junit_path, [&] { return check_reports_junit(checks, shard); }},
                                     {o.json_path, [&] { return check_reports_json(checks, shard); }},
                                     {o.html_path, [&] { return check_report_html(checks, summary); }}}) {
    if (path.empty()) continue;
    AtomicOutputFile& f = reports[k++];
    if (Status st = f.open(path); !st) return report_error(st.error());
    f.write(report());
    if (Status st = f.finish(); !st) return report_error(st.error());
    finished.push_back(&f);
  }
  if (!finished.empty())
    if (Status st = publish_together(finished); !st) return report_error(st.error());
  return kExitOk;
}

int run_check(const CheckOptions& o) {
  int num_jobs = 1;
  std::optional<Shard> shard;
  std::vector<std::string> files;
  if (int rc = resolve_inputs(o, num_jobs, shard, files); rc != kExitOk) return rc;
  // A `golden update` killed while swapping its goldens in: completed before they are read.
  for (const std::string& note : recover_golden_leftovers(o.golden_dir)) std::cerr << "note: " << note << "\n";
  mlasim::CheckOptions options;
  if (!scenario_options(o, options)) return kExitBadInput;
  if (o.device == "cuda" && num_jobs > 1) {
    std::cerr << "mlasim check: --device cuda runs the scenarios one at a time (-j " << num_jobs << " ignored)\n";
    num_jobs = 1;
  }
  // Workers' models together stay within the machine's memory: a large one waits for room.
  MemoryBudget memory(physical_memory_bytes());
  if (num_jobs > 1) options.memory = &memory;
  std::vector<std::size_t> selected(files.size());
  std::iota(selected.begin(), selected.end(), std::size_t{0});
  if (shard) selected = shard_indices(files.size(), *shard);
  CheckTally tally;
  const std::vector<ScenarioCheck> checks = check_all(files, selected, num_jobs, options, tally);
  const std::string summary = summary_line(tally, shard, files.size());
  std::cout << summary << std::endl;
  std::optional<ShardPlace> report_shard;
  if (shard) report_shard = ShardPlace{shard->index, shard->total, static_cast<long long>(files.size())};
  if (int rc = publish_reports(o, checks, summary, report_shard); rc != kExitOk) return rc;
  if (tally.bad > 0) return kExitBadInput;
  return tally.failed > 0 ? kExitRegression : kExitOk;
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
      "-j N checks N scenarios at once (-j 0: one per hardware thread); the lines and reports are those\n"
      "of a serial run, in the same order. With --device cuda the scenarios run one at a time.\n"
      "--shard I/N checks only the scenarios whose index i in the sorted list has i % N == I, so N\n"
      "shards cover every scenario once; without it GTEST_SHARD_INDEX and GTEST_TOTAL_SHARDS are read\n"
      "(both or neither), and GTEST_SHARD_STATUS_FILE is created when set, as gtest does. --shard auto\n"
      "reads the shard from a Slurm job array (SLURM_ARRAY_TASK_ID/_MIN/_STEP/_COUNT), a Kubernetes\n"
      "Indexed Job (JOB_COMPLETION_INDEX with MLASIM_TOTAL_SHARDS) or GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS.\n"
      "Exit 0 all pass, 1 a regression, 2 bad input, 77 a GPU was requested and none is present.\n"
      "Examples: mlasim check scenarios/ --junit report.xml\n"
      "          mlasim check scenarios/ -j 8 --shard 1/4 --json shard1.json");
  cmd->add_option("paths", o->paths, "Scenario files or directories (default: scenarios/)");
  cmd->add_option("--golden-dir", o->golden_dir, "Directory holding <scenario>/split.txt and logits goldens");
  cmd->add_option("--device", o->device, "Backend: cpu or cuda")->check(CLI::IsMember({"cpu", "cuda"}));
  cmd->add_option("--junit", o->junit_path, "Write a JUnit XML report to FILE");
  cmd->add_option("--json", o->json_path, "Write a JSON report to FILE");
  cmd->add_option("--html", o->html_path,
                  "Write a self-contained HTML report to FILE: the scenarios with status and checks, and for each\n"
                  "failure its first differing split step side by side, the logits comparison and its timeline");
  cmd->add_option("--inject", o->injects, "Inject a fault into the backend under test (repeatable); see `mlasim run --help`");
  cmd->add_flag("--explain", o->explain,
                "Under each scenario's line, its deployment chain: model, sparse or not, the backend candidates, "
                "the backend, block size and runner vLLM 0.33 would use");
  cmd->add_flag("--dry-run", o->dry_run, "Compare splits and expect: blocks only, without the model and logits");
  cmd->add_option("-j,--jobs", o->jobs, "Scenarios checked at once (default 1; 0: one per hardware thread; cpu only)")
      ->type_name("N");
  CLI::Option* shard = cmd->add_option(
      "--shard", o->shard,
      "Check shard I of N: the scenarios with index % N == I (overrides GTEST_SHARD_INDEX/TOTAL_SHARDS);\n"
      "auto: the shard the batch system's environment names (see above)")
      ->type_name("I/N|auto");
  add_cpu_threads_option(cmd);
  cmd->callback([o, shard, &exit_code] {
    o->shard_given = shard->count() > 0;
    exit_code = run_check(*o);
  });
}

}  // namespace mlasim::cli
