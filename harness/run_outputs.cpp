// The outputs of one `mlasim run`, as sinks of its Engine.
#include "harness/run_outputs.h"

#include <cstdio>
#include <functional>
#include <utility>
#include <vector>

#include "base/output_set.h"
#include "output/timeline_svg.h"

namespace mlasim {

std::string run_flag_conflict(const RunOutputOptions& o, bool dry_run, bool compare_profile, bool faults) {
  if (dry_run && (!o.logits_dir.empty() || compare_profile || faults))
    return "mlasim run: --dry-run skips the model, so --logits-dir, --compare-profile and --inject do not apply";
  if (compare_profile && (!o.json_path.empty() || !o.jsonl_path.empty() || !o.logits_dir.empty() || !o.trace_path.empty()))
    return "mlasim run: --compare-profile prints the differences of two fp64 replays (and draws them with\n"
           "--svg); it writes no --json, --jsonl, --logits-dir or --trace-out: run those without it";
  if (compare_profile && !o.resolved_path.empty())
    return "mlasim run: --compare-profile replays the scenario under two profiles; --resolved writes the trace of\n"
           "one replay: run it without --compare-profile";
  return "";
}

RunOutputs::RunOutputs(const Scenario& scenario, const RunOutputOptions& options, std::ostream& out)
    : scenario_(scenario),
      options_(options),
      out_(out),
      summary_(scenario),
      printer_(out, options.table, options.explain, summary_),
      checker_(scenario),
      progress_(stderr, scenario.num_requests),
      trace_(options.trace_clock),
      timeline_(scenario, scenario.name + " \u00b7 profile " + to_string(scenario.engine.profile)) {}

Status RunOutputs::open(const Backend* backend) {
  backend_ = backend;
  // What a killed run left beside these outputs: its published set completed, its temporaries gone.
  std::vector<std::string> targets = {options_.json_path, options_.jsonl_path, options_.trace_path,
                                      options_.resolved_path, options_.svg_path};
  if (!options_.logits_dir.empty())
    for (const char* leaf : {"/logits.npy", "/logits_index.json"}) targets.push_back(options_.logits_dir + leaf);
  std::erase(targets, std::string());
  for (const std::string& note : recover_output_leftovers(targets)) std::fprintf(stderr, "note: %s\n", note.c_str());
  if (backend) {
    if (Status st = golden_.emplace().open(options_.golden_dir, scenario_); !st) return st;
    golden_->start(backend->precision());
  }
  const std::string& dir = options_.logits_dir;
  if (!dir.empty()) {
    if (Status st = logits_dir_.create(dir); !st) return st;
    if (Status st = logits_files_.open(dir, scenario_.model.vocab_size); !st) return st;
  }
  logits_.emplace(golden_ ? &*golden_ : nullptr, dir.empty() ? nullptr : &logits_files_);
  const std::string& name = scenario_.name;
  if (!options_.json_path.empty())
    if (Status st = json_.open(options_.json_path, name); !st) return st;
  if (!options_.jsonl_path.empty())
    if (Status st = jsonl_.open(options_.jsonl_path, name); !st) return st;
  if (!options_.trace_path.empty())
    if (Status st = trace_.open(options_.trace_path, name); !st) return st;
  if (!options_.resolved_path.empty())
    if (Status st = resolved_.open(options_.resolved_path, scenario_, make_routing_config(scenario_)); !st) return st;
  return Status::Ok();
}

void RunOutputs::attach(Engine& engine) {
  engine.add_sink(&summary_);
  engine.add_sink(&printer_);
  engine.add_sink(&checker_);
  if (progress_.enabled()) engine.add_sink(&progress_);
  if (backend_) engine.add_sink(&*logits_);
  if (!options_.json_path.empty()) engine.add_sink(&json_);
  if (!options_.jsonl_path.empty()) engine.add_sink(&jsonl_);
  if (!options_.trace_path.empty()) engine.add_sink(&trace_);
  if (!options_.resolved_path.empty()) engine.add_sink(&resolved_);
  if (!options_.svg_path.empty()) engine.add_sink(&timeline_);
}

bool RunOutputs::report() {
  bool pass = true;
  const std::vector<ExpectationFailure>& failures = checker_.failures();
  if (int n = count_expectation_checks(scenario_); n > 0) {
    if (failures.empty()) out_ << "expect: all " << n << " checks hold\n";
    for (const auto& f : failures) out_ << f.format() << "\n";
  }
  if (!failures.empty()) pass = false;
  if (!backend_) return pass;
  out_ << "logits: " << logits_->rows() << " rows x " << logits_->vocab_size() << " from " << backend_->name() << "\n";
  const LogitsGoldenVerdict golden = golden_->finish();
  if (!golden.stale.empty())
    out_ << "vs " << golden.dir << ": " << golden.stale << "\n";
  else if (golden.check)
    out_ << "vs " << golden.dir << ": " << golden.check->message << "\n";
  return pass && golden.pass();
}

Status RunOutputs::publish() {
  std::vector<std::function<Status()>> finish;
  std::vector<AtomicOutputFile*> files;
  auto add = [&](const std::string& path, std::function<Status()> f, AtomicOutputFile& file) {
    if (path.empty()) return;
    finish.push_back(std::move(f));
    files.push_back(&file);
  };
  add(options_.json_path, [&] { return json_.finish(); }, json_.output());
  add(options_.jsonl_path, [&] { return jsonl_.finish(); }, jsonl_.output());
  add(options_.trace_path, [&] { return trace_.finish(); }, trace_.output());
  add(options_.resolved_path, [&] { return resolved_.finish(); }, resolved_.output());
  add(
      options_.svg_path,
      [&] {
        if (Status st = svg_file_.open(options_.svg_path); !st) return st;
        svg_file_.write(timeline_svg_document({&timeline_}));
        return svg_file_.finish();
      },
      svg_file_);
  if (!options_.logits_dir.empty()) {
    finish.push_back([&] { return logits_files_.finish(); });
    for (AtomicOutputFile* f : logits_files_.outputs()) files.push_back(f);
  }
  for (auto& f : finish)
    if (Status st = f(); !st) return st;
  if (Status st = publish_together(files); !st) return st;
  logits_dir_.keep();
  if (!options_.logits_dir.empty()) out_ << "wrote " << options_.logits_dir << "/logits.npy and logits_index.json\n";
  return Status::Ok();
}

}  // namespace mlasim
