// The rows of the output registry (harness/replay_session.h) each command asks of its replay:
// `mlasim run` its table, verdicts and the files its flags name; `check` the expectations and
// goldens; `golden update` and `fuzz` the record and the split golden.
#pragma once

#include <string>

#include "harness/replay_session.h"

namespace mlasim {

// What `mlasim run`'s flags ask for.
struct RunOutputOptions {
  TableMode table = TableMode::kAuto;
  bool explain = false;                      // the table says why each row took its path
  std::string golden_dir = "golden";         // golden/<name>/logits.npy, compared when present
  std::string json_path, jsonl_path, svg_path, trace_path, logits_dir;  // "" when not asked for
  std::string resolved_path;                 // --resolved: the trace as replayed ("" when not asked for)
  TraceClock trace_clock = TraceClock::kSimulated;
};

// `run`: the table, the expectations, the progress line, the logits golden (a model run), and each
// file a flag names.
SessionRequest run_rows(const RunOutputOptions& o);
// `check`: the expectations, the split golden, a model run's logits golden (an unreadable one a
// failed check) and, for --html, the timeline.
SessionRequest check_rows(const std::string& golden_dir, bool with_model, bool timelines);
// `golden update` and fuzz's replays: the whole run as one record.
SessionRequest record_rows();
// Fuzz's dry run: the split golden under `golden_dir` when matches_golden_split asks for it ("": none).
SessionRequest fuzz_rows(const std::string& golden_dir);

}  // namespace mlasim
