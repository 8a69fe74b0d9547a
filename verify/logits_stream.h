// A model run's logits as the steps produce them, never all held: compared with a golden row by
// row (LogitsGoldenCheck, through the LogitsGoldenGate), written to logits.npy + logits_index.json as they come
// (LogitsFilesStream, output/logits_files.h), and both fed by one sink. Memory: one step's rows, not the run's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "output/logits_files.h"
#include "verify/logits_golden.h"
#include "engine/step_sink.h"

namespace mlasim {

// check_logits_against, one step's rows at a time: the index exactly (the first differing row is
// named), then the values within `tol`. finish() gives what check_logits_against gives for the
// rows added. `golden` must outlive the check.
class LogitsGoldenCheck {
 public:
  LogitsGoldenCheck(const LogitsFiles& golden, const LogitsTolerance& tol, std::string golden_dir);
  // The rows' requests are named through `names`.
  void add(const LogitsRecord& rows, const RequestNames& names);
  LogitsCheck finish() const;

 private:
  const LogitsFiles& golden_;
  LogitsTolerance tol_;
  std::string dir_;
  LogitsComparer comparer_;
  std::size_t rows_ = 0;    // rows added
  std::size_t values_ = 0;  // values added (the shape message counts them)
  bool vocab_differs_ = false;
  std::optional<std::string> index_difference_;  // the first row whose (step, id, position) differs
  std::vector<double> row_;                      // one row widened to double
};

class LogitsGoldenGate;

// The sink of a model run's logits: counts them and hands each step's rows to the golden check
// and the files, each when present.
class LogitsStreamSink final : public StepSink {
 public:
  LogitsStreamSink(LogitsGoldenGate* golden, LogitsFilesStream* files) : golden_(golden), files_(files) {}
  void on_logits(const LogitsRecord& rows) override;
  long rows() const { return rows_; }
  int vocab_size() const { return vocab_size_; }  // 0 until a row came

 private:
  LogitsGoldenGate* golden_;
  LogitsFilesStream* files_;
  long rows_ = 0;
  int vocab_size_ = 0;
};

}  // namespace mlasim
