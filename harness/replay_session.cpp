// The registry of a replay's outputs and the session that opens, steps and publishes them.
#include "harness/replay_session.h"

#include <cstdio>
#include <fstream>
#include <utility>

#include "base/check.h"
#include "base/file_read.h"
#include "base/output_set.h"
#include "output/logits_files.h"
#include "output/timeline_svg.h"
#include "verify/split_golden.h"

namespace mlasim {
namespace {

// A row as the session runs it: how its sink is made (and its golden read, its file opened),
// how the Engine gets it, and how its files are finished for publication.
struct RowOps {
  OutputRowInfo info;
  Status (*open)(ReplaySession&, const std::string& path) = nullptr;
  void (*attach)(ReplaySession&, Engine&) = nullptr;
  // Finishes the row's files beside their targets and adds them to `files` (kSet, kFolder).
  Status (*finish)(ReplaySession&, const std::string& path, std::vector<AtomicOutputFile*>& files) = nullptr;
};

std::string timeline_title(const Scenario& s) { return s.name + " \u00b7 profile " + to_string(s.engine.profile); }

}  // namespace

struct ReplaySession::Rows {
  static const std::vector<RowOps>& table();
  static std::vector<RowOps> reports();
  static std::vector<RowOps> goldens();
  static std::vector<RowOps> files();
  static std::vector<RowOps> kept();
  // --json and --jsonl: a RunFileSink of `format` in the session's `member`.
  template <RunFileFormat format, std::optional<RunFileSink> ReplaySession::*member>
  static RowOps run_file(OutputRow row, const char* name, const char* flag, const char* sink) {
    using S = ReplaySession;
    return {{row, name, flag, sink, "FILE", Publication::kSet},
            [](S& s, const std::string& path) { return (s.*member).emplace(format).open(path, s.scenario_.name); },
            [](S& s, Engine& e) { e.add_sink(&*(s.*member)); },
            [](S& s, const std::string&, std::vector<AtomicOutputFile*>& files) {
              files.push_back(&(s.*member)->output());
              return (s.*member)->finish();
            }};
  }
};

// What the session prints or judges: the table, the expectations, the progress line.
std::vector<RowOps> ReplaySession::Rows::reports() {
  using S = ReplaySession;
  return {
      {{OutputRow::kStepTable, "step_table", "--table", "RunSummary, StepTablePrinter", "", Publication::kStdout},
       [](S& s, const std::string&) {
         s.summary_.emplace(s.scenario_);
         s.printer_.emplace(s.out_, s.request_.table, s.request_.explain, *s.summary_);
         return Status::Ok();
       },
       [](S& s, Engine& e) {
         e.add_sink(&*s.summary_);  // first: the table printer reads it at the end
         e.add_sink(&*s.printer_);
       }},
      {{OutputRow::kExpectations, "expectations", "", "ExpectationChecker", "", Publication::kStdout},
       [](S& s, const std::string&) {
         s.expectations_.emplace(s.scenario_);
         return Status::Ok();
       },
       [](S& s, Engine& e) { e.add_sink(&*s.expectations_); }},
      {{OutputRow::kProgress, "progress", "", "ProgressLine", "", Publication::kStderr},
       [](S& s, const std::string&) {
         s.progress_.emplace(stderr, s.scenario_.num_requests);
         return Status::Ok();
       },
       [](S& s, Engine& e) {
         if (s.progress_->enabled()) e.add_sink(&*s.progress_);
       }},
  };
}

// The goldens a replay is compared with as it runs.
std::vector<RowOps> ReplaySession::Rows::goldens() {
  using S = ReplaySession;
  return {
      {{OutputRow::kSplitGolden, "split_golden", "--golden-dir", "SplitGoldenChecker", "DIR/<name>/split.txt (read)",
        Publication::kMemory},
       [](S& s, const std::string& dir) {
         const std::string path = split_golden_path(dir, s.scenario_.name);
         s.split_read_ = check_regular_input(path, "the split golden");
         if (s.split_read_ && std::ifstream(path, std::ios::binary)) s.split_.emplace(path, s.scenario_);
         return Status::Ok();
       },
       [](S& s, Engine& e) {
         if (s.split_) e.add_sink(&*s.split_);
       }},
      {{OutputRow::kLogitsGolden, "logits_golden", "--golden-dir", "LogitsGoldenGate in LogitsStreamSink",
        "DIR/<name>/logits.npy (read)", Publication::kStdout},
       [](S& s, const std::string& dir) {
         if (!s.backend_) return Status::Ok();
         if (Status st = s.golden_.emplace().open(dir, s.scenario_); !st) return st;
         s.golden_->start(s.backend_->precision());
         return Status::Ok();
       },
       [](S& s, Engine&) { s.attach_logits(); }},
      {{OutputRow::kLogitsGoldenCheck, "logits_golden_check", "--golden-dir", "LogitsGoldenGate in LogitsStreamSink",
        "DIR/<name>/logits.npy (read)", Publication::kMemory},
       [](S& s, const std::string& dir) {
         if (!s.backend_) return Status::Ok();
         s.golden_read_ = s.golden_.emplace().open(dir, s.scenario_);
         s.golden_->start(s.backend_->precision());
         return Status::Ok();  // an unreadable golden is that check's verdict, after the run
       },
       [](S& s, Engine&) { s.attach_logits(); }},
  };
}

// The files a run writes, streamed beside their targets.
std::vector<RowOps> ReplaySession::Rows::files() {
  using S = ReplaySession;
  using Files = std::vector<AtomicOutputFile*>;
  return {
      {{OutputRow::kLogitsFiles, "logits_files", "--logits-dir", "LogitsFilesStream in LogitsStreamSink",
        "DIR/logits.npy, DIR/logits_index.json", Publication::kFolder},
       [](S& s, const std::string& dir) {
         if (Status st = s.logits_dir_.create(dir); !st) return st;
         return s.logits_files_.open(dir, s.scenario_.model.vocab_size);
       },
       [](S& s, Engine&) { s.attach_logits(); },
       [](S& s, const std::string&, Files& files) {
         for (AtomicOutputFile* f : s.logits_files_.outputs()) files.push_back(f);
         return s.logits_files_.finish();
       }},
      run_file<RunFileFormat::kJson, &S::json_>(OutputRow::kJson, "json", "--json", "RunFileSink (json)"),
      run_file<RunFileFormat::kJsonl, &S::jsonl_>(OutputRow::kJsonl, "jsonl", "--jsonl", "RunFileSink (jsonl)"),
      {{OutputRow::kTraceOut, "trace_out", "--trace-out", "TraceEventSink", "FILE", Publication::kSet},
       [](S& s, const std::string& path) { return s.trace_.emplace(s.request_.trace_clock).open(path, s.scenario_.name); },
       [](S& s, Engine& e) { e.add_sink(&*s.trace_); },
       [](S& s, const std::string&, Files& files) {
         files.push_back(&s.trace_->output());
         return s.trace_->finish();
       }},
      {{OutputRow::kResolved, "resolved", "--resolved", "ResolvedTraceSink", "FILE", Publication::kSet},
       [](S& s, const std::string& path) {
         return s.resolved_.emplace().open(path, s.scenario_, make_routing_config(s.scenario_));
       },
       [](S& s, Engine& e) { e.add_sink(&*s.resolved_); },
       [](S& s, const std::string&, Files& files) {
         files.push_back(&s.resolved_->output());
         return s.resolved_->finish();
       }},
      {{OutputRow::kSvg, "svg", "--svg", "Timeline", "FILE (drawn after the run)", Publication::kSet},
       [](S& s, const std::string&) {
         s.timeline_.emplace(s.scenario_, timeline_title(s.scenario_));
         return Status::Ok();
       },
       [](S& s, Engine& e) { e.add_sink(&*s.timeline_); },
       [](S& s, const std::string& path, Files& files) {
         files.push_back(&s.svg_file_);
         if (Status st = s.svg_file_.open(path); !st) return st;
         s.svg_file_.write(timeline_svg_document({&*s.timeline_}));
         return s.svg_file_.finish();
       }},
  };
}

// What a command keeps to report itself.
std::vector<RowOps> ReplaySession::Rows::kept() {
  using S = ReplaySession;
  return {
      {{OutputRow::kTimeline, "timeline", "--html", "Timeline", "", Publication::kMemory},
       [](S& s, const std::string&) {
         MLASIM_CHECK(!s.request_.asks(OutputRow::kSvg), "one timeline a session: --svg or a kept one");
         s.timeline_.emplace(s.scenario_, timeline_title(s.scenario_));
         return Status::Ok();
       },
       [](S& s, Engine& e) { e.add_sink(&*s.timeline_); }},
      {{OutputRow::kRecord, "record", "", "RecordCollector", "", Publication::kMemory},
       [](S& s, const std::string&) {
         s.record_.emplace(s.scenario_);
         return Status::Ok();
       },
       [](S& s, Engine& e) { e.add_sink(&*s.record_); }},
  };
}

const std::vector<RowOps>& ReplaySession::Rows::table() {
  static const std::vector<RowOps> rows = [] {
    std::vector<RowOps> all;
    for (auto part : {reports(), goldens(), files(), kept()}) all.insert(all.end(), part.begin(), part.end());
    for (std::size_t i = 0; i < all.size(); ++i)
      MLASIM_CHECK(all[i].info.row == static_cast<OutputRow>(i), "the output registry follows OutputRow's order");
    return all;
  }();
  return rows;
}

const std::vector<OutputRowInfo>& output_rows() {
  static const std::vector<OutputRowInfo> infos = [] {
    std::vector<OutputRowInfo> v;
    for (const RowOps& r : ReplaySession::Rows::table()) v.push_back(r.info);
    return v;
  }();
  return infos;
}

const OutputRowInfo& output_row(OutputRow row) { return output_rows()[static_cast<std::size_t>(row)]; }

SessionRequest& SessionRequest::ask(OutputRow row, std::string path) {
  if (!asks(row)) rows.push_back({row, std::move(path)});
  return *this;
}

SessionRequest& SessionRequest::ask_file(OutputRow row, const std::string& path) {
  return path.empty() ? *this : ask(row, path);
}

bool SessionRequest::asks(OutputRow row) const {
  for (const Asked& a : rows)
    if (a.row == row) return true;
  return false;
}

const std::string& SessionRequest::path(OutputRow row) const {
  static const std::string none;
  for (const Asked& a : rows)
    if (a.row == row) return a.path;
  return none;
}

std::vector<std::string> SessionRequest::files() const {
  std::vector<std::string> out;
  for (Publication kind : {Publication::kSet, Publication::kFolder})
    for (const OutputRowInfo& info : output_rows()) {
      if (info.publication != kind || !asks(info.row)) continue;
      if (kind == Publication::kSet) out.push_back(path(info.row));
      else
        for (std::string& file : logits_file_paths(path(info.row))) out.push_back(std::move(file));
    }
  return out;
}

ReplaySession::ReplaySession(const Scenario& scenario, SessionRequest request, std::ostream& out)
    : scenario_(scenario), request_(std::move(request)), out_(out) {}

ReplaySession::~ReplaySession() = default;

Status ReplaySession::start(const ReplayOptions& options) {
  EngineOptions engine_options;
  engine_options.audit_every_step = options.audit_every_step;
  if (options.with_model) {
    const MlaWeights* weights = options.weights;
    if (!weights) weights = &weights_.emplace(seeded_weights(scenario_.model));
    backend_ = make_replay_backend(*weights, scenario_, options);
    if (options.on_backend) options.on_backend(backend_->precision());
    engine_options.backend = backend_.get();
    engine_options.force_prefill_path = options.force_prefill_path;
  }
  engine_ = std::make_unique<Engine>(scenario_, engine_options, options.engine_donor);
  // What a killed run left beside these outputs: its published set completed, its temporaries gone.
  if (const std::vector<std::string> targets = request_.files(); !targets.empty())
    for (const std::string& note : recover_output_leftovers(targets)) std::fprintf(stderr, "note: %s\n", note.c_str());
  const std::vector<RowOps>& rows = Rows::table();
  for (const RowOps& r : rows)
    if (request_.asks(r.info.row))
      if (Status st = r.open(*this, request_.path(r.info.row)); !st) return st;
  for (const RowOps& r : rows)
    if (request_.asks(r.info.row)) r.attach(*this, *engine_);
  return Status::Ok();
}

// A model run's logits go to one sink feeding the golden gate and the files, each when present;
// none when neither is (an unreadable golden in a check without files).
void ReplaySession::attach_logits() {
  if (!backend_ || logits_) return;
  LogitsGoldenGate* golden = golden_ && golden_read_ ? &*golden_ : nullptr;
  LogitsFilesStream* files = request_.asks(OutputRow::kLogitsFiles) ? &logits_files_ : nullptr;
  if (!golden && !files) return;
  engine_->add_sink(&logits_.emplace(golden, files));
}

std::optional<VllmCannotRun> ReplaySession::run(bool finish_at_vllm_stop) {
  try {
    engine_->run_to_end();
  } catch (const VllmCannotRun& e) {
    if (!finish_at_vllm_stop) throw;
    engine_->finish(e);
    return e;
  }
  return std::nullopt;
}

bool ReplaySession::run_until(const std::function<bool(const StepRecord&)>& stop) {
  while (!engine_->done())
    if (stop(engine_->step())) return false;
  engine_->finish();
  return true;
}

bool ReplaySession::print_verdicts() {
  bool pass = true;
  const std::vector<ExpectationFailure>& failures = expectations_->failures();
  if (int n = count_expectation_checks(scenario_); n > 0) {
    if (failures.empty()) out_ << "expect: all " << n << " checks hold\n";
    for (const auto& f : failures) out_ << f.format() << "\n";
  }
  if (!failures.empty()) pass = false;
  if (!backend_ || !logits_) return pass;
  out_ << "logits: " << logits_->rows() << " rows x " << logits_->vocab_size() << " from " << backend_->name() << "\n";
  const LogitsGoldenVerdict golden = golden_->finish();
  if (!golden.stale.empty())
    out_ << "vs " << golden.dir << ": " << golden.stale << "\n";
  else if (golden.check)
    out_ << "vs " << golden.dir << ": " << golden.check->message << "\n";
  return pass && golden.pass();
}

Status ReplaySession::publish() {
  std::vector<AtomicOutputFile*> files;
  for (Publication kind : {Publication::kSet, Publication::kFolder})
    for (const RowOps& r : Rows::table())
      if (r.info.publication == kind && request_.asks(r.info.row))
        if (Status st = r.finish(*this, request_.path(r.info.row), files); !st) return st;
  if (files.empty()) return Status::Ok();
  if (Status st = publish_together(files); !st) return st;
  logits_dir_.keep();
  if (const std::string& dir = request_.path(OutputRow::kLogitsFiles); !dir.empty())
    out_ << "wrote " << dir << "/logits.npy and logits_index.json\n";
  return Status::Ok();
}

std::optional<PrecisionClass> ReplaySession::precision() const {
  if (!backend_) return std::nullopt;
  return backend_->precision();
}

std::string ReplaySession::timeline_svg() const { return render_timeline_svg({&*timeline_}); }

RunRecord ReplaySession::take_record() {
  RunRecord record = record_->take();
  record.precision = precision();
  return record;
}

}  // namespace mlasim
