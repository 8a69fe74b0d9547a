// Where a replay's observations go as they happen: the engine hands each step, each step's
// logits and each finished request to its sinks and keeps none of them (docs/design.md "Data flow").
#pragma once

#include "base/check.h"
#include "engine/run_record.h"

namespace mlasim {

// Callbacks in the order the engine makes them: on_start when the sink is added; per step:
// on_logits (with a model), on_step, then on_request_finished for each request the step finished.
// on_end once, after the last step.
class StepSink {
 public:
  virtual ~StepSink() = default;
  // The table that names the records' requests (engine/run_record.h says what it holds when),
  // valid until on_end returns; names() reads it. A collected run's table (RunRecord::names)
  // when a RunRecord is handed to a sink step by step.
  virtual void on_start(const RequestNames& names) { names_ = &names; }
  // The logit rows of one step, in the canonical order of LogitsRecord (valid during the call).
  virtual void on_logits(const LogitsRecord& /*step_rows*/) {}
  virtual void on_step(const StepRecord& /*step*/) {}
  // A request's final state; `request.index` is its position in the scenario.
  virtual void on_request_finished(const RequestRecord& /*request*/) {}
  virtual void on_end(const RunTotals& /*totals*/) {}
  // Whether the sink reads RequestRecord::token_ids. When none does and there is no model, a dry
  // run draws no prompt ids at all (Scheduler::set_prompt_ids_on_demand).
  virtual bool wants_token_ids() const { return false; }

 protected:
  const RequestNames& names() const {
    MLASIM_CHECK(names_ != nullptr, "a sink read request names before on_start");
    return *names_;
  }

 private:
  const RequestNames* names_ = nullptr;
};

}  // namespace mlasim
