// The step loop of one replay (docs/design.md "Data flow"): admit arrivals, schedule, update the
// persistent batch, teacher-force the samples, update the scheduler, hand the step to the sinks.
// Holds only what is alive: requests are read from the scenario's stream as they arrive, and a
// step's record is reused for the next one.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "attention/attention_metadata.h"
#include "attention/input_batch.h"
#include "attention/route.h"
#include "attention/routing_config.h"
#include "scenario/request_stream.h"
#include "config/scenario.h"
#include "sim/scheduler.h"
#include "sim/vllm_cannot_run.h"
#include "engine/run_record.h"
#include "engine/step_sink.h"

namespace mlasim {

class Backend;

struct EngineOptions {
  Backend* backend = nullptr;       // the model; nullptr = dry run (scheduler + routing only)
  bool force_prefill_path = false;  // golden mode: every token through the prefill (MHA) form
  // The batch's block tables and the attention metadata in full (without a model the other steps
  // build MetadataDetail::kRows) are checked on the first kAuditEveryStepUntil steps, the pool by
  // the scheduler's incremental audit of each step's changes (one KV cache group; its O(blocks)
  // audit on the first and the last of those steps; with several groups the O(blocks) audit on
  // each), then all of them every kAuditInterval-th step (long traces stay fast). A pool of more
  // than kAuditFullPoolBlocks blocks: every (kAuditInterval x blocks / 2^16)-th step only.
  // audit_every_step: every step, the block tables and the metadata checked and the pool audited
  // by the scheduler's incremental audit of the step's changes (Scheduler::set_audit_changes; one
  // KV cache group), with the O(blocks) audit every kAuditInterval-th step and after the last
  // (with several KV cache groups, which have no incremental audit, the O(blocks) audit every step).
  bool audit_every_step = false;
};

class Engine {
 public:
  static constexpr int kAuditEveryStepUntil = 256;
  static constexpr int kAuditInterval = 1024;
  static constexpr int kAuditFullPoolBlocks = 1 << 16;
  // The simulated clock saturates here (146 years): a step lasts at most 10^15 ns.
  static constexpr std::int64_t kMaxClockNs = std::int64_t{1} << 62;

  // donor: an engine about to be dropped (its run over, finished or not) whose storage this one
  // reuses: the scheduler's and the batch's, the step's routing and metadata. The new engine
  // starts exactly as a fresh one (base/recycled_storage.h); fuzz hands each thread's last engine on.
  explicit Engine(const Scenario& scenario, EngineOptions options = {}, Engine* donor = nullptr);

  // Sinks get every step from the next one on; the engine does not own them.
  void add_sink(StepSink* sink);

  // True once every request has arrived and finished.
  bool done();
  // Runs one step, hands it to the sinks and returns its record (valid until the next step).
  // Steps in which nothing is alive are skipped: the step counter jumps to the next arrival, so
  // step numbers match `arrival_step` (and the simulated clock jumps to the next arrival_time).
  const StepRecord& step();
  // Runs the remaining steps, then calls the sinks' on_end.
  void run_to_end();
  // After stepping by hand until done(): hands the run's totals to every sink (on_end).
  void finish();
  // After step() threw VllmCannotRun: the run ends there, the totals say where and why.
  void finish(const VllmCannotRun& stop);
  // Runs to completion and returns everything the run observed (steps, requests, logits): for
  // tests and regression-sized scenarios. Streams stay O(alive) only through sinks.
  RunRecord run();

  const Scheduler& scheduler() const { return scheduler_; }
  const InputBatch& input_batch() const { return batch_; }
  const RoutingConfig& routing_config() const { return routing_; }
  // The attention metadata of the latest step (reordered row order).
  const AttentionMetadata& attention_metadata() const { return metadata_; }
  std::int64_t now_ns() const { return now_ns_; }
  // The ids of the requests alive (and of those a step record being handed out names), by index.
  const RequestNames& request_names() const { return names_; }

 private:
  // What the summary needs of a request alive, beside its id in names_.
  struct AliveRequest {
    std::int64_t arrival_ns = 0;
    std::int64_t first_token_ns = -1;
  };
  AliveRequest& alive(ReqId id);
  void admit_arrivals();
  bool arrived(const RequestSpec& spec) const;
  std::int64_t step_duration_ns() const;
  // The step's record keeps the routing as codes (its writers word the reasons: engine/step_words.h).
  void record_step(const SchedulerOutput& out, const BatchRoute& route);
  void record_rows(const BatchRoute& route);
  void record_linear_attention(const SchedulerOutput& out);
  void record_context_chunks();
  void record_requests(const SchedulerOutput& out);
  void note_first_tokens(std::int64_t end_ns);
  void check_block_tables() const;
  void finish(Request& r, std::int64_t end_ns);
  bool full_audit_due() const;  // the scheduler's O(blocks) audit this step
  // Whether the step being run changes nothing that lasts (the idle count); before its update.
  bool made_no_progress() const;
  // Throws the VllmCannotRun of kMaxIdleSteps steps without progress, naming a request that can
  // never fit if there is one.
  [[noreturn]] void stop_without_progress() const;
  void finish_totals(RunTotals totals);
  void run_model(const SchedulerOutput& out);

  const Scenario& scenario_;
  EngineOptions options_;
  bool golden_mode_ = false;  // force_prefill_path as asked (on an fp8 cache golden mode keeps the routing)
  Scheduler scheduler_;
  InputBatch batch_;
  RoutingConfig routing_;
  std::vector<LinearAttentionRow> linear_rows_;  // reused: the rows the linear-attention split reads
  BatchRoute route_;  // this step's routing, its capacity reused
  AttentionMetadata metadata_;
  std::unique_ptr<RequestStream> arrivals_;
  RequestNames names_;  // the alive requests' ids, handed to the sinks (on_start)
  std::vector<AliveRequest> alive_;  // by the request's slot in names_
  std::vector<int> finished_ids_;  // finished by the last step: their ids leave names_ when the next one starts
  std::vector<StepSink*> sinks_;
  bool record_token_ids_ = false;  // a sink reads RequestRecord::token_ids
  std::vector<std::vector<int>> spare_lists_;  // storage of the last step's block and draft lists, reused
  int step_ = 0;
  int num_steps_run_ = 0;
  int num_arrived_ = 0;
  std::int64_t now_ns_ = 0;
  int idle_steps_ = 0;  // consecutive steps without progress (made_no_progress)
  int audit_interval_ = kAuditInterval;  // the steps between audits after the first kAuditEveryStepUntil
  StepRecord current_;
  std::vector<int> arrived_;  // since the last step, for current_.arrived
  RequestRecord finished_;
  LogitsRecord step_logits_;
  SchedulerOutput out_;
  ModelRunnerOutput model_output_;
};

}  // namespace mlasim
