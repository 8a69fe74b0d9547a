// A scenario (schema version 1, docs/design.md "Scenario YAML") as plain structs. Every default is
// vLLM's where vLLM has one; scenarios/README.md documents each key.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/backend_selection.h"
#include "config/kv_cache_layout.h"
#include "config/deployment.h"
#include "config/engine_enums.h"
#include "config/model_config.h"

namespace mlasim {

inline constexpr int kScenarioVersion = 1;

enum class SchedulingPolicy { kFcfs, kPriority };
// vLLM's SpeculativeConfig.method for the drafts of num_speculative_tokens: DeepSeek's MTP
// reserves k lookahead KV slots per allocation (config/vllm.py num_lookahead_tokens ~626-650);
// n-gram prompt lookup reserves none.
enum class SpeculativeMethod { kMtp, kNgram };

// Scheduler behaviour that changed across vLLM releases (docs/spec/scheduler.md §9). Every field
// defaults to vLLM 0.33.0's behaviour; the engine profile selects its release's rules
// (scheduler_rules_for in sim/scheduler_rules.h). Line numbers: vLLM 0.33.0.
struct SchedulerRules {
  // v1/core/sched/scheduler.py ~757-763: long_prefill_token_threshold is not applied when only
  // one request is running plus waiting.
  bool lone_request_skips_long_prefill_threshold = true;
  // config/scheduler.py ~190, kv_cache_manager.py ~531: a waiting request is admitted only when
  // blocks for its whole sequence are free. The scenario key scheduler_reserve_full_isl sets it.
  bool scheduler_reserve_full_isl = true;
  // v1/core/block_pool.py ~836-847: freed blocks without a hash (or with caching off) go to the
  // front of the free queue, hashed ones to the back.
  bool free_unhashed_blocks_first = true;
  // scheduler.py ~1308-1330, ~1578: with speculation, a waiting request needing one token is
  // scheduled with 1 + k tokens and k placeholder drafts (-1).
  bool pad_one_token_spec_admission = true;
  // scheduler.py ~935-990: under the priority policy a victim before the cursor steps it back,
  // and a request that preempted itself lets the next running request try.
  bool priority_preemption_continues = true;
  // v1/core/sched/utils.py check_stop ~105-126: EOS, stop ids, then the length cap (vLLM 0.11:
  // the length cap first).
  bool eos_checked_before_length = true;
  // v1/core/kv_cache_utils.py ~966-1016, config/vllm.py ~680-700: with MTP drafts and prefix
  // caching, each block hash also covers the token after the block (the drafter's KV at the
  // block's last position depends on it), so a block is hashed, cached and hit only once that
  // token exists and matches.
  bool mtp_block_hashes_cover_next_token = true;
  // scheduler.py ~2403-2415, ~2757-2762: with speculation, every request that sampled has its full
  // blocks up to nct cached right after the update (accepted drafts included), and a stop rolls
  // nct back by the tokens it discarded.
  bool spec_caches_blocks_after_update = true;
  // scheduler.py ~1403-1406: a waiting request is allocated its k lookahead slots on admission.
  // Up to vLLM 0.22 only one with computed tokens was (0.11.0 scheduler.py:456-458).
  bool fresh_admission_gets_lookahead_slots = true;
  // scheduler.py ~1338-1345: with chunked prefill off, a waiting request over the remaining budget
  // ends phase B. Up to vLLM 0.13 it was skipped and the requests behind it were tried; the skipped
  // ones went back to the front of the queue (0.11.0 scheduler.py:431-435, 540-541).
  bool chunked_prefill_off_stops_waiting = true;
  // scheduler.py ~935-941: a priority victim already scheduled this step leaves the step (its
  // tokens return to the budget). vLLM 0.11.0 kept it in the step while preempting it
  // (scheduler.py:262-300), a step its model runner cannot take: mlasim stops there (VllmCannotRun).
  bool priority_victim_leaves_step = true;
  // With MTP (an EAGLE-family drafter, SpeculativeConfig.use_eagle) and prefix caching, vLLM up to
  // 0.22 dropped the last block of every prefix-cache hit (single_type_kv_cache_manager.py, 0.11.0
  // :282-284); 0.33 hashes the token after each block instead (mtp_block_hashes_cover_next_token).
  bool eagle_drops_last_hit_block = false;
  // vLLM 0.11.1-0.18 checked min_tokens first in check_stop (v1/core/sched/utils.py:46-47 in
  // 0.16.0): before min_tokens outputs not even max_model_len stops a request, which then waits
  // at max_model_len for ever. 0.33 checks it last (~121-127), after the length cap.
  bool min_tokens_defers_length_cap = false;
  // vLLM 0.8's V1 engine: its scheduler has no priority policy (SchedulingPolicy is not read: FCFS
  // whatever `policy` says) and its input processor refuses a request priority != 0 ("V1 does not
  // support priority yet.", 0.8.5 v1/engine/processor.py:211-212).
  bool priority_supported = true;
  // vLLM 0.33 (v1/core/kv_cache_planning.py:1510-1559) refuses to start unless the usable blocks
  // (num_gpu_blocks, num_gpu_blocks_override included, less the null block) hold one request of
  // max_model_len tokens. Not modelled for the older releases.
  bool startup_checks_usable_blocks = true;
  // vLLM 0.8's V1 scheduler never reads enable_chunked_prefill: it chunks every prompt to the budget
  // (0.8.5 v1/core/sched/scheduler.py:330-352); the config's own check (max_num_batched_tokens >=
  // max_model_len with chunking off) still applies.
  bool chunked_prefill_always_on = false;
  // vLLM 0.8's V1 engine runs n-gram and EAGLE speculation only; MTP falls back to the V0 engine
  // (0.8.5 engine/arg_utils.py:1423-1442), which mlasim does not model: refused.
  bool v1_runs_mtp = true;
  // vLLM 0.8 freed a finished or preempted request's blocks in table order when prefix caching
  // was off (0.8.5 v1/core/kv_cache_manager.py:305-312); later releases reverse them always.
  bool free_in_order_without_caching = false;
  // vLLM 0.8 recorded a request's cached blocks counting its untrimmed drafts
  // (KVCacheManager::set_cache_count_counts_untrimmed_drafts; 0.8.5 kv_cache_manager.py:274-293).
  bool cache_count_counts_untrimmed_drafts = false;
  // A running request is scheduled at most max_model_len - 1 - nct tokens (scheduler.py ~890; from
  // vLLM 0.9); vLLM 0.8 allowed max_model_len - nct (0.8.5 v1/core/sched/scheduler.py:188-191).
  bool running_cap_reserves_sampled_token = true;
  // A preempted request's drafts are dropped. vLLM 0.8 kept them (0.8.5 scheduler.py:222-231), and
  // its allocate_slots counts them when the request is resumed (cache_count_counts_untrimmed_drafts);
  // later releases replace them before they are read again.
  bool preemption_clears_drafts = true;
};

// vllm/config/scheduler.py + cache config.
struct SchedulerConfig {
  int max_num_batched_tokens = 2048;     // vLLM SchedulerConfig default
  int max_num_seqs = 128;                // vLLM default
  int max_model_len = 0;                 // 0 in YAML means "the model's max_position_embeddings"
  bool enable_chunked_prefill = true;
  int long_prefill_token_threshold = 0;  // 0 = off
  int block_size = 16;                   // resolved: the scenario's, or vLLM 0.33's auto choice
  bool block_size_given = false;
  int num_gpu_blocks = 8192;             // vLLM profiles this; mlasim needs a number. Block 0 is the null block.
  bool enable_prefix_caching = true;
  SchedulingPolicy policy = SchedulingPolicy::kFcfs;
  int num_speculative_tokens = 0;        // k
  SpeculativeMethod speculative_method = SpeculativeMethod::kMtp;  // DeepSeek's drafter
  SchedulerRules rules;                  // from the engine profile; scheduler_reserve_full_isl may override
  // The model's KV cache groups (cache.kv_cache_groups); none: one MLA group of block_size, the
  // scheduler's own KV cache manager. More than one: vLLM 0.33's coordinator over the groups
  // (sim/kv_cache/kv_cache_coordinator.h), block sizes resolved.
  KvCacheLayout kv_cache_layout;
  // The scenario listed the groups (cache.kv_cache_groups); else a hybrid model's come from its
  // config (config/kv_cache_plan.h, filled when the deployment resolves) and are not written back.
  bool kv_cache_groups_listed = false;
  // A planted fault for tests of the fuzzer only (no scenario key or flag sets it): a waiting
  // request may take this many tokens more than the remaining budget, so the step schedules more
  // than max_num_batched_tokens and the per-step check fails.
  int test_waiting_budget_overrun = 0;
};

struct EngineConfig {
  EngineProfile profile = EngineProfile::kVllm033;
  // The backend the replay routes with: the scenario's engine.attention_backend, or (`auto`, the
  // default) vLLM 0.33's selection for the deployment (DeploymentConfig). vLLM's default on Hopper.
  AttentionBackendKind attention_backend = AttentionBackendKind::kFlashAttnMla;
  std::optional<AttentionBackendKind> attention_backend_given;  // nullopt: auto
  std::optional<int> reorder_batch_threshold;           // overrides the backend's T
  std::optional<QueryLenSupport> query_len_support;     // overrides the backend's support
  int sglang_chunked_prefix_cache_threshold = 8192;     // SGLang default
  ModelRunner model_runner = ModelRunner::kV1;          // resolved (auto: config/scenario_deployment.h)
  std::optional<ModelRunner> model_runner_given;        // nullopt: auto
  SparseMlaPrefill sparse_mla_prefill = SparseMlaPrefill::kVllm;  // sparse models' dense-MHA prefill
};

// The deployment a scenario describes (engine.gpu, cache.kv_cache_dtype, the model, TP) and what
// vLLM 0.33 makes of it: the backend, block size and runner (config/scenario_deployment.h).
struct DeploymentConfig {
  GpuKind gpu = GpuKind::kH200;
  bool gpu_given = false;
  KvCacheDtype kv_cache_dtype = KvCacheDtype::kAuto;            // as written (cache.kv_cache_dtype)
  KvCacheDtype effective_kv_cache_dtype = KvCacheDtype::kAuto;  // after the model's verify_and_update_config
  std::string kv_cache_dtype_note;                              // why it changed, when it did
  bool selection_applies = false;  // the profile is vLLM 0.33's (vllm-0.33, strict)
  bool validated = false;          // an explicit backend was checked against the deployment
  BackendSelection selection;
  // The hybrid families' KV cache groups as vLLM 0.33 lays them out (config/kv_cache_plan.h);
  // empty for a plain MLA model (one group of scheduler.block_size).
  KvCacheLayout kv_cache_layout;
};

struct ParallelConfig {
  int tensor_parallel_size = 1;
};

// The step-time model that gives a replay its simulated clock (docs/spec/timing.md): each step
// takes fixed + per_scheduled_token x tokens scheduled + per_context_token x sum over rows of
// (nct + q) + per_request x rows. The defaults are a napkin estimate for DeepSeek-V3 on 8 x H200
// (docs/spec/timing.md derives each), not a measurement.
struct TimingConfig {
  double fixed_us = 20000;                // weights streamed once per step
  double per_scheduled_token_us = 12;     // dense + MoE compute per token
  double per_context_token_us = 0.018;    // reading one token's latent KV in every layer
  double per_request_us = 25;             // per-row host work: scheduling, input prep, sampling
};

struct RequestSpec {
  std::string id;
  int arrival_step = 0;
  // Wall-clock arrival (seconds since the trace's start, held in ns): admitted at the first step
  // that starts at or after it on the simulated clock. A scenario uses arrival_time or
  // arrival_step, never both.
  std::optional<std::int64_t> arrival_time_ns;
  std::vector<int> prompt;              // resolved: from `prompt`, or seeded from `prompt_len`
  // A requests_file request given by prompt_len keeps its prompt unresolved (prompt empty): the
  // scheduler generates it when it first looks at the request (Request::pending_prompt).
  int seeded_prompt_len = 0;
  std::vector<std::uint64_t> prompt_hash_ids;  // with seeded_prompt_len: one per block
  int prompt_hash_block_size = 512;
  int max_tokens = 16;                  // vLLM SamplingParams default
  int min_tokens = 0;
  bool ignore_eos = false;
  std::vector<int> stop_token_ids;
  std::vector<int> output;              // teacher-forced tokens; seeded past the listed ones
  bool output_given = false;            // `output` was written in the scenario
  int priority = 0;                     // lower runs first under the priority policy
  std::vector<int> accepted_drafts;     // per verification step; past the list all drafts are accepted
};

// One `expect.steps` entry; only the fields present in the YAML are checked.
struct StepExpectation {
  int step = 0;
  int line = 0, column = 0;  // where the entry is, for mismatch reports
  std::optional<std::vector<std::pair<std::string, int>>> num_scheduled_tokens;
  std::optional<int> total_num_scheduled_tokens;
  std::optional<int> num_decodes, num_decode_tokens, num_prefills, num_prefill_tokens;
  std::optional<int> num_mqa_tokens, num_mha_tokens;
  std::optional<int> num_free_blocks;
  std::optional<std::vector<std::string>> new_reqs, resumed, preempted, finished;  // `new` in YAML
  std::optional<std::vector<std::string>> order;                                  // batch rows
  std::optional<std::vector<std::pair<std::string, std::vector<int>>>> new_block_ids;
};

// One `expect.requests` entry: the request's state after the run.
struct RequestExpectation {
  std::string id;
  int line = 0, column = 0;
  std::optional<std::string> status;  // finished_stopped | finished_length_capped | ...
  std::optional<int> num_preemptions;
  std::optional<int> num_output_tokens;
  std::optional<std::vector<int>> output;
};

inline constexpr const char* kInvariantNoFreshPrefillOnDecodePath = "no_fresh_prefill_on_decode_path";
// The scheduler's per-step checks and the block pool audit, run after every step, all hold (a failed
// check is then reported as this expectation failing, at its step).
inline constexpr const char* kInvariantStepInvariants = "step_invariants";

struct Expectations {
  std::optional<int> num_steps;
  std::vector<StepExpectation> steps;
  std::vector<RequestExpectation> requests;
  std::vector<std::string> invariants;
};

struct Scenario {
  std::string source;       // file the scenario came from
  std::string name;         // defaults to the file's stem
  std::string description;
  ModelConfig model;
  SchedulerConfig scheduler;
  EngineConfig engine;
  ParallelConfig parallel;
  DeploymentConfig deployment;
  TimingConfig timing;
  // Inline requests, or (requests_file) none here: they are read from the file as the replay
  // reaches them. num_requests counts them either way.
  std::vector<RequestSpec> requests;
  std::string requests_file;  // resolved path; "" when the requests are listed inline
  int num_requests = 0;
  bool timed_arrivals = false;  // the requests give arrival_time, not arrival_step
  Expectations expect;
};

const char* to_string(SchedulingPolicy p);
const char* to_string(SpeculativeMethod m);
const char* to_string(ModelDtype d);
std::optional<SchedulingPolicy> parse_policy(const std::string& s);
std::optional<SpeculativeMethod> parse_speculative_method(const std::string& s);
std::optional<ModelDtype> parse_model_dtype(const std::string& s);

}  // namespace mlasim
