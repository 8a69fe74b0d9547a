// `mlasim fuzz [BASE_SCENARIO]`: draw random traces, check properties on each, shrink the first
// violation and write it as a scenario.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <limits>
#include <memory>

#include "scenario/scenario_loader.h"
#include "scenario/scenario_writer.h"
#include "tools/fuzz/finding.h"
#include "tools/fuzz/fuzz_report.h"
#include "tools/fuzz/fuzzer.h"
#include "verify/split_golden.h"
#include "tools/mlasim/commands.h"
#include "tools/mlasim/fuzz_cli.h"

namespace mlasim::cli {
namespace {

// The base when no scenario is given: the tiny model and every key at its default.
constexpr const char* kDefaultBase = "version: 1\nname: fuzz\nrequests: [{id: r0, prompt_len: 1}]\n";

struct FuzzFlags {
  std::string base;
  std::vector<std::string> sets;
  std::vector<std::string> vary;
  std::vector<std::string> properties;
  std::vector<std::string> injects;
  unsigned long long seed = 0;
  int runs = 1000;
  bool runs_given = false;  // with --time alone the time is the only bound
  double seconds = 0;
  int max_requests = 8;
  bool model = false;
  std::string out_dir;
  std::string golden_dir;     // matches_golden_split
  std::string record_golden;  // write each run's split golden here instead of checking
  std::string emit;           // write each run's trace here instead of checking
  std::string jobs = "0";     // -j: threads (0: one per hardware thread)
  std::string shard;          // --shard I/N ("" : every run)
  std::string json_path;      // --json FILE: the campaign's result
};

// The flags that define a campaign's runs, as a command line: what `mlasim merge` compares across
// the shards' --json reports (not --time, -j, --shard or where outputs go).
std::string campaign_line(const FuzzFlags& f) {
  std::string line = "mlasim fuzz --seed " + std::to_string(f.seed);
  if (f.runs_given || f.seconds == 0) line += " --runs " + std::to_string(f.runs);
  line += " --max-requests " + std::to_string(f.max_requests);
  for (const std::string& v : f.vary) line += " --vary " + v;
  for (const std::string& s : f.sets) line += " --set " + s;
  for (const std::string& p : f.properties) line += " --property " + p;
  if (f.model) line += " --model";
  for (const std::string& fault : f.injects) line += " --inject " + fault;
  if (!f.golden_dir.empty()) line += " --golden-dir " + f.golden_dir;
  if (!f.base.empty()) line += " " + f.base;
  return line;
}

// " (shard I/N of M runs)" when the campaign is a shard, else "".
std::string shard_note(const FuzzOptions& o) {
  if (o.shard.total == 1) return "";
  return " (shard " + std::to_string(o.shard.index) + "/" + std::to_string(o.shard.total) +
         (o.max_runs == std::numeric_limits<int>::max() ? std::string(")") : " of " + std::to_string(o.max_runs) + " runs)");
}

// --emit DIR: every run's trace as DIR/fuzz_<seed>_<run>.yaml, checking nothing (the traces
// tools/conformance replays through vLLM).
int emit_traces(const FuzzOptions& options, const std::string& dir, const std::string& origin) {
  int written = 0;
  for (int k = 0; k < shard_runs(options.max_runs, options.shard); ++k) {
    const int run = options.shard.index + k * options.shard.total;
    const Scenario trace = generate_trace(options.distribution, options.seed, run);
    const std::string path = dir + "/" + trace.name + ".yaml";
    if (Status st = write_creating_folder(path, scenario_to_yaml(trace, origin + ", run " + std::to_string(run))); !st)
      return report_error(st.error());
    ++written;
  }
  std::cout << "wrote " << written << " traces in " << dir << shard_note(options) << "\n";
  return kExitOk;
}

// --record-golden DIR: every run's split golden, as `mlasim golden update` writes split.txt.
int record_goldens(const FuzzOptions& options, const std::string& dir) {
  const std::string generator = std::string("mlasim ") + MLASIM_VERSION + " (commit " + MLASIM_GIT_COMMIT + ")";
  const auto start = std::chrono::steady_clock::now();
  int written = 0;
  for (int k = 0; k < shard_runs(options.max_runs, options.shard); ++k) {
    if (options.max_seconds > 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >= options.max_seconds)
      break;
    const int run = options.shard.index + k * options.shard.total;
    const Scenario trace = generate_trace(options.distribution, options.seed, run);
    if (Status st = write_creating_folder(split_golden_path(dir, trace.name), split_golden_text(trace, generator)); !st)
      return report_error(st.error());
    ++written;
  }
  std::cout << "recorded " << written << " split goldens in " << dir << shard_note(options) << " (check them later with --property "
            << to_string(Property::kMatchesGoldenSplit) << " --golden-dir " << dir << ")\n";
  return kExitOk;
}

// --vary names into the knob mask; keys pinned by --set are never drawn.
bool parse_vary(const FuzzFlags& f, unsigned& vary) {
  if (!f.vary.empty()) vary = 0;
  for (const std::string& name : f.vary) {
    std::optional<unsigned> k = parse_knobs(name);
    if (!k) {
      std::cerr << "--vary: unknown knob \"" << name << "\"\n  hint: all, none";
      for (const KnobName& kn : knob_names()) std::cerr << ", " << kn.name;
      std::cerr << "\n";
      return false;
    }
    vary |= *k;
  }
  for (const std::string& key : set_keys(f.sets)) vary &= ~knob_of_key(key);
  return true;
}

// --json FILE: the campaign's report, written whole or not at all; `rc` unless it cannot be written.
int write_report(const FuzzFlags& f, const FuzzReport& report, int rc) {
  if (f.json_path.empty()) return rc;
  if (Status st = write_output_set({{f.json_path, fuzz_report_json(report)}}); !st) return report_error(st.error());
  return rc;
}

// The checking campaign: the runs, and the first violation shrunk and written under --out.
int run_campaign(const FuzzFlags& f, const FuzzOptions& options) {
  const TraceDistribution& d = options.distribution;
  std::cout << "mlasim fuzz: seed " << f.seed << ", " << to_string(d.base.engine.profile) << " / "
            << to_string(d.base.engine.attention_backend) << ", varying";
  if (d.vary == 0) std::cout << " nothing";
  for (const KnobName& kn : knob_names())
    if (d.vary & static_cast<unsigned>(kn.knob)) std::cout << " " << kn.name;
  std::cout << "\nproperties:";
  for (Property p : options.properties.properties) std::cout << " " << to_string(p);
  std::cout << "\n";
  const FuzzResult result = fuzz(options);
  FuzzReport report;
  report.campaign = campaign_line(f);
  if (options.max_runs != std::numeric_limits<int>::max()) report.runs_asked = options.max_runs;
  if (!f.shard.empty()) report.shard = FuzzReport::ShardPart{options.shard.index, options.shard.total};
  report.runs = result.runs;
  if (!result.violation) {
    std::cout << "no violation in " << result.runs << " runs" << shard_note(options) << "\n";
    return write_report(f, report, kExitOk);
  }
  std::cout << "run " << result.run << " (" << result.trace->name << ", " << describe_batch(*result.trace)
            << "): " << to_string(result.violation->property) << " violated\n  " << result.violation->detail << "\n";
  const std::string path = f.out_dir.empty() ? "" : f.out_dir + "/" + result.trace->name + ".yaml";
  std::string origin = "found by mlasim fuzz --seed " + std::to_string(f.seed);
  for (const std::string& s : f.sets) origin += " --set " + s;
  if (f.model) origin += " --model";
  for (const std::string& fault : f.injects) origin += " --inject " + fault;
  const int rc = shrink_and_write(*result.trace, *result.violation, options.properties.faults, set_keys(f.sets), path,
                                  origin, f.golden_dir);
  report.violation = FuzzReport::Found{result.run, result.trace->name, describe_batch(*result.trace),
                                       to_string(result.violation->property), result.violation->step,
                                       result.violation->detail, std::nullopt};
  if (rc == kExitRegression && !path.empty()) report.violation->finding = path;
  return write_report(f, report, rc);
}

// --inject, --property and --golden-dir into what each run checks; false after saying why.
bool parse_property_flags(const FuzzFlags& f, PropertyOptions& properties) {
  if (!parse_faults(f.injects, properties.faults)) return false;
  if (!properties.faults.empty() && !f.model) {
    std::cerr << "mlasim fuzz: --inject changes the model's math, so it needs --model\n";
    return false;
  }
  std::vector<std::string> names = f.properties;
  if (names.empty()) {
    names = {kInvariantNoFreshPrefillOnDecodePath, kInvariantStepInvariants};
    if (f.model) names.insert(names.end(), {"same_logits_as_strict", "sparse_equals_dense_within_topk"});
  }
  if (!parse_properties(names, f.model, properties.properties)) return false;
  const bool wants_golden = std::find(properties.properties.begin(), properties.properties.end(),
                                      Property::kMatchesGoldenSplit) != properties.properties.end();
  if (wants_golden != !f.golden_dir.empty()) {
    std::cerr << "mlasim fuzz: --property " << to_string(Property::kMatchesGoldenSplit)
              << (wants_golden ? " needs --golden-dir DIR" : " is the only use of --golden-dir") << "\n";
    return false;
  }
  properties.golden_dir = f.golden_dir;
  return true;
}

int run_fuzz(const FuzzFlags& f) {
  Result<Scenario> base = f.base.empty() ? load_scenario_text(kDefaultBase, "<fuzz base>", f.sets)
                                         : load_scenario_file(f.base, f.sets);
  if (!base) {
    std::cerr << base.error().format() << "\n";
    return kExitBadInput;
  }
  FuzzOptions options;
  options.seed = f.seed;
  options.max_runs = f.runs_given || f.seconds == 0 ? f.runs : std::numeric_limits<int>::max();
  options.max_seconds = f.seconds;
  std::optional<Shard> shard;
  if (!parse_jobs_and_shard(f.jobs, f.shard, options.jobs, shard)) return kExitBadInput;
  if (shard) options.shard = *shard;
  TraceDistribution& d = options.distribution;
  d.base = base.value();
  d.max_requests = f.max_requests;
  if (!parse_vary(f, d.vary)) return kExitBadInput;
  if (!parse_property_flags(f, options.properties)) return kExitBadInput;
  if (!output_path_ok("--json", f.json_path)) return kExitBadInput;
  if (!f.json_path.empty() && (!f.emit.empty() || !f.record_golden.empty())) {
    std::cerr << "mlasim fuzz: --json reports a checking campaign; --emit and --record-golden check nothing\n";
    return kExitBadInput;
  }
  if (!f.emit.empty()) {
    if (!f.properties.empty() || f.model || !f.record_golden.empty() || f.seconds > 0) {
      std::cerr << "mlasim fuzz: --emit writes --runs traces and checks nothing; drop --property, --model, --time and "
                   "--record-golden\n";
      return kExitBadInput;
    }
    std::string origin = "drawn by mlasim fuzz --seed " + std::to_string(f.seed);
    for (const std::string& v : f.vary) origin += " --vary " + v;
    for (const std::string& s : f.sets) origin += " --set " + s;
    return emit_traces(options, f.emit, origin);
  }
  if (!f.record_golden.empty()) {
    if (!f.properties.empty() || f.model) {
      std::cerr << "mlasim fuzz: --record-golden writes goldens and checks nothing; drop --property and --model\n";
      return kExitBadInput;
    }
    return record_goldens(options, f.record_golden);
  }

  return run_campaign(f, options);
}

}  // namespace

void add_fuzz_command(CLI::App& app, int& exit_code) {
  auto f = std::make_shared<FuzzFlags>();
  CLI::App* cmd = app.add_subcommand(
      "fuzz",
      "Replay random traces drawn from a seeded distribution and check properties on every run. The\n"
      "first violation is shrunk (fewer requests, shorter prompts and outputs, earlier arrivals, keys\n"
      "back to their defaults, lower budgets) and, with -o DIR, written as DIR/fuzz_<seed>_<run>.yaml:\n"
      "a scenario with a one-line comment and an expect: block, that `mlasim check` fails.\n"
      "The engine profile and backend come from BASE_SCENARIO or --set; --vary draws them too.\n"
      "The output is the same for the same seed and flags (with --time, the number of runs may differ).\n\n"
      "Properties (--property, repeatable; default: the first two, and with --model same_logits_as_strict\n"
      "and sparse_equals_dense_within_topk):\n" +
          properties_help() + "\n" + describe_distribution() +
          "\nExit 0 no violation, 1 a violation (shrunk, and written with -o), 2 bad input, 3 an output that could\n"
          "not be written (a full disk, a read-only file system).\n"
          "Examples: mlasim fuzz --set engine.attention_backend=flashinfer-mla --runs 500 -o /tmp/found\n"
          "          mlasim fuzz --seed 3 --runs 2000 --record-golden /tmp/fz   (then, with another build:)\n"
          "          mlasim fuzz --seed 3 --runs 2000 --property matches_golden_split --golden-dir /tmp/fz\n"
          "          mlasim fuzz --set engine.profile=strict --vary backend --vary spec --runs 2000\n"
          "          mlasim fuzz --model --inject decode_skips_cache_write_for_fresh_rows --runs 50");
  cmd->add_option("base", f->base, "Base scenario: model, engine and scheduler (default: every key at its default)");
  cmd->add_option("--set", f->sets, "Override a base key (repeatable); pins its knob, and the shrinker keeps it")->type_name("KEY=VALUE");
  cmd->add_option("--vary", f->vary, "Knob to draw (repeatable): all, none, profile, backend, spec, chunked, thresholds, budgets, blocks, prefix-caching, decode-threshold, policy, sampling, spec-method, reserve")
      ->type_name("KNOB");
  cmd->add_option("--property", f->properties, "Property to check (repeatable)")->type_name("NAME");
  cmd->add_option("--seed", f->seed, "Seed of the distribution (default 0)")->check(seed_validator());
  CLI::Option* runs = cmd->add_option("--runs", f->runs, "Traces at most (default 1000; no limit with --time alone)")
                          ->check(CLI::Range(1, 1 << 30));
  cmd->add_option("--time", f->seconds, "Seconds at most (default: no limit; at most a year)")
      ->type_name("S")
      ->check(seconds_validator(365.0 * 24 * 3600));
  cmd->add_option("--max-requests", f->max_requests, "Requests per trace at most (default 8)")->check(CLI::Range(1, 64));
  cmd->add_flag("--model", f->model, "Run the MLA model too (fp64 CPU reference) for same_logits_as_strict");
  cmd->add_option("--inject", f->injects, "Inject a fault into the model (repeatable; see `mlasim run --help`)");
  cmd->add_option("-o,--out-dir", f->out_dir, "Write the shrunk violation as DIR/<name>.yaml");
  cmd->add_option("--json", f->json_path,
                  "Write the campaign's result as JSON to FILE: the runs replayed and the lowest violating run\n"
                  "(`mlasim merge` joins the --shard reports into the one an unsharded campaign writes)");
  cmd->add_option("--golden-dir", f->golden_dir, "Split goldens for matches_golden_split (DIR/<trace>/split.txt)")
      ->type_name("DIR");
  cmd->add_option("--emit", f->emit, "Write every run's trace as DIR/fuzz_<seed>_<run>.yaml and check nothing")
      ->type_name("DIR");
  cmd->add_option("-j,--jobs", f->jobs,
                  "Threads replaying runs at once (default 0: one per hardware thread); the output is the same for\n"
                  "any N: the violation of the lowest run number")
      ->type_name("N");
  cmd->add_option("--shard", f->shard,
                  "Replay only the runs r with r % N == I (0 <= I < N), so N machines share a campaign; the\n"
                  "lowest violating run among the shards is the one a single run reports; auto: the shard a Slurm\n"
                  "job array, a Kubernetes Indexed Job (JOB_COMPLETION_INDEX, MLASIM_TOTAL_SHARDS) or\n"
                  "GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS names (`mlasim check --help`)")
      ->type_name("I/N|auto");
  cmd->add_option("--record-golden", f->record_golden,
                  "Write every run's split golden as DIR/fuzz_<seed>_<run>/split.txt and check nothing")
      ->type_name("DIR");
  cmd->callback([f, runs, &exit_code] {
    f->runs_given = runs->count() > 0;
    exit_code = run_fuzz(*f);
  });
}

}  // namespace mlasim::cli
