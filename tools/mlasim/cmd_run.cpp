// `mlasim run SCENARIO`: replay one scenario step by step.
#include <iostream>

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>

#include "attention/cpu_backend.h"
#include "attention/mla_weights.h"
#include "sim/scenario_loader.h"
#include "tools/harness/logits_golden.h"
#include "tools/harness/logits_stream.h"
#include "tools/harness/profile_diff.h"
#include "tools/harness/replay.h"
#include "tools/harness/atomic_file.h"
#include "tools/harness/engine.h"
#include "tools/harness/expectations.h"
#include "tools/harness/run_json.h"
#include "tools/harness/scenario_printer.h"
#include "tools/harness/progress_line.h"
#include "tools/harness/run_json_sink.h"
#include "tools/harness/run_summary.h"
#include "tools/harness/step_table_sink.h"
#include "tools/harness/timeline.h"
#include "tools/harness/timeline_svg.h"
#include "tools/harness/trace_event_sink.h"
#include "tools/mlasim/cli_backend.h"
#include "sim/scenario_deployment.h"
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
  std::string table = "auto";
  std::string jsonl_path;
  std::string svg_path;
  std::string trace_path;
  std::string trace_clock = "simulated";
};

// Replays under the scenario's profile and `other` in fp64 and prints the differences; with
// `svg_path`, draws the two timelines one above the other.
int compare_profiles(const Scenario& scenario, const std::string& other, const FaultSet& faults,
                     const std::string& svg_path) {
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
  const ProfileDiff d = diff_profiles(ra, rb, to_string(scenario.engine.profile), other, logits_tolerance(PrecisionClass::kFp64));
  std::cout << d.text;
  if (!svg_path.empty()) {
    Timeline ta(scenario, scenario.name + " \u00b7 profile " + to_string(scenario.engine.profile));
    Timeline tb(b, scenario.name + " \u00b7 profile " + other);
    for (const StepRecord& s : ra.steps) ta.on_step(s);
    for (const StepRecord& s : rb.steps) tb.on_step(s);
    if (Status st = write_timeline_svg(svg_path, {&ta, &tb}); !st) {
      std::cerr << st.error().format() << "\n";
      return kExitBadInput;
    }
    std::cout << "wrote " << svg_path << "\n";
  }
  return kExitOk;
}

// --logits-dir, created when missing and removed again (when still empty) unless the run kept it:
// a failed run leaves no folder behind.
class CreatedDirectory {
 public:
  ~CreatedDirectory() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove(path_, ignored);
  }
  Status create(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::create_directories(path, ec)) path_ = path;
    if (!ec) return Status::Ok();
    Error e{path, 0, 0, "", "cannot create the directory: " + ec.message(), output_errno_hint(ec.value())};
    e.output = is_output_errno(ec.value());
    return Status(e);
  }
  void keep() { path_.clear(); }

 private:
  std::string path_;
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
  if (!output_path_ok("--json", o.json_path) || !output_path_ok("--jsonl", o.jsonl_path) ||
      !output_path_ok("--svg", o.svg_path) || !output_path_ok("--trace-out", o.trace_path))
    return kExitBadInput;
  FaultSet faults;
  if (!parse_faults(o.injects, faults)) return kExitBadInput;
  if (o.dry_run && (!o.logits_dir.empty() || !o.compare_profile.empty() || !faults.empty())) {
    std::cerr << "mlasim run: --dry-run skips the model, so --logits-dir, --compare-profile and --inject do not apply\n";
    return kExitBadInput;
  }
  if (!o.compare_profile.empty() &&
      (!o.json_path.empty() || !o.jsonl_path.empty() || !o.logits_dir.empty() || !o.trace_path.empty())) {
    std::cerr << "mlasim run: --compare-profile prints the differences of two fp64 replays (and draws them with\n"
                 "--svg); it writes no --json, --jsonl, --logits-dir or --trace-out: run those without it\n";
    return kExitBadInput;
  }
  const Scenario& scenario = loaded.value();
  if (!o.dry_run) {
    // --compare-profile replays in fp64; the CUDA backend's host side holds the float weights.
    const CpuPrecision precision = o.compare_profile.empty() ? CpuPrecision::kFloat : CpuPrecision::kDouble;
    if (Status st = model_memory_check(scenario, precision); !st) {
      std::cerr << st.error().format() << "\n";
      return kExitBadInput;
    }
  }
  if (!o.compare_profile.empty()) return compare_profiles(scenario, o.compare_profile, faults, o.svg_path);

  if (!o.dry_run) {
    if (std::string why = backend_support_error(o.device, scenario, faults); !why.empty()) {
      std::cerr << "mlasim run: --device " << o.device << " cannot run this scenario: " << why << "\n";
      return kExitBadInput;
    }
  }
  const TableMode table = *parse_table_mode(o.table);
  if (table != TableMode::kNone) std::cout << describe_scenario(scenario) << "\n";
  if (o.explain) std::cout << "deployment chain (vLLM 0.33.0):\n" << explain_deployment(scenario) << "\n";
  std::optional<MlaWeights> weights;
  std::unique_ptr<Backend> backend;
  EngineOptions engine_options;
  if (!o.dry_run) {
    weights.emplace(seeded_weights(scenario.model));
    backend = make_backend(o.device, *weights, scenario, faults);
    engine_options.backend = backend.get();
  }
  // The sinks: the summary first (the table printer reads it at the end).
  Engine engine(scenario, engine_options);
  RunSummary summary(scenario);
  StepTablePrinter printer(std::cout, table, o.explain, summary);
  ExpectationChecker checker(scenario);
  ProgressLine progress(stderr, scenario.num_requests);
  // The logits, step by step: compared with the golden and written to --logits-dir as they come.
  const std::string golden = o.golden_dir + "/" + scenario.name;
  std::optional<LogitsGolden> golden_files;
  std::optional<LogitsGoldenCheck> golden_check;
  if (backend && std::filesystem::exists(golden + "/logits.npy")) {
    Result<LogitsGolden> files = read_logits_golden(golden, scenario);
    if (!files) {
      std::cerr << files.error().format() << "\n";
      return kExitBadInput;
    }
    golden_files.emplace(std::move(files.value()));
    if (golden_files->stale.empty())
      golden_check.emplace(golden_files->files, logits_tolerance(backend->precision()), golden);
  }
  CreatedDirectory logits_dir;  // declared first: removed after the files' temporaries are
  LogitsFilesStream logits_files;
  if (!o.logits_dir.empty()) {
    if (Status st = logits_dir.create(o.logits_dir); !st) return report_error(st.error());
    if (Status st = logits_files.open(o.logits_dir, scenario.model.vocab_size); !st) return report_error(st.error());
  }
  LogitsStreamSink logits(golden_check ? &*golden_check : nullptr, o.logits_dir.empty() ? nullptr : &logits_files);
  RunFileSink json(RunFileFormat::kJson);
  RunFileSink jsonl(RunFileFormat::kJsonl);
  TraceEventSink trace(o.trace_clock == "step" ? TraceClock::kStep : TraceClock::kSimulated);
  Timeline timeline(scenario, scenario.name + " \u00b7 profile " + to_string(scenario.engine.profile));
  for (auto [path, open] : {std::pair<const std::string*, std::function<Status()>>{
                                &o.json_path, [&] { return json.open(o.json_path, scenario.name); }},
                            {&o.jsonl_path, [&] { return jsonl.open(o.jsonl_path, scenario.name); }},
                            {&o.trace_path, [&] { return trace.open(o.trace_path, scenario.name); }}}) {
    if (path->empty()) continue;
    if (Status st = open(); !st) {
      std::cerr << st.error().format() << "\n";
      return kExitBadInput;
    }
  }
  engine.add_sink(&summary);
  engine.add_sink(&printer);
  engine.add_sink(&checker);
  if (progress.enabled()) engine.add_sink(&progress);
  if (backend) engine.add_sink(&logits);
  if (!o.json_path.empty()) engine.add_sink(&json);
  if (!o.jsonl_path.empty()) engine.add_sink(&jsonl);
  if (!o.trace_path.empty()) engine.add_sink(&trace);
  if (!o.svg_path.empty()) engine.add_sink(&timeline);
  try {
    engine.run_to_end();
  } catch (const RequestStreamError& e) {
    std::cerr << e.error.format() << "\n";
    return kExitBadInput;
  }
  int rc = kExitOk;
  const std::vector<ExpectationFailure>& failures = checker.failures();
  if (int n = count_expectation_checks(scenario); n > 0) {
    if (failures.empty()) std::cout << "expect: all " << n << " checks hold\n";
    for (const auto& f : failures) std::cout << f.format() << "\n";
  }
  if (!failures.empty()) rc = kExitRegression;
  if (backend) {
    std::cout << "logits: " << logits.rows() << " rows x " << logits.vocab_size() << " from " << backend->name() << "\n";
    if (golden_files && !golden_files->stale.empty()) {
      std::cout << "vs " << golden << ": " << golden_files->stale << "\n";
      rc = kExitRegression;
    } else if (golden_check) {
      const LogitsCheck lc = golden_check->finish();
      std::cout << "vs " << golden << ": " << lc.message << "\n";
      if (!lc.pass) rc = kExitRegression;
    }
  }
  // The outputs as one set: every file written and synced beside its target first, then all
  // renamed into place, so a failure (a full disk) publishes none and leaves what the user had.
  AtomicOutputFile svg_file;
  std::vector<std::pair<std::function<Status()>, std::function<Status()>>> outputs;  // finish, publish
  if (!o.json_path.empty()) outputs.emplace_back([&] { return json.finish(); }, [&] { return json.publish(); });
  if (!o.jsonl_path.empty()) outputs.emplace_back([&] { return jsonl.finish(); }, [&] { return jsonl.publish(); });
  if (!o.trace_path.empty()) outputs.emplace_back([&] { return trace.finish(); }, [&] { return trace.publish(); });
  if (!o.svg_path.empty())
    outputs.emplace_back(
        [&] {
          if (Status st = svg_file.open(o.svg_path); !st) return st;
          svg_file.write(timeline_svg_document({&timeline}));
          return svg_file.finish();
        },
        [&] { return svg_file.publish(); });
  if (!o.logits_dir.empty())
    outputs.emplace_back([&] { return logits_files.finish(); }, [&] { return logits_files.publish(); });
  for (auto& [finish, publish] : outputs)
    if (Status st = finish(); !st) return report_error(st.error());
  for (auto& [finish, publish] : outputs)
    if (Status st = publish(); !st) return report_error(st.error());
  logits_dir.keep();
  if (!o.logits_dir.empty()) std::cout << "wrote " << o.logits_dir << "/logits.npy and logits_index.json\n";
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
      "  mlasim run scenarios/seed/lone_one_token_prompt.yaml --set engine.profile=strict --json out.json\n"
      "  mlasim run trace.yaml --dry-run --table summary --jsonl trace.jsonl");
  cmd->add_option("scenario", o->scenario, "Scenario YAML file")->required();
  cmd->add_option("--json", o->json_path, "Write the run record as JSON to FILE (atomically, streamed as it runs)");
  cmd->add_option("--jsonl", o->jsonl_path,
                  "Write the run as JSONL to FILE (atomically): a header line, one object per step, then one per\n"
                  "request in scenario order, with simulated times; for traces too big for one document");
  cmd->add_option("--svg", o->svg_path,
                  "Draw the run's timeline to FILE (one self-contained SVG, atomically): a lane per request, a cell\n"
                  "per step coloured by its path (a fresh prefill on the decode path in red, outlined), num_mqa /\n"
                  "num_mha and free KV blocks above; hover a cell for q, nct, P, path and reason. With\n"
                  "--compare-profile, both profiles' timelines one above the other");
  cmd->add_option("--trace-out", o->trace_path,
                  "Write a Chrome/Perfetto trace (Trace Event JSON, streamed, atomically) to FILE: a track per\n"
                  "request, a slice per scheduled step, counters for the split, queues and free blocks. Open it\n"
                  "in https://ui.perfetto.dev or chrome://tracing");
  cmd->add_option("--trace-clock", o->trace_clock,
                  "Time axis of --trace-out: simulated (the scenario's timing model, default) or step (1 ms per step)")
      ->check(CLI::IsMember({"simulated", "step"}));
  cmd->add_option("--table", o->table,
                  "What to print: auto (every step for runs up to 500 steps, else the summary), full, summary, none")
      ->check(CLI::IsMember({"auto", "full", "summary", "none"}));
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
  add_cpu_threads_option(cmd);
  cmd->callback([o, &exit_code] { exit_code = run(*o); });
}

}  // namespace mlasim::cli
