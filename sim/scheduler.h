// The vLLM V1 scheduler (vllm/v1/core/sched/scheduler.py) as docs/spec/scheduler.md §1-6, §9 state it:
// schedule() -> SchedulerOutput, update_from_output() with teacher-forced samples. Synchronous
// and deterministic; owns the alive requests and drops each one once it has finished.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/flat_index_map.h"
#include "sim/kv_cache_manager.h"
#include "sim/kv_cache/kv_cache_coordinator.h"
#include "sim/request.h"
#include "sim/request_queue.h"
#include "config/scenario.h"
#include "sim/scheduler_output.h"

namespace mlasim {

// Startup validation (spec §1): "" when valid, else what is wrong. `max_model_len` is resolved.
std::string check_scheduler_config(const SchedulerConfig& config, int max_model_len);
// vLLM 0.33's KV cache check at engine start (v1/core/kv_cache_planning.py:50-87, 1510-1559): ""
// when the usable blocks (num_gpu_blocks - 1) hold cdiv(max_model_len, block_size) blocks, else
// vLLM's refusal in its words (in blocks, as mlasim has no memory sizes). Loaders call it; the
// Scheduler does not (its unit tests build small pools).
std::string check_kv_cache_startup(const SchedulerConfig& config, int max_model_len);
// num_gpu_blocks when a scenario leaves it unset (it stands for what vLLM profiles): 8192, or with
// the start-up check the smallest pool that passes it when that is more. max_model_len resolved.
int default_num_gpu_blocks(const SchedulerConfig& config);
// The part of it about long_prefill_token_threshold (vs max_model_len and 1 + k).
std::string check_long_prefill_token_threshold(const SchedulerConfig& config, int max_model_len);
// "" when vLLM accepts the request, else why not: a non-empty prompt shorter than max_model_len,
// 1 <= max_tokens, min_tokens <= max_tokens (vLLM's SamplingParams; min_tokens past max_model_len
// is allowed: the length cap is checked first, and vLLM accepts it). Nothing about KV blocks:
// vLLM accepts a request its cache may never hold, and the replay stops where its scheduler
// makes no progress (Scheduler::can_never_fit). add_request() aborts on a request that fails
// this; loaders check first.
std::string check_request(const RequestLimits& request, const SchedulerConfig& config, int max_model_len);
// The fix to suggest for a check_request problem.
std::string check_request_hint(const std::string& problem);
// Whether the request certainly fits the usable KV blocks however it runs: its prompt, max_tokens
// and 2k draft slots (at most max_model_len tokens) in num_gpu_blocks - 1 blocks. A bound for
// trace generators (fuzz) that want traces every request of which completes; not a refusal.
bool request_always_fits(const RequestLimits& request, const SchedulerConfig& config, int max_model_len);

int lookahead_tokens(const SchedulerConfig& config);
int hash_lookahead_tokens(const SchedulerConfig& config);

class Scheduler;

// How a scheduler starts: with its incremental audit on or off (set_audit_changes; its per-block
// state is built only when on), and with a donor, a scheduler about to be dropped whose storage
// (its block pool's, its per-step scratch) this one reuses, starting exactly as a fresh one
// (base/recycled_storage.h).
struct SchedulerStart {
  bool audit_changes = true;
  Scheduler* donor = nullptr;
};

class Scheduler {
 public:
  // config.max_model_len must be > 0 here (resolve 0 to the model's length first).
  explicit Scheduler(const SchedulerConfig& config, SchedulerStart start = {});
  // Resolves max_model_len 0 to model.max_position_embeddings.
  Scheduler(const SchedulerConfig& config, const ModelConfig& model, SchedulerStart start = {});

  // Adds a WAITING request; its arrival order is the order of add_request calls.
  void add_request(Request request);

  // One scheduling step. The overload taking an output reuses its vectors' capacity.
  SchedulerOutput schedule();
  void schedule(SchedulerOutput& out);

  // Applies the model runner's samples for the output of the latest schedule(): spec-decode
  // rollback, token appends with stop checks, drafts for the next step. Returns the requests
  // that finished (in scheduling order), moved out of the scheduler with their final data.
  std::vector<Request> update_from_output(const SchedulerOutput& out, const ModelRunnerOutput& model_output);

  // Accessors.
  const SchedulerConfig& config() const { return config_; }
  int max_model_len() const { return max_model_len_; }
  // KV slots reserved past the scheduled tokens for the drafter: k for MTP, 0 for n-gram.
  int num_lookahead_tokens() const { return num_lookahead_tokens_; }
  // Tokens after each block that its prefix-cache hash covers (0 or 1).
  int num_hash_lookahead_tokens() const { return num_hash_lookahead_tokens_; }
  int step() const { return step_; }  // schedule() calls so far
  const std::vector<Request*>& running() const { return running_; }
  std::vector<const Request*> waiting() const { return waiting_.in_order(); }
  int num_waiting() const { return waiting_.size(); }
  int num_alive_requests() const { return num_alive_; }
  bool has_unfinished_requests() const { return num_alive_ > 0; }
  // Every request added and not finished (running, waiting, preempted), by request id.
  std::vector<const Request*> alive_requests() const;
  const Request* request(ReqId id) const;  // nullptr once finished (dropped) or unknown
  std::span<const int> block_ids(ReqId id) const;
  int num_free_blocks() const { return pool_->get_num_free_blocks(); }
  int num_usable_blocks() const { return pool_->num_usable_blocks(); }
  const BlockPool& block_pool() const { return *pool_; }
  const KVCacheManager& kv_cache_manager() const { return kv_; }
  // The KV cache manager over the layout's groups; nullptr with one group (kv_cache_manager()).
  const GroupedKVCacheManager* grouped_kv_cache_manager() const { return grouped_.get(); }
  // Tokens per prefix-cache block hash: block_size, or the layout's hash_block_size.
  int hash_block_size() const { return hash_block_size_; }
  // The requests of the latest output, aligned with its num_scheduled_tokens (for teacher forcing).
  std::span<Request* const> scheduled_requests() const { return scheduled_reqs_; }

  // Whether vLLM can never compute this request's known tokens again, so it never samples or
  // finishes: they need more KV blocks than the pool's usable ones (num_gpu_blocks - 1),
  // cdiv(min(num_tokens + lookahead, max_model_len), block_size), the most allocate_slots asks of a
  // request that computes its last known token (kv_cache_manager.py, docs/spec/scheduler.md §9).
  // num_tokens only grows, so once true it stays true.
  bool can_never_fit(const Request& r) const;

  // Full O(blocks) audit: pool consistency and every block owned or cached, none owned twice by
  // one request, ref counts = owners. Runs after every step when audit_every_step (default on).
  void audit() const;
  void set_audit_every_step(bool on) { audit_every_step_ = on; }
  // The incremental audit, after every step while on (one KV cache group only; on by default
  // there): the blocks that changed (BlockPool::audit_changes) and, for every block a table gained
  // or lost, ref count == owners, the owners kept from the tables' changes alone. O(the step's
  // changes + rows). Turning it on counts the owners of the tables as they are.
  void set_audit_changes(bool on);
  bool audits_changes() const { return delta_audit_; }
  // Seeded prompts given by length keep their ids undrawn (Request::unwritten_prompt): their
  // positions are reserved and their block hashes come from the generator's streams. For a dry run
  // nothing of which reads prompt ids (the outputs' views of a prompt, NewRequestData's, then hold
  // zeros); set before the first step. Off by default.
  void set_prompt_ids_on_demand(bool on) { prompt_ids_on_demand_ = on; }

 private:
  enum class Kind : unsigned char { kRunning, kNew, kResumed };
  struct Scheduled {
    // Built in place by emplace_back (a temporary copied into the vector stalls on store forwarding).
    Scheduled(Request* r, int n, int blocks_before, Kind k, bool padded = false)
        : req(r), num_new_tokens(n), num_blocks_before(blocks_before), kind(k), padded_drafts(padded) {}
    Request* req;
    int num_new_tokens;
    int num_blocks_before;  // table length before this step's allocation (running requests)
    Kind kind;
    bool padded_drafts;  // a one-token admission padded to 1 + k with placeholder drafts
  };

  void schedule_running(int& budget, int threshold);
  int running_num_new_tokens(const Request& r, int budget, int threshold) const;
  // A waiting request's prefix-cache hit in tokens (hit_blocks_ or group_hits_ hold its blocks).
  int prefix_hit(Request& r);
  // The Mamba split of an admission; false when nothing is left (the admission loop stops).
  bool split_admission(const Request& r, int num_new_computed, int& n, bool& padded) const;
  void schedule_waiting(int& budget, int threshold);
  void schedule_waiting_requests(int& budget, int threshold, int k, bool running_scheduled,
                                 std::vector<Request*>& skipped);
  void init_grouped();
  void preempt(Request* r);
  void free_blocks(Request& r);
  bool allocate_running(Request& r, int num_new_tokens);
  bool allocate_waiting(Request& r, int num_new_tokens, int num_lookahead, int num_new_computed);
  // scheduler.py:546-654 _mamba_block_aligned_split: a prefill chunk of a layout with Mamba groups in
  // "align" mode ends where a state can be cached.
  int mamba_block_aligned_split(const Request& r, int num_new_tokens, int num_new_local_computed_tokens) const;
  // The step's SchedulerOutput from scheduled_, then _update_after_schedule (each request's nct
  // advances once its data is written; scheduled_reqs_ lists them in scheduled_'s order).
  void build_output(SchedulerOutput& out);
  void fill_group_block_ids(SchedulerOutput& out);
  void audit_grouped() const;
  bool check_stop(Request& r) const;
  // Whether check_stop may stop the request on its last token: false for most tokens (no length
  // cap reached, not EOS, no stop ids), which then skip the call.
  bool may_stop(const Request& r) const {
    return r.num_tokens() >= max_model_len_ || r.num_output_tokens() >= r.max_tokens ||
           (!r.ignore_eos && r.all_token_ids.back() == r.eos_token_id) || !r.stop_token_ids.empty();
  }
  void check_step_invariants(int total) const;  // the step's budget, running list and block counts
  // A scheduled request's tokens and KV slots (build_output checks each before writing its data).
  void check_scheduled_invariants(const Scheduled& s) const;
  void count_table_growth();   // end of schedule(): the blocks each scheduled table gained
  void audit_changes();        // end of update_from_output()

  SchedulerConfig config_;
  int max_model_len_;
  int num_lookahead_tokens_;       // lookahead_tokens(config_), read on every row of every step
  int num_hash_lookahead_tokens_;  // hash_lookahead_tokens(config_)
  KVCacheManager kv_;
  // Several KV cache groups: vLLM's coordinator and managers; kv_ is then unused (a 2-block pool).
  std::unique_ptr<GroupedKVCacheManager> grouped_;
  const BlockPool* pool_;  // kv_'s or grouped_'s
  int hash_block_size_;
  // Mamba "align" mode (scheduler.py:430-466): chunks end on state boundaries of this many tokens
  // (cache_config.block_size once vLLM sets it to the smallest prefix-cacheable group's, v1/engine/core.py:341-349).
  bool mamba_aligned_split_ = false;
  int mamba_split_block_size_ = 0;
  bool mamba_has_prefill_checkpoint_blocks_ = false;
  int mamba_prefill_checkpoint_alignment_ = 0;
  // The alive requests by slot (Request::slot), null where free: add_request gives a request the
  // lowest free slot, or a new one; it is freed when the request finishes (its memory with it, so
  // memory follows the requests alive), and the free slots past the last alive one are dropped. The
  // step path reaches requests by pointer and the outputs carry their slots, so only add_request
  // and request(id) look an id up (slot_of_).
  std::vector<std::unique_ptr<Request>> slots_;
  std::vector<int> free_slots_;  // a min-heap; entries past slots_ are stale
  FlatIndexMap slot_of_;  // key: ReqId as uint32
  int num_alive_ = 0;
  std::vector<int> finished_slots_;  // of finished_req_ids_
  std::vector<Request*> running_;
  RequestQueue waiting_;
  std::vector<ReqId> finished_req_ids_;  // since the last schedule()
  std::int64_t next_arrival_ = 0;
  int step_ = 0;
  bool output_pending_ = false;  // schedule() ran, update_from_output() not yet
  bool audit_every_step_ = true;
  bool prompt_ids_on_demand_ = false;

  // Per-step scratch, reused.
  bool prefill_scheduled_ = false;  // a running request scheduled this step was a prefill chunk
  std::vector<Scheduled> scheduled_;
  std::vector<Request*> preempted_;
  std::vector<Request*> scheduled_reqs_;
  std::vector<Request*> stopped_reqs_;  // update_from_output: the requests this step stopped
  std::vector<int> hit_blocks_;
  GroupBlocks group_hits_;                                // grouped: this admission's hits
  // grouped: each running request's new blocks this step, by slot; a slot's entry is this step's
  // where step_new_blocks_at_[slot] == step_.
  std::vector<GroupBlocks> step_new_blocks_;
  std::vector<int> step_new_blocks_at_;
  // audit()'s per-block owner counts and last owner, kept between audits: a pool of more than
  // 32768 blocks would otherwise be mapped and unmapped by every audit.
  mutable std::vector<int> audit_owners_, audit_last_owner_;
  // The incremental audit: owners per block kept from the tables' growth and frees, and the blocks
  // whose owners changed since the last audit_changes().
  bool delta_audit_ = false;
  std::vector<int> delta_owners_;
  std::vector<int> delta_changed_;
};

}  // namespace mlasim
