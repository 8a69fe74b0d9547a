// The replay step loop (the step's record: engine/step_record.cpp).
#include "engine/engine.h"

#include <algorithm>
#include <cmath>
#include <span>

#include "attention/backend.h"
#include "attention/batch_order_v2.h"
#include "attention/kv_cache_quant.h"
#include "base/check.h"
#include "base/recycled_storage.h"
#include "sim/teacher_forcing.h"
#include "engine/run_collector.h"

namespace mlasim {
namespace {

// No scheduler decision depends on time, so a step that makes no progress with requests alive
// (it schedules nothing, or only requests that can never fit) would repeat forever in vLLM too;
// the replay stops after this many in a row, as tools/conformance's driver stops vLLM.
constexpr int kMaxIdleSteps = 1000;

// The steps between O(blocks) audits past the first kAuditEveryStepUntil: past kAuditFullPoolBlocks
// blocks the interval grows with the pool, so the audit's cost per step stays bounded (a
// 2^24-block pool).
int audit_interval_for(int num_gpu_blocks) {
  return num_gpu_blocks <= Engine::kAuditFullPoolBlocks
             ? Engine::kAuditInterval
             : Engine::kAuditInterval * (num_gpu_blocks / Engine::kAuditFullPoolBlocks);
}

// Whether any sink wants what `wants` asks (token ids): they cost time to build.
bool any_sink_wants(const std::vector<StepSink*>& sinks, bool (StepSink::*wants)() const) {
  return std::any_of(sinks.begin(), sinks.end(), [wants](const StepSink* s) { return (s->*wants)(); });
}

}  // namespace

Engine::Engine(const Scenario& scenario, EngineOptions options, Engine* donor)
    : scenario_(scenario),
      options_(options),
      // The incremental audit where every step is audited (fuzz, pinned checks), and over the first
      // kAuditEveryStepUntil steps of a long replay (a pool of at most kAuditFullPoolBlocks
      // blocks), which then keeps to the sampled O(blocks) audit, whose cost does not grow with the
      // trace.
      scheduler_(scenario.scheduler, scenario.model,
                 SchedulerStart{options.audit_every_step ||
                                    audit_interval_for(scenario.scheduler.num_gpu_blocks) == kAuditInterval,
                                donor ? &donor->scheduler_ : nullptr}),
      batch_(donor ? InputBatch(/*track_token_ids=*/options.backend != nullptr, donor->batch_)
                   : InputBatch(/*track_token_ids=*/options.backend != nullptr)),
      routing_(make_routing_config(scenario)),
      arrivals_(open_request_stream(scenario)) {
  routing_.row_reasons = false;  // the records keep the routing as codes; their writers word it
  if (donor) {
    // Rebuilt in full every step (route_batch, build_attention_metadata): handed on whole.
    route_ = std::move(donor->route_);
    metadata_ = std::move(donor->metadata_);
    take_capacity(linear_rows_, donor->linear_rows_);
    spare_lists_.swap(donor->spare_lists_);  // spare storage: its contents are never read
    take_capacity(alive_, donor->alive_);
    take_capacity(finished_ids_, donor->finished_ids_);
    take_capacity(arrived_, donor->arrived_);
  }
  // Golden mode on an fp8 KV cache follows the routing: the decode form reads every key from the
  // quantized cache while the prefill form's new keys are exact, so the forms are not the same
  // computation there (docs/spec/mla.md §11).
  golden_mode_ = options_.force_prefill_path;
  if (options_.force_prefill_path && scenario_kv_cache_quant(scenario).quant.quantized()) options_.force_prefill_path = false;
  audit_interval_ = audit_interval_for(scenario.scheduler.num_gpu_blocks);
}

void Engine::add_sink(StepSink* sink) {
  sink->on_start(names_);
  sinks_.push_back(sink);
  record_token_ids_ = any_sink_wants(sinks_, &StepSink::wants_token_ids);
}

Engine::AliveRequest& Engine::alive(ReqId id) {
  const int slot = names_.slot(id);
  MLASIM_CHECK(slot >= 0, "request " + std::to_string(id) + " is not alive");
  return alive_[static_cast<std::size_t>(slot)];
}

bool Engine::done() { return arrivals_->peek() == nullptr && !scheduler_.has_unfinished_requests(); }

bool Engine::arrived(const RequestSpec& spec) const {
  return scenario_.timed_arrivals ? spec.arrival_time_ns.value_or(0) <= now_ns_ : spec.arrival_step <= step_;
}

void Engine::admit_arrivals() {
  if (!scheduler_.has_unfinished_requests()) {
    if (const RequestSpec* next = arrivals_->peek()) {
      if (scenario_.timed_arrivals)
        now_ns_ = std::max(now_ns_, next->arrival_time_ns.value_or(0));
      else
        step_ = std::max(step_, next->arrival_step);
    }
  }
  while (const RequestSpec* next = arrivals_->peek()) {
    if (!arrived(*next)) break;
    const int index = arrivals_->peek_index();
    RequestSpec spec = arrivals_->pop();
    scheduler_.add_request(make_request(spec, scenario_.model, index));
    // A timed request arrived at its time (it may wait for the step that admits it); a request
    // arriving by step arrives when that step starts.
    const std::int64_t arrival = scenario_.timed_arrivals ? spec.arrival_time_ns.value_or(0) : now_ns_;
    arrived_.push_back(index);
    const auto slot = static_cast<std::size_t>(names_.add(index, std::move(spec.id)));
    if (slot >= alive_.size()) alive_.resize(slot + 1);
    alive_[slot] = AliveRequest{arrival, -1};
    ++num_arrived_;
  }
}

std::int64_t Engine::step_duration_ns() const {
  const TimingConfig& t = scenario_.timing;
  long long context = 0;
  int rows = 0;
  for (const BatchRow& row : batch_.rows()) {
    if (row.num_scheduled_tokens == 0) continue;
    context += row.num_computed_tokens + row.num_scheduled_tokens;
    ++rows;
  }
  const double us = t.fixed_us + t.per_scheduled_token_us * out_.total_num_scheduled_tokens +
                    t.per_context_token_us * static_cast<double>(context) + t.per_request_us * rows;
  // Capped at 10^15 ns (11.6 days) a step, so the clock's arithmetic stays in 64 bits.
  return std::llround(std::min(us * 1000.0, 1e15));
}

const StepRecord& Engine::step() {
  MLASIM_CHECK(!done(), "Engine::step called after the run finished");
  for (int index : finished_ids_) names_.drop(index);  // the last step's record no longer needs them
  finished_ids_.clear();
  // A dry run whose sinks read no token ids draws no prompt ids; decided once, before the scheduler
  // looks at a request, so every block hash of the run is made one way.
  if (num_steps_run_ == 0) scheduler_.set_prompt_ids_on_demand(options_.backend == nullptr && !record_token_ids_);
  admit_arrivals();
  if (num_steps_run_ == kAuditEveryStepUntil && !options_.audit_every_step && scheduler_.audits_changes())
    scheduler_.set_audit_changes(false);  // a long replay's first steps are behind it
  const bool audit = full_audit_due();
  scheduler_.set_audit_every_step(audit);
  // The batch's block tables and the attention metadata: on those steps, and on every step the
  // incremental audit checks (all with audit_every_step).
  const bool check_step = audit || options_.audit_every_step || scheduler_.audits_changes();
  try {
    scheduler_.schedule(out_);
  } catch (const VllmCannotRun& e) {  // named by the engine's step and the request's id
    throw VllmCannotRun(step_, (e.request >= 0 ? "request " + names_[e.request] + ": " : "") + e.reason);
  }
  batch_.update(out_);
  if (check_step) check_block_tables();
  // V1: reorder the persistent batch (swaps persist). V2: sort the rows afresh, no reorder. Then
  // split and build the step's metadata.
  const bool v2 = routing_.model_runner == ModelRunner::kV2;
  if (v2) order_batch_v2(batch_, out_, 1 + routing_.num_speculative_tokens);
  route_batch(batch_, routing_, /*reorder=*/!v2, route_);
  const BatchRoute& route = route_;
  // Positions, block tables and slot mapping are for the model's kernels: without a model, built
  // only on the audited steps, where the check below reads them.
  const MetadataDetail detail = options_.backend != nullptr || check_step ? MetadataDetail::kFull : MetadataDetail::kRows;
  build_attention_metadata(metadata_, route, routing_, [this](int row) { return batch_.block_ids(row); }, detail);
  // The metadata's consistency check walks every token: on the audited steps, as the block pool's.
  if (check_step) {
    const std::string problem = metadata_.validate();
    MLASIM_CHECK(problem.empty(), "inconsistent attention metadata at step " + std::to_string(step_) + ": " + problem);
  }
  record_step(out_, route_);
  const std::int64_t end_ns = std::min(now_ns_ + current_.duration_ns, kMaxClockNs);
  step_logits_.index.clear();
  step_logits_.values.clear();
  step_logits_.values_f64.clear();
  if (options_.backend) run_model(out_);
  teacher_force(scheduler_, out_, model_output_);
  batch_.add_sampled_tokens(out_, model_output_);
  note_first_tokens(end_ns);
  const bool no_progress = made_no_progress();  // judged on the requests as scheduled
  std::vector<Request> finished = scheduler_.update_from_output(out_, model_output_);
  for (const Request& r : finished) current_.finished.push_back(r.request_id);
  idle_steps_ = no_progress ? idle_steps_ + 1 : 0;
  if (options_.backend)
    for (StepSink* s : sinks_) s->on_logits(step_logits_);
  for (StepSink* s : sinks_) s->on_step(current_);
  for (Request& r : finished) finish(r, end_ns);
  now_ns_ = std::min(end_ns, kMaxClockNs);
  ++step_;
  ++num_steps_run_;
  if (scheduler_.audits_changes() && done()) scheduler_.audit();  // the pool as the run leaves it, whole
  // After the step is recorded, as the driver records vLLM's step before it gives up.
  if (idle_steps_ >= kMaxIdleSteps) stop_without_progress();  // as tools/conformance's driver (MAX_IDLE_STEPS)
  return current_;
}

bool Engine::full_audit_due() const {
  // With the incremental audit (one KV cache group): with audit_every_step every interval-th step
  // and after the last (step()); over a long replay's first kAuditEveryStepUntil steps, the first
  // and the last of them. Otherwise every interval-th step, and every step with audit_every_step
  // (several KV cache groups) or (several groups again) within the first kAuditEveryStepUntil.
  const int n = num_steps_run_;
  if (scheduler_.audits_changes())
    return options_.audit_every_step ? (n + 1) % audit_interval_ == 0 : n == 0 || n == kAuditEveryStepUntil - 1;
  return options_.audit_every_step || n % audit_interval_ == 0 ||
         (n < kAuditEveryStepUntil && audit_interval_ == kAuditInterval);
}

bool Engine::made_no_progress() const {
  // Tokens scheduled only for requests that already could never fit change nothing that lasts:
  // such a request never samples again, and is preempted or left waiting once the pool runs out.
  // Judged before the step's update, so a step that samples the token that outgrows the pool
  // still counts as progress.
  for (const auto& [id, n] : out_.num_scheduled_tokens) {
    const Request* r = scheduler_.request(id);
    if (r == nullptr || !scheduler_.can_never_fit(*r)) return false;
  }
  return true;
}

void Engine::stop_without_progress() const {
  const std::string idle = "no progress for " + std::to_string(kMaxIdleSteps) + " steps: ";
  for (const Request* r : scheduler_.alive_requests()) {
    if (!scheduler_.can_never_fit(*r)) continue;
    const SchedulerConfig& c = scheduler_.config();
    const int known = r->pending_prompt ? r->num_prompt_tokens : r->num_tokens();
    const long long tokens = std::min<long long>(static_cast<long long>(known) + scheduler_.num_lookahead_tokens(),
                                                 scheduler_.max_model_len());
    const long long blocks = (tokens + c.block_size - 1) / c.block_size;
    throw VllmCannotRun(
        step_ - 1,
        "request " + names_[r->request_id] + ": " + idle + "its " + std::to_string(known) +
            " tokens need " + std::to_string(blocks) + " KV blocks of " + std::to_string(c.block_size) +
            " to be computed, and only " + std::to_string(scheduler_.num_usable_blocks()) +
            " are usable (num_gpu_blocks - 1, the null block): vLLM's KVCacheManager.allocate_slots can never "
            "allocate them (" + std::string(kVllmAllocateSlotsFails) + "), so its scheduler preempts the request (" +
            kVllmPreemptsWhenAllocationFails + ") or leaves it waiting (" + kVllmWaitingAllocationFails +
            ") for ever");
  }
  throw VllmCannotRun(step_ - 1, idle + "requests wait and none can be scheduled; vLLM's scheduler waits "
                                        "forever here too (in 0.33 e.g. a padded one-token admission over the token budget, "
                                        "\"Prefer to not schedule than schedule un-padded\", vllm/v1/core/sched/"
                                        "scheduler.py ~1326)");
}

void Engine::run_to_end() {
  while (!done()) step();
  finish();
}

void Engine::finish() { finish_totals({}); }

void Engine::finish(const VllmCannotRun& stop) {
  RunTotals totals;
  totals.stopped_step = stop.step;
  totals.stopped_reason = stop.reason;
  if (stop.step == step_) totals.arrived_at_stop = arrived_;  // a failing schedule(): its step's arrivals
  for (const Request* r : scheduler_.alive_requests()) {
    Request copy = *r;  // a prompt given by length the scheduler has not looked at yet is drawn here
    materialize_prompt(copy);
    write_prompt_ids(copy);
    const AliveRequest& a = alive(r->request_id);
    RequestRecord rec;
    rec.index = r->request_id;
    rec.id = names_[r->request_id];
    rec.status = to_string(r->status);
    rec.num_prompt_tokens = r->num_prompt_tokens;
    rec.num_tokens = copy.num_tokens();
    rec.token_ids = std::move(copy.all_token_ids);
    rec.num_preemptions = r->num_preemptions;
    rec.stop_reason = r->stop_reason;
    rec.num_computed_tokens = r->num_computed_tokens;
    rec.arrival_ns = a.arrival_ns;
    rec.first_token_ns = a.first_token_ns;
    totals.unfinished_at_stop.push_back(std::move(rec));
  }
  finish_totals(totals);
}

void Engine::finish_totals(RunTotals totals) {
  totals.num_steps = num_steps_run_;
  totals.num_requests = num_arrived_;
  totals.end_ns = now_ns_;
  for (StepSink* s : sinks_) s->on_end(totals);
}

RunRecord Engine::run() {
  RecordCollector collector(scenario_);
  add_sink(&collector);
  run_to_end();
  sinks_.erase(std::find(sinks_.begin(), sinks_.end(), &collector));
  record_token_ids_ = any_sink_wants(sinks_, &StepSink::wants_token_ids);
  return collector.take();
}

void Engine::note_first_tokens(std::int64_t end_ns) {
  // A request's first output token is the first one the model runner sampled for it, which is in
  // the step its prompt completes (a partial chunk samples nothing, teacher_force; a decode row or
  // a recomputed prompt after preemption has sampled before). Only those rows are looked up.
  for (const BatchRow& row : batch_.rows()) {
    if (row.num_computed_tokens >= row.num_prompt_tokens ||
        row.num_computed_tokens + row.num_scheduled_tokens < row.num_prompt_tokens)
      continue;
    AliveRequest& a = alive(row.req_id);
    if (a.first_token_ns < 0) a.first_token_ns = end_ns;
  }
}

void Engine::check_block_tables() const {
  // The batch keeps its block tables from the scheduler's outputs alone (as vLLM's model runner
  // does); on audited steps they must equal the scheduler's own.
  for (int row = 0; row < batch_.num_reqs(); ++row) {
    const ReqId id = batch_.rows()[static_cast<std::size_t>(row)].req_id;
    const std::span<const int> ours = batch_.block_ids(row), theirs = scheduler_.block_ids(id);
    MLASIM_CHECK(std::equal(ours.begin(), ours.end(), theirs.begin(), theirs.end()),
                 "step " + std::to_string(step_) + ": the input batch's block table of request " + names_[id] +
                     " differs from the scheduler's");
  }
}

void Engine::finish(Request& r, std::int64_t end_ns) {
  const AliveRequest& a = alive(r.request_id);
  RequestRecord& rec = finished_;
  rec.index = r.request_id;
  rec.id = names_[r.request_id];
  finished_ids_.push_back(r.request_id);
  rec.status = to_string(r.status);
  rec.num_prompt_tokens = r.num_prompt_tokens;
  rec.num_tokens = r.num_tokens();
  if (record_token_ids_) {
    write_prompt_ids(r);
    rec.token_ids = r.all_token_ids;
  } else {
    rec.token_ids.clear();
  }
  rec.num_preemptions = r.num_preemptions;
  rec.stop_reason = r.stop_reason;
  rec.arrival_ns = a.arrival_ns;
  rec.first_token_ns = a.first_token_ns >= 0 ? a.first_token_ns : end_ns;
  rec.finish_ns = end_ns;
  for (StepSink* s : sinks_) s->on_request_finished(rec);
}

void Engine::run_model(const SchedulerOutput& out) {
  // Token ids per token in reordered row order: the request's known tokens, then its drafts.
  std::vector<int> token_ids;
  token_ids.reserve(static_cast<std::size_t>(out.total_num_scheduled_tokens));
  struct Sample {
    ReqId id;
    int row, num_tokens, last_position;
  };
  std::vector<Sample> samples;
  const auto rows = batch_.rows();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const BatchRow& row = rows[i];
    const std::span<const int> known_ids = batch_.token_ids(static_cast<int>(i));
    const std::vector<int>* drafts = nullptr;
    for (const auto& [id, d] : out.scheduled_spec_decode_tokens)
      if (id == row.req_id) drafts = &d;
    const int known = static_cast<int>(known_ids.size());
    for (int j = 0; j < row.num_scheduled_tokens; ++j) {
      const int pos = row.num_computed_tokens + j;
      if (pos < known) {
        token_ids.push_back(known_ids[static_cast<std::size_t>(pos)]);
      } else {
        MLASIM_CHECK(drafts && pos - known < static_cast<int>(drafts->size()), "a scheduled position has no token");
        // Placeholder drafts (-1) are clamped to 0 before the embedding lookup, as vLLM's runner does.
        token_ids.push_back(std::max(0, (*drafts)[static_cast<std::size_t>(pos - known)]));
      }
    }
    const int end = row.num_computed_tokens + row.num_scheduled_tokens;
    if (end >= known) {  // not a partial prefill chunk: samples the last token and every draft
      const int num_drafts = drafts ? static_cast<int>(drafts->size()) : 0;
      samples.push_back({row.req_id, static_cast<int>(i), 1 + num_drafts, end - 1});
    }
  }
  // Canonical order: scenario request order, so logits line up whatever the reorder did.
  std::sort(samples.begin(), samples.end(), [](const Sample& a, const Sample& b) { return a.id < b.id; });
  StepInputs in;
  in.metadata = &metadata_;
  in.token_ids = token_ids;
  in.force_prefill_path = options_.force_prefill_path;
  // Golden mode computes the model (its top-k) whatever the routing: a dense_mha run then differs.
  in.prefill_rows_dense = routing_.sparse_dense_mha_any_length && !golden_mode_;
  for (const Sample& sm : samples) {
    in.sample_rows.push_back(sm.row);
    in.num_sample_tokens.push_back(sm.num_tokens);
  }
  StepOutputs outputs = options_.backend->run_step(in);
  LogitsRecord& rec = step_logits_;
  rec.vocab_size = outputs.vocab_size;
  for (const Sample& sm : samples)
    for (int k = sm.num_tokens - 1; k >= 0; --k) rec.index.push_back({step_, sm.id, sm.last_position - k});
  std::size_t wanted = 0;
  for (const Sample& sm : samples) wanted += static_cast<std::size_t>(sm.num_tokens);
  MLASIM_CHECK(outputs.logits.size() == wanted * static_cast<std::size_t>(outputs.vocab_size),
               "the backend returned a different number of logit rows than requested");
  rec.values.insert(rec.values.end(), outputs.logits.begin(), outputs.logits.end());
  rec.values_f64.insert(rec.values_f64.end(), outputs.logits_f64.begin(), outputs.logits_f64.end());
}

}  // namespace mlasim
