// One replay of a scenario and the outputs a command asks of it. Every output is a row of one
// registry (output_rows()): the CLI flag that asks for it, the sink that makes it, the file it
// writes (or the golden it reads) and how that reaches the user. `mlasim run`, `check`, `fuzz` and
// `golden update` each build a ReplaySession asking for their rows; the session builds the backend
// and the Engine the same way for all of them, opens the rows, steps, and publishes the files as
// one set (base/output_set.h).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "attention/backend.h"
#include "base/atomic_file.h"
#include "base/created_folders.h"
#include "base/status.h"
#include "config/scenario.h"
#include "engine/engine.h"
#include "engine/replay.h"
#include "engine/run_collector.h"
#include "output/progress_line.h"
#include "output/resolved_trace.h"
#include "output/run_json_sink.h"
#include "output/run_summary.h"
#include "output/step_table_sink.h"
#include "output/timeline.h"
#include "output/trace_event_sink.h"
#include "verify/expectations.h"
#include "verify/logits_golden_gate.h"
#include "verify/logits_stream.h"
#include "verify/split_golden_checker.h"

namespace mlasim {

// The outputs a replay can make, in the order the session opens them and hands them steps.
enum class OutputRow {
  kStepTable,          // the per-step table and its summary (run)
  kExpectations,       // the scenario's expect: block, judged as it runs
  kProgress,           // the progress line on a terminal (run)
  kSplitGolden,        // golden/<name>/split.txt, compared step by step (check, fuzz)
  kLogitsGolden,       // golden/<name>/logits.npy; an unreadable golden stops the run (run)
  kLogitsGoldenCheck,  // the same, an unreadable golden one failed check (check)
  kLogitsFiles,        // --logits-dir: logits.npy and logits_index.json
  kJson,               // --json: the run record
  kJsonl,              // --jsonl: the run, a line a step
  kTraceOut,           // --trace-out: Trace Event JSON
  kResolved,           // --resolved: the trace as replayed
  kSvg,                // --svg: the timeline drawn to a file
  kTimeline,           // the timeline kept in memory (check --html)
  kRecord,             // the whole run as one RunRecord (golden update, fuzz)
};

// How a row's output reaches the user.
enum class Publication {
  kStdout,  // printed on the session's stream (the table, the verdicts)
  kStderr,  // the progress line, redrawn in place
  kMemory,  // kept for the command to judge or report (a check's verdicts, a picture, the record)
  kSet,     // a file written beside its target, renamed into place with the others as one set
  kFolder,  // files in a folder the run creates (removed unless published), renamed with the set
};

struct OutputRowInfo {
  OutputRow row;
  const char* name;        // as the registry's tests and docs name it
  const char* flag;        // the CLI flag that asks for it or says where it goes ("" : none)
  const char* sink;        // the StepSink that makes it
  const char* file;        // what it writes or reads ("" : nothing)
  Publication publication;
};

// The registry, one row per OutputRow, in its order.
const std::vector<OutputRowInfo>& output_rows();
const OutputRowInfo& output_row(OutputRow row);

// What a command asks of a session: its rows, each with its path (the file, the folder, or the
// golden folder; "" for a row without one), and the rows' settings.
struct SessionRequest {
  struct Asked {
    OutputRow row;
    std::string path;
  };
  std::vector<Asked> rows;
  TableMode table = TableMode::kAuto;               // kStepTable
  bool explain = false;                             // kStepTable: why each row took its path
  TraceClock trace_clock = TraceClock::kSimulated;  // kTraceOut

  SessionRequest& ask(OutputRow row, std::string path = "");
  // Asks for `row` only when its flag gave a path.
  SessionRequest& ask_file(OutputRow row, const std::string& path);
  bool asks(OutputRow row) const;
  const std::string& path(OutputRow row) const;  // "" when not asked for
  // The files the asked rows write (a folder's files each), in publication order.
  std::vector<std::string> files() const;
};

class ReplaySession {
 public:
  // `out` gets what the kStdout rows print.
  ReplaySession(const Scenario& scenario, SessionRequest request, std::ostream& out);
  ReplaySession(const ReplaySession&) = delete;
  ReplaySession& operator=(const ReplaySession&) = delete;
  ~ReplaySession();

  // Builds the weights and the backend `options` asks for (none for a dry run) and the Engine;
  // completes what a killed run left beside the files (notes on stderr); then opens every asked
  // row (its golden read, its folder created, its file opened beside its target) and hands the
  // Engine their sinks. Bad input (or an output error) naming the file.
  Status start(const ReplayOptions& options);
  // Steps to the end. Where vLLM's scheduler cannot go on: with `finish_at_vllm_stop` the run
  // ends there (the outputs say so) and the stop is returned, else VllmCannotRun propagates.
  std::optional<VllmCannotRun> run(bool finish_at_vllm_stop);
  // Steps until `stop` says so (false: no totals handed on) or to the end (true).
  bool run_until(const std::function<bool(const StepRecord&)>& stop);

  // After the run: prints the expectations' and the logits golden's verdicts; false when one fails.
  bool print_verdicts();
  // Every file finished and synced beside its target, then all renamed into place, so a failure
  // (a full disk) publishes none and leaves what the user had.
  Status publish();

  const SessionRequest& request() const { return request_; }
  const std::string& name() const { return scenario_.name; }
  std::optional<PrecisionClass> precision() const;  // nullopt: a dry run
  const ExpectationChecker& expectations() const { return *expectations_; }
  // kSplitGolden: the checker (null when the golden is missing or unreadable) and whether the
  // golden could be read (an error for a path that is no regular file).
  const SplitGoldenChecker* split_golden() const { return split_ ? &*split_ : nullptr; }
  const Status& split_golden_read() const { return split_read_; }
  // kLogitsGoldenCheck: whether the golden could be read, and the gate.
  const Status& logits_golden_read() const { return golden_read_; }
  const LogitsGoldenGate& logits_golden() const { return *golden_; }
  std::string timeline_svg() const;  // kTimeline: an <svg> element
  RunRecord take_record();           // kRecord
  // The engine, for a later session's ReplayOptions::engine_donor; the session is done with it.
  std::unique_ptr<Engine> release_engine() { return std::move(engine_); }
  // The engine's names of the requests its step records name (after start()).
  const RequestNames& request_names() const { return engine_->request_names(); }

  struct Rows;  // the registry's rows as the session runs them (replay_session.cpp)

 private:
  void attach_logits();

  const Scenario& scenario_;
  SessionRequest request_;
  std::ostream& out_;
  std::optional<MlaWeights> weights_;
  std::unique_ptr<Backend> backend_;
  std::optional<RunSummary> summary_;
  std::optional<StepTablePrinter> printer_;
  std::optional<ExpectationChecker> expectations_;
  std::optional<ProgressLine> progress_;
  std::optional<SplitGoldenChecker> split_;
  Status split_read_ = Status::Ok();
  std::optional<LogitsGoldenGate> golden_;
  Status golden_read_ = Status::Ok();
  CreatedFolders logits_dir_;  // declared before the files: removed after their temporaries are,
                               // unless the run published them
  LogitsFilesStream logits_files_;
  std::optional<LogitsStreamSink> logits_;
  std::optional<RunFileSink> json_, jsonl_;
  std::optional<TraceEventSink> trace_;
  std::optional<ResolvedTraceSink> resolved_;
  std::optional<Timeline> timeline_;
  AtomicOutputFile svg_file_;
  std::optional<RecordCollector> record_;
  std::unique_ptr<Engine> engine_;  // last: gone before the sinks it steps
};

}  // namespace mlasim
