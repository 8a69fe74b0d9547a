// The rows each command asks of its replay.
#include "harness/command_rows.h"

namespace mlasim {

SessionRequest run_rows(const RunOutputOptions& o) {
  SessionRequest r;
  r.table = o.table;
  r.explain = o.explain;
  r.trace_clock = o.trace_clock;
  r.ask(OutputRow::kStepTable).ask(OutputRow::kExpectations).ask(OutputRow::kProgress);
  r.ask(OutputRow::kLogitsGolden, o.golden_dir);
  r.ask_file(OutputRow::kLogitsFiles, o.logits_dir);
  r.ask_file(OutputRow::kJson, o.json_path).ask_file(OutputRow::kJsonl, o.jsonl_path);
  r.ask_file(OutputRow::kTraceOut, o.trace_path).ask_file(OutputRow::kResolved, o.resolved_path);
  r.ask_file(OutputRow::kSvg, o.svg_path);
  return r;
}

SessionRequest check_rows(const std::string& golden_dir, bool with_model, bool timelines) {
  SessionRequest r;
  r.ask(OutputRow::kExpectations).ask(OutputRow::kSplitGolden, golden_dir);
  if (with_model) r.ask(OutputRow::kLogitsGoldenCheck, golden_dir);
  if (timelines) r.ask(OutputRow::kTimeline);
  return r;
}

SessionRequest record_rows() { return SessionRequest().ask(OutputRow::kRecord); }

SessionRequest fuzz_rows(const std::string& golden_dir) {
  SessionRequest r;
  if (!golden_dir.empty()) r.ask(OutputRow::kSplitGolden, golden_dir);
  return r;
}

}  // namespace mlasim
