// The step loop of one replay (docs/design.md "Data flow"): admit arrivals, schedule, update the
// persistent batch, teacher-force the samples, update the scheduler, record the step.
#pragma once

#include <memory>
#include <vector>

#include "attention/attention_metadata.h"
#include "attention/input_batch.h"
#include "attention/routing_config.h"
#include "sim/scenario.h"
#include "sim/scheduler.h"
#include "tools/harness/run_record.h"

namespace mlasim {

class Backend;

struct EngineOptions {
  Backend* backend = nullptr;       // the model; nullptr = dry run (scheduler + routing only)
  bool force_prefill_path = false;  // golden mode: every token through the prefill (MHA) form
};

class Engine {
 public:
  explicit Engine(const Scenario& scenario, EngineOptions options = {});

  // True once every request has arrived and finished.
  bool done() const;
  // Runs one step and returns its record. Steps in which nothing is alive are skipped: the step
  // counter jumps to the next arrival, so step numbers match `arrival_step`.
  const StepRecord& step();
  // Runs to completion; the record holds every step and every request's final state.
  RunRecord run();

  const Scheduler& scheduler() const { return scheduler_; }
  const InputBatch& input_batch() const { return batch_; }
  const RoutingConfig& routing_config() const { return routing_; }
  // The attention metadata of the latest step (reordered row order).
  const AttentionMetadata& attention_metadata() const { return metadata_; }

 private:
  void admit_arrivals();
  void record_step(const SchedulerOutput& out, const BatchRoute& route);
  void record_finished(const Request& r);
  void run_model(const SchedulerOutput& out);

  const Scenario& scenario_;
  EngineOptions options_;
  Scheduler scheduler_;
  InputBatch batch_;
  RoutingConfig routing_;
  AttentionMetadata metadata_;
  std::vector<int> arrival_order_;  // scenario indices sorted by (arrival_step, index)
  std::size_t next_arrival_ = 0;
  int step_ = 0;
  int idle_steps_ = 0;  // consecutive steps that scheduled nothing
  RunRecord record_;
  SchedulerOutput out_;
  ModelRunnerOutput model_output_;
};

}  // namespace mlasim
