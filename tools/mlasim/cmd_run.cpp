// `mlasim run SCENARIO`: replay one scenario step by step.
#include <iostream>
#include <memory>
#include <optional>

#include "model/mla_weights.h"
#include "engine/engine.h"
#include "engine/replay.h"
#include "verify/replay_diff.h"
#include "harness/command_rows.h"
#include "harness/replay_session.h"
#include "output/scenario_printer.h"
#include "output/timeline.h"
#include "output/timeline_svg.h"
#include "config/scenario_deployment.h"
#include "scenario/scenario_loader.h"
#include "tools/mlasim/cli_backend.h"
#include "tools/mlasim/commands.h"

namespace mlasim::cli {
namespace {

struct RunOptions {
  std::string scenario;
  RunOutputOptions outputs;
  std::string table = "auto";
  std::string trace_clock = "simulated";
  std::string device = "cpu";
  int tp = 0;
  bool dry_run = false;
  std::string compare_profile;
  std::vector<std::string> compare_sets;
  std::vector<std::string> injects;
  std::vector<std::string> sets;
};

// The flag combinations `mlasim run` refuses: "" or the message. `compare`: --compare-profile or
// --compare-set.
std::string run_flag_conflict(const RunOutputOptions& o, bool dry_run, bool compare, bool faults) {
  if (dry_run && (!o.logits_dir.empty() || faults))
    return "mlasim run: --dry-run skips the model, so --logits-dir and --inject do not apply";
  if (compare && (!o.json_path.empty() || !o.jsonl_path.empty() || !o.logits_dir.empty() || !o.trace_path.empty()))
    return "mlasim run: --compare-profile and --compare-set print the differences of two replays (and draw them\n"
           "with --svg); they write no --json, --jsonl, --logits-dir or --trace-out: run those without them";
  if (compare && !o.resolved_path.empty())
    return "mlasim run: --compare-profile and --compare-set replay the scenario twice;\n"
           "--resolved writes the trace of one replay: run it without them";
  return "";
}

// --set's overrides, then --tp's.
std::vector<std::string> run_sets(const RunOptions& o) {
  std::vector<std::string> sets = o.sets;
  if (o.tp > 0) sets.push_back("parallel.tensor_parallel_size=" + std::to_string(o.tp));
  return sets;
}

// The second replay of a comparison: the scenario with --compare-profile's profile and the
// --compare-set overrides on top of its --set ones.
struct Comparison {
  Scenario b;
  std::string name_a, name_b;
  bool profiles_only = false;  // --compare-profile alone: the names are profiles
};

// Replays `scenario` and `c.b` (in fp64 unless `dry_run`) and prints the differences; with
// `svg_path`, draws the two timelines one above the other.
int compare_replays(const std::string& scenario_path, const Scenario& scenario, const Comparison& c, bool dry_run,
                    const FaultSet& faults, const std::string& svg_path) {
  ReplayOptions options;
  options.with_model = !dry_run;
  options.precision = CpuPrecision::kDouble;  // so only the routing, not float rounding, can differ
  options.faults = faults;
  // Each replay may stop where vLLM's scheduler cannot go on (VllmCannotRun): exit 4, as `run`,
  // naming the scenario, the side and the stop.
  auto replay_or_stop = [&](const Scenario& s, const std::string& name, std::optional<RunRecord>& record) {
    try {
      record.emplace(replay(s, options));
      return true;
    } catch (const VllmCannotRun& e) {
      std::cerr << scenario_path << ": vLLM cannot run this trace (" << (c.profiles_only ? "profile " : "") << name
                << "): " << e.what() << "\n";
      return false;
    }
  };
  std::optional<RunRecord> record_a, record_b;
  if (!replay_or_stop(scenario, c.name_a, record_a) || !replay_or_stop(c.b, c.name_b, record_b))
    return kExitVllmCannotRun;
  const RunRecord& ra = *record_a;
  const RunRecord& rb = *record_b;
  std::cout << diff_replays(ra, rb, c.name_a, c.name_b, logits_tolerance(PrecisionClass::kFp64)).text;
  if (!svg_path.empty()) {
    Timeline ta(scenario, scenario.name + " \u00b7 " + c.name_a);
    Timeline tb(c.b, scenario.name + " \u00b7 " + c.name_b);
    ta.on_start(ra.names);
    tb.on_start(rb.names);
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

// The comparison's second scenario, or nullopt after printing why (exit 2).
std::optional<Comparison> load_comparison(const RunOptions& o, const Scenario& a) {
  Comparison c;
  std::vector<std::string> b_sets = run_sets(o);
  b_sets.insert(b_sets.end(), o.compare_sets.begin(), o.compare_sets.end());
  Result<Scenario> loaded = load_scenario_file(o.scenario, b_sets);
  if (!loaded) {
    Error e = loaded.error();
    // An override's errors name it as the flag the user wrote.
    for (const std::string& set : o.compare_sets)
      if (e.file == "<--set " + set + ">") e.file = "<--compare-set " + set + ">";
    std::cerr << e.format() << "\n";
    return std::nullopt;
  }
  c.b = std::move(loaded.value());
  for (const std::string& note : c.b.model.hf_config_notes) std::cerr << "note (--compare-set): " << note << "\n";
  if (!o.compare_profile.empty()) {
    std::optional<EngineProfile> profile = parse_engine_profile(o.compare_profile);
    if (!profile) {
      std::cerr << "--compare-profile: unknown engine profile \"" << o.compare_profile
                << "\"\n  hint: vllm-2025-early | vllm-0.11 | vllm-0.12 | vllm-3region | vllm-current | strict | "
                   "sglang\n";
      return std::nullopt;
    }
    c.b.engine.profile = *profile;
  }
  if (!o.dry_run) {
    if (Status st = model_memory_check(c.b, CpuPrecision::kDouble); !st) {
      std::cerr << st.error().format() << "\n";
      return std::nullopt;
    }
  }
  if (o.compare_sets.empty()) {
    c.name_a = to_string(a.engine.profile);
    c.name_b = o.compare_profile;
    c.profiles_only = true;
    return c;
  }
  c.name_a = "as written";
  c.name_b = "with ";
  for (std::size_t i = 0; i < o.compare_sets.size(); ++i) c.name_b += (i ? ", " : "") + o.compare_sets[i];
  if (!o.compare_profile.empty()) c.name_b += ", profile " + o.compare_profile;
  return c;
}

// Loads the scenario and checks the flags against it; nullopt after printing why.
std::optional<Scenario> load_for_run(const RunOptions& o, FaultSet& faults, int& rc) {
  rc = kExitBadInput;
  Result<Scenario> loaded = load_scenario_file(o.scenario, run_sets(o));
  if (!loaded) {
    std::cerr << loaded.error().format() << "\n";
    return std::nullopt;
  }
  for (const std::string& note : loaded.value().model.hf_config_notes) std::cerr << "note: " << note << "\n";
  if (rc = check_device(o.device); rc != kExitOk) return std::nullopt;
  rc = kExitBadInput;
  if (!output_path_ok("--json", o.outputs.json_path) || !output_path_ok("--jsonl", o.outputs.jsonl_path) ||
      !output_path_ok("--resolved", o.outputs.resolved_path) ||
      !output_path_ok("--svg", o.outputs.svg_path) || !output_path_ok("--trace-out", o.outputs.trace_path) ||
      !parse_faults(o.injects, faults))
    return std::nullopt;
  const auto& out = o.outputs;
  if (!outputs_distinct({{"--json", out.json_path}, {"--jsonl", out.jsonl_path}, {"--resolved", out.resolved_path},
                         {"--svg", out.svg_path}, {"--trace-out", out.trace_path}},
                        {{"the scenario file", o.scenario}, {"the requests file", loaded.value().requests_file},
                         {"the model's config (model.hf_config)", loaded.value().model.hf_config}}))
    return std::nullopt;
  const bool compare = !o.compare_profile.empty() || !o.compare_sets.empty();
  if (std::string why = run_flag_conflict(o.outputs, o.dry_run, compare, !faults.empty());
      !why.empty()) {
    std::cerr << why << "\n";
    return std::nullopt;
  }
  if (!o.dry_run) {
    // A comparison replays in fp64; the CUDA backend's host side holds the float weights.
    const CpuPrecision precision = compare ? CpuPrecision::kDouble : CpuPrecision::kFloat;
    if (Status st = model_memory_check(loaded.value(), precision); !st) {
      std::cerr << st.error().format() << "\n";
      return std::nullopt;
    }
  }
  rc = kExitOk;
  return std::move(loaded.value());
}

// The replay of `run`: a session asking for run's rows, its verdicts printed, its files published.
int replay_run(const RunOptions& o, const Scenario& scenario, const FaultSet& faults) {
  ReplayOptions replay;
  replay.with_model = !o.dry_run;
  replay.faults = faults;
  replay.make_backend = [device = o.device](const MlaWeights& w, const Scenario& s, const FaultSet& f) {
    return make_backend(device, w, s, f);
  };
  ReplaySession session(scenario, run_rows(o.outputs), std::cout);
  if (Status st = session.start(replay); !st) return report_error(st.error());
  std::optional<VllmCannotRun> stopped;
  try {
    stopped = session.run(/*finish_at_vllm_stop=*/true);  // the replay ends where vLLM's does; the outputs say so
  } catch (const RequestStreamError& e) {
    std::cerr << e.error.format() << "\n";
    return kExitBadInput;
  }
  const int rc = session.print_verdicts() ? kExitOk : kExitRegression;
  if (Status st = session.publish(); !st) return report_error(st.error());
  if (stopped) {
    std::cerr << o.scenario << ": vLLM cannot run this trace: " << stopped->what() << "\n";
    return kExitVllmCannotRun;
  }
  return rc;
}

int run(RunOptions& o) {
  o.outputs.table = *parse_table_mode(o.table);
  o.outputs.trace_clock = o.trace_clock == "step" ? TraceClock::kStep : TraceClock::kSimulated;
  FaultSet faults;
  int rc = kExitOk;
  const std::optional<Scenario> loaded = load_for_run(o, faults, rc);
  if (!loaded) return rc;
  const Scenario& scenario = *loaded;
  if (!o.compare_profile.empty() || !o.compare_sets.empty()) {
    const std::optional<Comparison> c = load_comparison(o, scenario);
    if (!c) return kExitBadInput;
    return compare_replays(o.scenario, scenario, *c, o.dry_run, faults, o.outputs.svg_path);
  }
  if (!o.dry_run) {
    if (std::string why = backend_support_error(o.device, scenario, faults); !why.empty()) {
      std::cerr << "mlasim run: --device " << o.device << " cannot run this scenario: " << why << "\n";
      return kExitBadInput;
    }
  }
  if (o.outputs.table != TableMode::kNone) std::cout << describe_scenario(scenario) << "\n";
  if (o.outputs.explain) std::cout << "deployment chain (vLLM 0.33.0):\n" << explain_deployment(scenario) << "\n";
  return replay_run(o, scenario, faults);
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
  cmd->add_option("--json", o->outputs.json_path, "Write the run record as JSON to FILE (atomically, streamed as it runs)");
  cmd->add_option("--jsonl", o->outputs.jsonl_path,
                  "Write the run as JSONL to FILE (atomically): a header line, one object per step, then one per\n"
                  "request in scenario order, with simulated times; for traces too big for one document");
  cmd->add_option("--resolved", o->outputs.resolved_path,
                  "Write the trace as the replay ran it to FILE (JSONL, atomically): the resolved configuration,\n"
                  "then each request as admitted, with its prompt token ids, sampling parameters, forced outputs,\n"
                  "accepted drafts and admission step; what tools/conformance replays through vLLM");
  cmd->add_option("--svg", o->outputs.svg_path,
                  "Draw the run's timeline to FILE (one self-contained SVG, atomically): a lane per request, a cell\n"
                  "per step coloured by its path (a fresh prefill on the decode path in red, outlined), num_mqa /\n"
                  "num_mha and free KV blocks above; hover a cell for q, nct, P, path and reason. With\n"
                  "--compare-profile or --compare-set, both replays' timelines one above the other");
  cmd->add_option("--trace-out", o->outputs.trace_path,
                  "Write a Chrome/Perfetto trace (Trace Event JSON, streamed, atomically) to FILE: a track per\n"
                  "request, a slice per scheduled step, counters for the split, queues and free blocks. Open it\n"
                  "in https://ui.perfetto.dev or chrome://tracing");
  cmd->add_option("--trace-clock", o->trace_clock,
                  "Time axis of --trace-out: simulated (the scenario's timing model, default) or step (1 ms per step)")
      ->check(CLI::IsMember({"simulated", "step"}));
  cmd->add_option("--table", o->table,
                  "What to print: auto (every step for runs up to 500 steps, else the summary), full, summary, none")
      ->check(CLI::IsMember({"auto", "full", "summary", "none"}));
  cmd->add_option("--logits-dir", o->outputs.logits_dir, "Write logits.npy and logits_index.json to DIR");
  cmd->add_option("--device", o->device, "Backend for the model: cpu (reference) or cuda")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  cmd->add_option("--tp", o->tp, "Tensor-parallel size, overriding parallel.tensor_parallel_size (1..8)")
      ->check(CLI::Range(1, 8));
  cmd->add_flag("--dry-run", o->dry_run, "Scheduler and routing only; skip the model");
  cmd->add_flag("--explain", o->outputs.explain, "Say for each row why it took its path");
  cmd->add_option("--compare-profile", o->compare_profile,
                  "Replay under the scenario's profile and profile P (both fp64) and show where the splits\n"
                  "differ and whether the logits do");
  cmd->add_option("--compare-set", o->compare_sets,
                  "Replay a second time with this override too (repeatable; as --set, paths relative to the\n"
                  "scenario file) and show both splits side by side and the logits difference (both fp64): max\n"
                  "abs/rel, top-1 mismatches, the first differing step and row. E.g. --compare-set\n"
                  "model.index_topk=null (a loader that drops index_topk), --compare-set\n"
                  "model.hf_config=other.json");
  cmd->add_option("--inject", o->injects,
                  "Inject a known fault into the backend (repeatable): decode_skips_cache_write_for_fresh_rows,\n"
                  "decode_scale_1_over_sqrt_576, rope_neox_instead_of_interleaved, kv_norm_dropped,\n"
                  "w_uk_transposed, chunk_lse_merge_wrong, topk_off_by_one (sparse models),\n"
                  "fp8_dequant_scale_wrong (fp8 KV caches)");
  cmd->add_option("--golden-dir", o->outputs.golden_dir, "Where to find golden/<name>/ for the logits comparison");
  cmd->add_option("--set", o->sets, "Override a scenario key, e.g. --set engine.profile=strict (repeatable)");
  add_cpu_threads_option(cmd);
  cmd->callback([o, &exit_code] { exit_code = run(*o); });
}

}  // namespace mlasim::cli
