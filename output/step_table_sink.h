// The table `mlasim run` prints, as a sink: per-step lines while the run is short (or always with
// --table full), then either the per-request list and the misrouting line or the run summary.
#pragma once

#include <optional>
#include <ostream>
#include <string>

#include "output/run_summary.h"
#include "output/scenario_order_spill.h"
#include "engine/step_sink.h"

namespace mlasim {

enum class TableMode { kAuto, kFull, kSummary, kNone };
std::optional<TableMode> parse_table_mode(const std::string& s);  // auto | full | summary | none

class StepTablePrinter final : public StepSink {
 public:
  // --table auto prints every step of a run up to this many steps; past it, the steps stop and
  // the summary replaces the per-request list.
  static constexpr int kAutoFullSteps = 500;

  // `summary` must get its callbacks before this printer (its on_end is read here).
  StepTablePrinter(std::ostream& out, TableMode mode, bool explain, const RunSummary& summary);
  void on_step(const StepRecord& step) override;
  void on_request_finished(const RequestRecord& request) override;
  void on_end(const RunTotals& totals) override;

 private:
  std::ostream& out_;
  TableMode mode_;
  bool explain_;
  const RunSummary& summary_;
  int num_steps_ = 0;
  bool truncated_ = false;
  std::optional<ScenarioOrderSpill> requests_;
};

}  // namespace mlasim
