// Streaming split golden comparison.
#include "verify/split_golden_checker.h"

#include <fmt/format.h>

#include "base/file_read.h"

namespace mlasim {

SplitGoldenChecker::SplitGoldenChecker(const std::string& golden_path, const Scenario& scenario)
    : path_(golden_path), in_(golden_path, std::ios::binary) {
  // The header: the format, the scenario's name, and its fingerprint (did the scenario change since
  // the golden was written?).
  std::vector<std::pair<int, std::string>> header;
  std::string line;
  while (next_line(line)) {
    ++line_no_;
    if (!line.empty() && line[0] != '#') {
      pending_ = line;
      pending_line_ = line_no_;
      break;
    }
    if (!line.empty()) header.emplace_back(line_no_, line);
  }
  if (done_) return;  // a line without end
  result_ = check_split_golden_header(path_, header, scenario.name, scenario_fingerprint(scenario));
  fingerprint_line_ = result_.line;
  result_.line = 0;
  done_ = !result_.match;
}

bool SplitGoldenChecker::next_line(std::string& line) {
  bool too_long = false;
  if (getline_bounded(in_, line, kMaxGoldenLineBytes, too_long)) return true;
  if (too_long) {
    result_.match = false;
    result_.malformed = true;
    result_.message = path_ + ":" + std::to_string(line_no_ + 1) + ": error: a line longer than " +
                      format_bytes(static_cast<double>(kMaxGoldenLineBytes)) +
                      "\n  hint: regenerate it with `mlasim golden update`";
    done_ = true;
  }
  return false;
}

bool SplitGoldenChecker::next_golden_line(std::string& line, int& line_no) {
  if (pending_line_ > 0) {
    line = std::move(pending_);
    line_no = pending_line_;
    pending_line_ = 0;
    return true;
  }
  while (!done_ && next_line(line)) {
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
  // A line is shown up to 1,000 bytes (a corrupted golden can hold megabytes in one).
  auto shown = [](const std::string* s) {
    if (!s) return std::string("(no more steps)");
    return s->size() <= 1000 ? *s : s->substr(0, 1000) + fmt::format("... ({} bytes)", s->size());
  };
  result_.message = fmt::format("{}:{}: split differs from the golden\n  expected: {}\n  actual:   {}{}", path_, line_no,
                                shown(expected), shown(actual), stale_note);
}

void SplitGoldenChecker::on_step(const StepRecord& step) {
  if (done_) return;
  const std::string actual = format_split_line(step, names());
  std::string expected;
  int line_no = 0;
  if (!next_golden_line(expected, line_no)) {
    if (done_) return;  // the golden turned out malformed
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
  else if (done_) return;
  else if (!done_ && result_.stale) result_ = stale_split_golden(path_, fingerprint_line_);
}

}  // namespace mlasim
