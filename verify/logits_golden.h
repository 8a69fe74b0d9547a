// Logits files (docs/design.md): logits.npy (float32 [rows, vocab]) + logits_index.json (per row:
// step, id, position), and for goldens meta.yaml (provenance, reference precision, tolerances
// and why). Reading checks the files against each other; comparing checks the index exactly,
// then the values within a tolerance class.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "config/scenario.h"
#include "base/status.h"
#include "base/atomic_file.h"
#include "verify/logits_compare.h"
#include "engine/run_record.h"

namespace mlasim {

// logits.npy and logits_index.json as one set (LogitsFilesStream): both written and synced beside
// their targets, then renamed into place. The index records the npy's bytes
// (`logits_npy_fnv1a64`), and readers refuse a pair from two writes.
// The rows' requests are named through `names` (RunRecord::names).
Status write_logits_files(const std::string& dir, const LogitsRecord& logits, const RequestNames& names);
// Golden: the files above from the fp64 values, plus meta.yaml.
Status write_logits_golden(const std::string& dir, const Scenario& scenario, const LogitsRecord& logits,
                           const RequestNames& names, const std::string& generator);

// One row of logits_index.json: a LogitsRow with its request's id.
struct LogitsIndexRow {
  int step = 0;
  std::string id;
  int position = 0;
};
// How messages name a logits row: "step S ID position P".
std::string logits_row_label(int step, std::string_view id, int position);

struct LogitsFiles {
  std::vector<LogitsIndexRow> index;
  long rows = 0, cols = 0;
  std::vector<double> values;
};
// logits.npy and logits_index.json, checked against each other: the index's format, version and
// vocab_size, whole non-negative steps and positions, one index row per array row.
Result<LogitsFiles> read_logits_files(const std::string& dir);
// A golden: the files above plus meta.yaml, which must be the one `golden update` wrote for this
// scenario: format 1, the scenario's name, the array's rows and vocab_size, mlasim's tolerance
// classes unedited (bad input otherwise). `stale` is set (a regression, not bad input) when the
// golden was written for another model (model_hash).
struct LogitsGolden {
  LogitsFiles files;
  std::string stale;  // "" or why the golden no longer matches the scenario's model
};
Result<LogitsGolden> read_logits_golden(const std::string& dir, const Scenario& scenario);

// Where a model run's logits golden stands, for `run` and `check` alike: golden_dir/<name>/
// logits.npy absent (found false), or read (its files, and `stale` when written for another
// model). Bad input when it cannot be looked for or read.
struct LogitsGoldenLookup {
  std::string dir;  // golden_dir/<name>
  bool found = false;
  LogitsGolden golden;
};
Result<LogitsGoldenLookup> find_logits_golden(const std::string& golden_dir, const Scenario& scenario);

// A fingerprint of the model (dimensions, seed, eps, RoPE): goldens of the same model share it.
std::string model_fingerprint(const ModelConfig& model);

struct LogitsCheck {
  bool pass = true;
  std::string message;  // "logits ..." summary; names the first index difference when rows differ
  // When the rows lined up and the values were compared: the numbers, the tolerance, and the rows
  // (step, id, position) of the worst elements and of the first top-1 mismatch ("" when none).
  bool compared = false;
  LogitsComparison comparison;
  LogitsTolerance tolerance;
  std::string max_abs_at, max_rel_at, first_top1_mismatch_at;
};
// The whole record at once (LogitsGoldenCheck streams it).
LogitsCheck check_logits_against(const LogitsFiles& golden, const LogitsRecord& actual, const RequestNames& names,
                                 const LogitsTolerance& tol, const std::string& golden_dir);

}  // namespace mlasim
