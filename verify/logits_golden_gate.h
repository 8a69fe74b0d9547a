// The logits golden check of one model run, the one `mlasim run` and `mlasim check` share:
// golden_dir/<name>/ looked up before the run, the rows compared as the steps produce them in the
// backend's precision class (known once the backend exists), one verdict after the run.
#pragma once

#include <optional>
#include <string>

#include "attention/backend.h"
#include "base/status.h"
#include "config/scenario.h"
#include "verify/logits_golden.h"
#include "verify/logits_stream.h"

namespace mlasim {

struct LogitsGoldenVerdict {
  std::string dir;    // golden_dir/<name>
  bool found = false;  // golden_dir/<name>/logits.npy exists
  std::string stale;   // "" or why the golden was written for another model (nothing compared)
  std::optional<LogitsCheck> check;  // the comparison, when found and not stale
  bool pass() const { return stale.empty() && (!check || check->pass); }
};

class LogitsGoldenGate {
 public:
  // Looks for golden_dir/<name>/logits.npy and reads it: bad input when it cannot be.
  Status open(const std::string& golden_dir, const Scenario& scenario);
  // The tolerance is the backend's class; called once, before the first rows.
  void start(PrecisionClass precision);
  void add(const LogitsRecord& rows, const RequestNames& names);
  LogitsGoldenVerdict finish() const;
  const std::string& dir() const { return lookup_.dir; }

 private:
  LogitsGoldenLookup lookup_;
  std::optional<LogitsGoldenCheck> check_;
};

}  // namespace mlasim
