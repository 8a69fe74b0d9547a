// Split goldens (docs/design.md "Goldens"): golden/<scenario>/split.txt from a canonical printer, one
// line per step (decode reqs/tokens, prefill reqs/tokens, per row id:path[q,nct] in batch order,
// preempted and finished), compared exactly, with the first difference reported.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "config/scenario.h"
#include "base/status.h"
#include "engine/run_record.h"

namespace mlasim {

inline constexpr int kSplitGoldenFormat = 1;

// A 16-hex-digit hash of everything that determines the run (configuration, every request's
// tokens and parameters), not of comments, descriptions or the expect block.
std::string scenario_fingerprint(const Scenario& scenario);

// "decode reqs/tokens prefill reqs/tokens" of a step line.
std::string format_split_counts(const SplitCounts& counts);
// Requests named through `names` (RunRecord::names, or a sink's StepSink::names()).
std::string format_split_line(const StepRecord& step, const RequestNames& names);
// Header (format, scenario name and fingerprint, generator version) and one line per step.
std::string format_split_golden(const Scenario& scenario, const RunRecord& run, const std::string& generator);

struct GoldenComparison {
  bool match = true;
  std::string message;  // empty when match; otherwise the first difference, expected vs actual
  bool stale = false;   // the golden's fingerprint differs from the scenario's
  bool malformed = false;  // the header is not a split golden's (bad input, not a regression)
  // The first difference, for reports that show it side by side: the golden's line number and
  // both step lines ("(no more steps)" where one side ended).
  std::string golden_path;
  int line = 0;
  std::string expected, actual;
};

// Compares the step lines (header lines starting with '#' are not compared, except that a
// fingerprint change is reported as stale). `golden_path` names the file in messages.
GoldenComparison compare_split_golden(const std::string& golden_path, const std::string& golden_text,
                                      const std::string& actual_text);

std::string split_golden_path(const std::string& golden_dir, const std::string& scenario_name);

// The header's lines ('#' lines before the first step line, with their 1-based numbers) against
// the scenario's name and fingerprint: the first line must be the format line, and the scenario
// and fingerprint lines must be present. Returns a failed comparison (malformed, or a golden of
// another scenario), or a match with `stale` set when the fingerprint differs: the caller fails a
// stale golden whose steps all match, and notes it on the first differing step otherwise.
GoldenComparison check_split_golden_header(const std::string& golden_path,
                                           const std::vector<std::pair<int, std::string>>& header,
                                           const std::string& scenario_name, const std::string& fingerprint);
// The failure of a stale golden whose steps all match.
GoldenComparison stale_split_golden(const std::string& golden_path, int fingerprint_line);

}  // namespace mlasim
