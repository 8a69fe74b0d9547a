// The outputs of one `mlasim run`: the step table, the expectations, the logits (the golden check
// and --logits-dir) and the --json, --jsonl, --resolved, --trace-out and --svg files, built as sinks of one
// Engine, judged after the run, then published as one set.
#pragma once

#include <optional>
#include <ostream>
#include <string>

#include "attention/backend.h"
#include "base/atomic_file.h"
#include "base/created_folders.h"
#include "base/status.h"
#include "engine/engine.h"
#include "verify/expectations.h"
#include "verify/logits_golden_gate.h"
#include "verify/logits_stream.h"
#include "output/progress_line.h"
#include "output/resolved_trace.h"
#include "output/run_json_sink.h"
#include "output/run_summary.h"
#include "output/step_table_sink.h"
#include "output/timeline.h"
#include "output/trace_event_sink.h"
#include "config/scenario.h"

namespace mlasim {

struct RunOutputOptions {
  TableMode table = TableMode::kAuto;
  bool explain = false;                      // the table says why each row took its path
  std::string golden_dir = "golden";         // golden/<name>/logits.npy, compared when present
  std::string json_path, jsonl_path, svg_path, trace_path, logits_dir;  // "" when not asked for
  std::string resolved_path;                 // --resolved: the trace as replayed ("" when not asked for)
  TraceClock trace_clock = TraceClock::kSimulated;
};

// The flag combinations `mlasim run` refuses: "" or the message.
std::string run_flag_conflict(const RunOutputOptions& o, bool dry_run, bool compare_profile, bool faults);

class RunOutputs {
 public:
  // `out` gets the table and the verdicts; the progress line goes to stderr on a terminal.
  RunOutputs(const Scenario& scenario, const RunOutputOptions& options, std::ostream& out);
  RunOutputs(const RunOutputs&) = delete;
  RunOutputs& operator=(const RunOutputs&) = delete;

  // Reads the logits golden (a model run: `backend` non-null), creates --logits-dir and opens
  // every file beside its target. Bad input (or an output error) naming the file.
  Status open(const Backend* backend);
  // Adds the sinks, the summary first (the table printer reads it at the end).
  void attach(Engine& engine);
  // After the run: prints the expectations' and the logits' verdicts; false when one fails.
  bool report();
  // Every file finished and synced beside its target, then all renamed into place, so a failure
  // (a full disk) publishes none and leaves what the user had.
  Status publish();

 private:
  const Scenario& scenario_;
  RunOutputOptions options_;
  std::ostream& out_;
  const Backend* backend_ = nullptr;
  RunSummary summary_;
  StepTablePrinter printer_;
  ExpectationChecker checker_;
  ProgressLine progress_;
  std::optional<LogitsGoldenGate> golden_;
  CreatedFolders logits_dir_;  // the folders --logits-dir needed; declared before the files: removed after
                               // their temporaries are, unless the run published them
  LogitsFilesStream logits_files_;
  std::optional<LogitsStreamSink> logits_;
  RunFileSink json_{RunFileFormat::kJson};
  RunFileSink jsonl_{RunFileFormat::kJsonl};
  ResolvedTraceSink resolved_;
  TraceEventSink trace_;
  Timeline timeline_;
  AtomicOutputFile svg_file_;
};

}  // namespace mlasim
