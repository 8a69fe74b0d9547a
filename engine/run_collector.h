// A sink that keeps everything: every step, every request's final state and every logit row, as
// one RunRecord. For tests, goldens and regression-sized scenarios; traces stream to other sinks.
#pragma once

#include "config/scenario.h"
#include "engine/step_sink.h"

namespace mlasim {

class RecordCollector final : public StepSink {
 public:
  // Inline requests start as "waiting" records in scenario order (a request that never finished
  // keeps that state); requests from a file are added as they finish.
  explicit RecordCollector(const Scenario& scenario);
  void on_logits(const LogitsRecord& rows) override;
  // Keeps each arrived request's id (RunRecord::names) with the step.
  void on_step(const StepRecord& step) override;
  void on_request_finished(const RequestRecord& request) override;
  bool wants_token_ids() const override { return true; }
  // The record, requests in scenario order.
  RunRecord take();

 private:
  RunRecord record_;
  bool from_file_ = false;
};

}  // namespace mlasim
