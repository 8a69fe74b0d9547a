// The split golden check as a sink: each step's split line against the golden's next step line,
// read from the file as the run goes, so a long trace is checked without holding either side.
// Reports what compare_split_golden reports for the whole text (the fingerprint is read from the
// header, before the first step line).
#pragma once

#include <fstream>
#include <string>

#include "config/scenario.h"
#include "verify/split_golden.h"
#include "engine/step_sink.h"

namespace mlasim {

class SplitGoldenChecker final : public StepSink {
 public:
  // The golden must exist (the caller reports a missing one).
  SplitGoldenChecker(const std::string& golden_path, const Scenario& scenario);
  void on_step(const StepRecord& step) override;
  void on_end(const RunTotals& totals) override;
  // After on_end: match, or the first difference.
  const GoldenComparison& result() const { return result_; }

 private:
  static constexpr std::size_t kMaxGoldenLineBytes = std::size_t{16} << 20;
  bool next_line(std::string& line);  // bounded; a longer line makes the golden malformed
  bool next_golden_line(std::string& line, int& line_no);
  void mismatch(int line_no, const std::string* expected, const std::string* actual);

  std::string path_;
  std::ifstream in_;
  int line_no_ = 0;
  std::string pending_;      // a step line read while scanning the header
  int pending_line_ = 0;
  int last_step_line_ = 0;   // line of the last golden step line compared
  int fingerprint_line_ = 0;
  bool done_ = false;        // a difference was found
  GoldenComparison result_;
};

}  // namespace mlasim
