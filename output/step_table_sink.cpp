// Printing the step table as the run goes.
#include "output/step_table_sink.h"

#include <fmt/format.h>

#include "output/step_table.h"

namespace mlasim {

std::optional<TableMode> parse_table_mode(const std::string& s) {
  if (s == "auto") return TableMode::kAuto;
  if (s == "full") return TableMode::kFull;
  if (s == "summary") return TableMode::kSummary;
  if (s == "none") return TableMode::kNone;
  return std::nullopt;
}

StepTablePrinter::StepTablePrinter(std::ostream& out, TableMode mode, bool explain, const RunSummary& summary)
    : out_(out), mode_(mode), explain_(explain), summary_(summary) {
  if (mode_ == TableMode::kAuto || mode_ == TableMode::kFull) requests_.emplace();
}

void StepTablePrinter::on_step(const StepRecord& st) {
  ++num_steps_;
  const bool print = mode_ == TableMode::kFull || (mode_ == TableMode::kAuto && num_steps_ <= kAutoFullSteps);
  if (print) {
    out_ << format_step_line(st, names()) << "\n";
    if (explain_) out_ << format_step_explanation(st, names());
  } else if (mode_ == TableMode::kAuto && !truncated_) {
    truncated_ = true;
    requests_.reset();
    out_ << fmt::format("... the step table stops after {} steps (--table full prints every step); the summary "
                        "follows at the end\n",
                        kAutoFullSteps);
  }
}

void StepTablePrinter::on_request_finished(const RequestRecord& r) {
  if (!requests_) return;
  std::string line = fmt::format("  {:<12} {:<22} prompt={} outputs={} preemptions={}", r.id, r.status,
                                 r.num_prompt_tokens, r.num_output_tokens(), r.num_preemptions);
  if (r.stop_reason) line += fmt::format(" stop_token={}", *r.stop_reason);
  line += "\n";
  requests_->add(r.index, line);
}

void StepTablePrinter::on_end(const RunTotals& totals) {
  if (mode_ == TableMode::kNone) return;
  out_ << "\n";
  if (requests_) {
    out_ << fmt::format("{} steps; requests:\n", totals.num_steps);
    requests_->for_each([&](std::string_view line) { out_ << line; });
    out_ << summary_.format_misrouting();
  } else {
    out_ << summary_.format();
  }
}

}  // namespace mlasim
