// Streaming split golden comparison.
#include "tools/harness/split_golden_checker.h"

#include <fmt/format.h>

namespace mlasim {

SplitGoldenChecker::SplitGoldenChecker(const std::string& golden_path, const Scenario& scenario)
    : path_(golden_path), in_(golden_path, std::ios::binary) {
  // The header: its fingerprint tells whether the scenario changed since the golden was written.
  const std::string prefix = "# fingerprint: ";
  std::string fingerprint;
  std::string line;
  while (std::getline(in_, line)) {
    ++line_no_;
    if (line.rfind(prefix, 0) == 0 && fingerprint.empty()) fingerprint = line.substr(prefix.size());
    if (!line.empty() && line[0] != '#') {
      pending_ = line;
      pending_line_ = line_no_;
      break;
    }
  }
  result_.stale = fingerprint != scenario_fingerprint(scenario);
}

bool SplitGoldenChecker::next_golden_line(std::string& line, int& line_no) {
  if (pending_line_ > 0) {
    line = std::move(pending_);
    line_no = pending_line_;
    pending_line_ = 0;
    return true;
  }
  while (std::getline(in_, line)) {
    ++line_no_;
    if (!line.empty() && line[0] != '#') {
      line_no = line_no_;
      return true;
    }
  }
  return false;
}

void SplitGoldenChecker::mismatch(int line_no, const std::string* expected, const std::string* actual) {
  done_ = true;
  result_.match = false;
  result_.golden_path = path_;
  result_.line = line_no;
  result_.expected = expected ? *expected : "(no more steps)";
  result_.actual = actual ? *actual : "(no more steps)";
  const std::string stale_note =
      result_.stale ? "\n  note: the scenario changed since this golden was written (fingerprint differs); if the "
                      "new split is intended, run `mlasim golden update`"
                    : "";
  result_.message = fmt::format("{}:{}: split differs from the golden\n  expected: {}\n  actual:   {}{}", path_, line_no,
                                expected ? *expected : "(no more steps)", actual ? *actual : "(no more steps)",
                                stale_note);
}

void SplitGoldenChecker::on_step(const StepRecord& step) {
  if (done_) return;
  const std::string actual = format_split_line(step);
  std::string expected;
  int line_no = 0;
  if (!next_golden_line(expected, line_no)) {
    mismatch(last_step_line_ == 0 ? 1 : last_step_line_ + 1, nullptr, &actual);
    return;
  }
  last_step_line_ = line_no;
  if (expected != actual) mismatch(line_no, &expected, &actual);
}

void SplitGoldenChecker::on_end(const RunTotals& /*totals*/) {
  if (done_) return;
  std::string expected;
  int line_no = 0;
  if (next_golden_line(expected, line_no)) mismatch(line_no, &expected, nullptr);
}

}  // namespace mlasim
