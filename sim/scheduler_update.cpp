// Scheduler: construction, add_request, update_from_output (docs/spec/scheduler.md §6), validation.
// The audits: sim/scheduler_audit.cpp.
#include <algorithm>
#include <functional>
#include <string>

#include "sim/block_hash.h"
#include "base/check.h"
#include "base/recycled_storage.h"
#include "sim/scheduler.h"
#include "sim/kv_cache/group_capacity.h"

namespace mlasim {

std::string check_scheduler_config(const SchedulerConfig& c, int max_model_len) {
  if (max_model_len <= 1) return "max_model_len must be at least 2";
  if (c.max_num_batched_tokens <= 0) return "max_num_batched_tokens must be positive";
  if (c.max_num_seqs <= 0) return "max_num_seqs must be positive";
  if (c.block_size <= 0) return "block_size must be positive";
  if (c.num_gpu_blocks < 2) return "num_gpu_blocks must be at least 2 (block 0 is the null block)";
  if (c.long_prefill_token_threshold < 0) return "long_prefill_token_threshold must be >= 0";
  if (c.num_speculative_tokens < 0) return "num_speculative_tokens must be >= 0";
  if (!c.enable_chunked_prefill && c.max_num_batched_tokens < max_model_len) {
    return "with chunked prefill off, max_num_batched_tokens (" + std::to_string(c.max_num_batched_tokens) +
           ") must be >= max_model_len (" + std::to_string(max_model_len) + ")";
  }
  if (c.max_num_batched_tokens < c.max_num_seqs) {
    return "max_num_batched_tokens (" + std::to_string(c.max_num_batched_tokens) + ") must be >= max_num_seqs (" +
           std::to_string(c.max_num_seqs) + ")";
  }
  if (std::string problem = check_long_prefill_token_threshold(c, max_model_len); !problem.empty()) return problem;
  if (!c.rules.v1_runs_mtp && c.speculative_method == SpeculativeMethod::kMtp && c.num_speculative_tokens > 0) {
    return "this profile's vLLM (0.8) runs MTP speculation on its V0 engine, not V1 (engine/arg_utils.py:1423-1442 in "
           "0.8.5: only n-gram and EAGLE stay on V1); use speculative_method: ngram";
  }
  // config/vllm.py ~2371: against num_lookahead_tokens (k for MTP, 0 for n-gram).
  if (lookahead_tokens(c) > 0 && c.max_num_batched_tokens <= lookahead_tokens(c)) {
    return "max_num_batched_tokens (" + std::to_string(c.max_num_batched_tokens) +
           ") must exceed the speculative lookahead of " + std::to_string(lookahead_tokens(c)) +
           " tokens, or no token could be scheduled";
  }
  return "";
}

namespace {

// The start-up check over several KV cache groups (kv_cache_planning.py:1551-1559, 1253-1335): the
// groups' blocks for one max_model_len request against the usable blocks, the estimate by binary
// search over the length.
std::string check_grouped_kv_cache_startup(const SchedulerConfig& c, int max_model_len) {
  const long long usable = c.num_gpu_blocks - 1;
  const KvCacheLayout& layout = c.kv_cache_layout;
  const long long needed = kv_cache_startup_blocks(layout, max_model_len, c.max_num_batched_tokens);
  if (needed <= usable) return "";
  auto fits = [&](int len) { return kv_cache_startup_blocks(layout, len, c.max_num_batched_tokens) <= usable; };
  int estimate = 0;
  for (int lo = 1, hi = max_model_len; fits(1) && lo <= hi;) {
    const int mid = lo + (hi - lo) / 2;
    if (fits(mid)) estimate = mid, lo = mid + 1;
    else hi = mid - 1;
  }
  return "vLLM 0.33 refuses to start (vllm/v1/core/kv_cache_planning.py:1551-1559, :78-87): \"To serve at least one "
         "request with the model's max seq len (" + std::to_string(max_model_len) + "), (" + std::to_string(needed) +
         " blocks over " + std::to_string(layout.groups.size()) + " KV cache groups) KV cache is needed, which is larger "
         "than the available KV cache memory (" + std::to_string(usable) + " usable blocks: num_gpu_blocks " +
         std::to_string(c.num_gpu_blocks) + " less the null block). " +
         (estimate > 0 ? "Based on the available memory, the estimated maximum model length is " + std::to_string(estimate) + ". " : std::string()) +
         "Try increasing `gpu_memory_utilization` ... or decreasing `max_model_len` when initializing the engine.\"";
}

}  // namespace

std::string check_kv_cache_startup(const SchedulerConfig& c, int max_model_len) {
  if (!c.rules.startup_checks_usable_blocks || c.block_size <= 0 || c.num_gpu_blocks < 2) return "";
  if (c.kv_cache_layout.hybrid()) return check_grouped_kv_cache_startup(c, max_model_len);
  const long long usable = c.num_gpu_blocks - 1;  // BlockPool holds the null block back (:1532-1543)
  const long long needed = (static_cast<long long>(max_model_len) + c.block_size - 1) / c.block_size;
  if (needed <= usable) return "";
  // estimate_max_model_len (:97-148): the longest length whose blocks fit the usable ones.
  const long long estimate = std::min<long long>(usable * c.block_size, max_model_len);
  return "vLLM 0.33 refuses to start (vllm/v1/core/kv_cache_planning.py:1551-1559, :78-87): \"To serve at least one "
         "request with the model's max seq len (" + std::to_string(max_model_len) + "), (" + std::to_string(needed) +
         " blocks of " + std::to_string(c.block_size) + " tokens) KV cache is needed, which is larger than the available "
         "KV cache memory (" + std::to_string(usable) + " usable blocks: num_gpu_blocks " +
         std::to_string(c.num_gpu_blocks) + " less the null block). " +
         (estimate > 0 ? "Based on the available memory, the estimated maximum model length is " + std::to_string(estimate) + ". " : std::string()) +
         "Try increasing `gpu_memory_utilization` ... or decreasing `max_model_len` when initializing the engine.\"";
}

int default_num_gpu_blocks(const SchedulerConfig& c) {
  const int base = SchedulerConfig{}.num_gpu_blocks;
  if (!c.rules.startup_checks_usable_blocks || c.block_size <= 0) return base;
  if (c.kv_cache_layout.hybrid()) {
    const long long least = kv_cache_startup_blocks(c.kv_cache_layout, c.max_model_len, c.max_num_batched_tokens) + 1;
    return static_cast<int>(std::min<long long>(std::max<long long>(base, least), 1LL << 24));
  }
  const long long least = (static_cast<long long>(c.max_model_len) + c.block_size - 1) / c.block_size + 1;
  return static_cast<int>(std::min<long long>(std::max<long long>(base, least), 1LL << 24));
}

std::string check_long_prefill_token_threshold(const SchedulerConfig& c, int max_model_len) {
  const int t = c.long_prefill_token_threshold;
  if (t > max_model_len) {  // config/scheduler.py ~355
    return "long_prefill_token_threshold (" + std::to_string(t) + ") cannot be greater than max_model_len (" +
           std::to_string(max_model_len) + ")";
  }
  // Below 1 + k under speculation vLLM 0.33 accepts it too: its scheduler fails only when a padded
  // one-token admission is cut (the replay stops there, VllmCannotRun).
  return "";
}

std::string check_request(const RequestLimits& r, const SchedulerConfig& c, int max_model_len) {
  const int p = r.num_prompt_tokens;
  if (p <= 0) return "the prompt is empty";
  if (p >= max_model_len) {
    return "prompt length " + std::to_string(p) + " must be < max_model_len " + std::to_string(max_model_len);
  }
  if (r.max_tokens < 1) return "max_tokens must be >= 1";
  if (r.min_tokens < 0 || r.min_tokens > r.max_tokens) return "min_tokens must be in [0, max_tokens]";
  if (!c.rules.priority_supported && r.priority != 0) {
    return "priority " + std::to_string(r.priority) +
           ": this profile's vLLM (0.8) refuses request priorities (\"V1 does not support priority yet.\", "
           "v1/engine/processor.py:211-212 in 0.8.5)";
  }
  return "";
}

bool request_always_fits(const RequestLimits& r, const SchedulerConfig& c, int max_model_len) {
  const long long longest = std::min<long long>(
      static_cast<long long>(r.num_prompt_tokens) + r.max_tokens + 2LL * c.num_speculative_tokens, max_model_len);
  const long long blocks =
      c.kv_cache_layout.hybrid()
          ? kv_cache_request_blocks(c.kv_cache_layout, longest, max_model_len, c.max_num_batched_tokens)
          : (longest + c.block_size - 1) / c.block_size;
  return blocks <= c.num_gpu_blocks - 1;
}

bool Scheduler::can_never_fit(const Request& r) const {
  const int known = r.pending_prompt ? r.num_prompt_tokens : r.num_tokens();  // a prompt not drawn yet
  const long long tokens = std::min<long long>(static_cast<long long>(known) + num_lookahead_tokens(), max_model_len_);
  if (grouped_)
    return kv_cache_request_blocks(config_.kv_cache_layout, tokens, max_model_len_, config_.max_num_batched_tokens) >
           num_usable_blocks();
  return (tokens + config_.block_size - 1) / config_.block_size > num_usable_blocks();
}

std::string check_request_hint(const std::string& problem) {
  if (problem.rfind("priority", 0) == 0)
    return "drop the request's priority, or pick the profile of a vLLM with priorities (vllm-0.11 or later)";
  return "shorten the prompt, lower max_tokens/min_tokens, or raise max_model_len";
}

int lookahead_tokens(const SchedulerConfig& c) {
  return c.speculative_method == SpeculativeMethod::kMtp ? c.num_speculative_tokens : 0;
}

int hash_lookahead_tokens(const SchedulerConfig& c) {
  // config/vllm.py num_hash_lookahead_tokens ~678-700: MTP with prefix caching; one token for
  // single-module MTP (DeepSeek's num_nextn_predict_layers = 1).
  const bool on = c.rules.mtp_block_hashes_cover_next_token && c.speculative_method == SpeculativeMethod::kMtp &&
                  c.num_speculative_tokens > 0 && c.enable_prefix_caching;
  return on ? 1 : 0;
}

namespace {
int resolve_max_model_len(const SchedulerConfig& c, const ModelConfig& m) {
  return c.max_model_len > 0 ? c.max_model_len : m.max_position_embeddings;
}
}  // namespace

namespace {
// The config the scheduler runs: a release without a priority policy schedules FCFS, one that
// always chunks ignores enable_chunked_prefill (SchedulerRules).
SchedulerConfig as_scheduled(SchedulerConfig c) {
  if (!c.rules.priority_supported) c.policy = SchedulingPolicy::kFcfs;
  if (c.rules.chunked_prefill_always_on) c.enable_chunked_prefill = true;
  return c;
}
}  // namespace

Scheduler::Scheduler(const SchedulerConfig& config, SchedulerStart start)
    : config_(as_scheduled(config)),
      max_model_len_(config.max_model_len),
      num_lookahead_tokens_(lookahead_tokens(config_)),
      num_hash_lookahead_tokens_(hash_lookahead_tokens(config_)),
      // With several KV cache groups the grouped manager owns the pool; this one stays empty.
      kv_(config.kv_cache_layout.hybrid() ? 2 : config.num_gpu_blocks, config.block_size,
          config.enable_prefix_caching && !config.kv_cache_layout.hybrid(), std::max(1, config.max_model_len),
          config.rules.free_unhashed_blocks_first, start.donor ? &start.donor->kv_ : nullptr),
      pool_(&kv_.block_pool()),
      hash_block_size_(config.block_size),
      waiting_(config_.policy) {
  const std::string problem = check_scheduler_config(config_, max_model_len_);
  MLASIM_CHECK(problem.empty(), problem);
  if (Scheduler* donor = start.donor) {
    take_capacity(running_, donor->running_);
    take_capacity(finished_req_ids_, donor->finished_req_ids_);
    take_capacity(finished_slots_, donor->finished_slots_);
    take_capacity(slots_, donor->slots_);
    take_capacity(free_slots_, donor->free_slots_);
    slot_of_ = FlatIndexMap(8, donor->slot_of_);
    take_capacity(scheduled_, donor->scheduled_);
    take_capacity(preempted_, donor->preempted_);
    take_capacity(scheduled_reqs_, donor->scheduled_reqs_);
    take_capacity(stopped_reqs_, donor->stopped_reqs_);
    take_capacity(hit_blocks_, donor->hit_blocks_);
    take_capacity(audit_owners_, donor->audit_owners_);
    take_capacity(audit_last_owner_, donor->audit_last_owner_);
    take_capacity(delta_owners_, donor->delta_owners_);
    take_capacity(delta_changed_, donor->delta_changed_);
  }
  kv_.set_free_in_order_without_caching(config.rules.free_in_order_without_caching);
  kv_.set_cache_count_counts_untrimmed_drafts(config.rules.cache_count_counts_untrimmed_drafts);
  kv_.set_drop_last_hit_block(config.rules.eagle_drops_last_hit_block && config.num_speculative_tokens > 0 &&
                              config.speculative_method == SpeculativeMethod::kMtp);
  if (config_.kv_cache_layout.hybrid()) {
    init_grouped();
  } else if (start.audit_changes) {
    set_audit_changes(true);
  }
}

void Scheduler::init_grouped() {
  GroupedKVCacheConfig g;
  g.layout = config_.kv_cache_layout;
  resolve_kv_cache_block_sizes(g.layout, config_.enable_prefix_caching);
  g.num_gpu_blocks = config_.num_gpu_blocks;
  g.enable_caching = config_.enable_prefix_caching;
  g.max_model_len = max_model_len_;
  g.max_num_batched_tokens = config_.max_num_batched_tokens;
  g.num_hash_lookahead_tokens = num_hash_lookahead_tokens();
  g.free_unhashed_first = config_.rules.free_unhashed_blocks_first;
  grouped_ = std::make_unique<GroupedKVCacheManager>(g);
  pool_ = &grouped_->pool().pool();
  hash_block_size_ = g.layout.hash_block_size;
  // scheduler.py:430-451; the split's block size is the smallest prefix-cacheable group's.
  bool any_mamba = false, all_checkpoint = true;
  int split_block_size = 0;
  for (const KvCacheGroup& grp : g.layout.groups) {
    if (prefix_cacheable(grp))
      split_block_size = split_block_size == 0 ? grp.block_size : std::min(split_block_size, grp.block_size);
    if (grp.kind != KvCacheSpecKind::kMamba) continue;
    if (!any_mamba) mamba_prefill_checkpoint_alignment_ = grp.prefill_checkpoint_alignment;
    any_mamba = true;
    all_checkpoint = all_checkpoint && grp.num_prefill_checkpoint_blocks > 0;
  }
  for (const KvCacheGroup& grp : g.layout.groups)  // mamba_cache_mode "align" (prefix caching on)
    mamba_aligned_split_ = mamba_aligned_split_ || (grp.kind == KvCacheSpecKind::kMamba && grp.mamba_cache_mode == "align");
  mamba_split_block_size_ = split_block_size;
  mamba_has_prefill_checkpoint_blocks_ = any_mamba && all_checkpoint;
}

Scheduler::Scheduler(const SchedulerConfig& config, const ModelConfig& model, SchedulerStart start)
    : Scheduler(
          [&] {
            SchedulerConfig c = config;
            c.max_model_len = resolve_max_model_len(config, model);
            return c;
          }(),
          start) {}

void Scheduler::add_request(Request request) {
  const std::string problem = check_request(request, config_, max_model_len_);
  MLASIM_CHECK(problem.empty(), "request " + std::to_string(request.request_id) + ": " + problem);
  MLASIM_CHECK(request.status == RequestStatus::kWaiting && request.num_computed_tokens == 0 &&
                   request.block_ids.empty() &&
                   request.num_tokens() == (request.pending_prompt ? 0 : request.num_prompt_tokens),
               "add_request needs a fresh request");
  const std::uint64_t key = static_cast<std::uint32_t>(request.request_id);
  MLASIM_CHECK(slot_of_.find(key) < 0, "duplicate request id " + std::to_string(request.request_id));
  // The lowest free slot, so the slots stay as few as the requests alive (freed slots past the
  // last alive one are dropped, which leaves their heap entries stale: they are the highest, and
  // are discarded before a new slot is added).
  int slot = -1;
  while (!free_slots_.empty() && slot < 0) {
    std::pop_heap(free_slots_.begin(), free_slots_.end(), std::greater<>());
    const int s = free_slots_.back();
    free_slots_.pop_back();
    if (static_cast<std::size_t>(s) < slots_.size()) slot = s;
  }
  if (slot < 0) {
    slot = static_cast<int>(slots_.size());
    slots_.emplace_back();
  }
  std::unique_ptr<Request>& owned = slots_[static_cast<std::size_t>(slot)];
  MLASIM_CHECK(owned == nullptr, "a request slot given twice");
  owned = std::make_unique<Request>(std::move(request));
  Request* r = owned.get();
  r->slot = slot;
  slot_of_.put(key, slot);
  ++num_alive_;
  r->arrival = next_arrival_++;
  r->block_hashes.clear();
  if (config_.enable_prefix_caching && !r->pending_prompt)
    update_block_hashes(*r, hash_block_size_, num_hash_lookahead_tokens());
  waiting_.add_request(r);
}

const Request* Scheduler::request(ReqId id) const {
  const int slot = slot_of_.find(static_cast<std::uint32_t>(id));
  return slot < 0 ? nullptr : slots_[static_cast<std::size_t>(slot)].get();
}

std::vector<const Request*> Scheduler::alive_requests() const {
  std::vector<const Request*> alive;
  alive.reserve(static_cast<std::size_t>(num_alive_));
  for (const std::unique_ptr<Request>& r : slots_)
    if (r) alive.push_back(r.get());
  std::sort(alive.begin(), alive.end(), [](const Request* a, const Request* b) { return a->request_id < b->request_id; });
  return alive;
}

std::span<const int> Scheduler::block_ids(ReqId id) const {
  if (grouped_) return grouped_->blocks(id, grouped_->attention_group());  // the MLA layers' table
  const Request* r = request(id);
  return r ? std::span<const int>(r->block_ids) : std::span<const int>();
}

// vllm/v1/core/sched/utils.py check_stop (0.33.0 ~98-126): EOS, stop ids, the length cap, and
// only then min_tokens. The sampler never emits EOS or a stop id before min_tokens
// (MinTokensLogitsProcessor), and the loader rejects forced outputs that do, so min_tokens holds
// nothing back here. vLLM 0.11 checked the length cap first.
bool Scheduler::check_stop(Request& r) const {
  // vLLM 0.11.1-0.18 (v1/core/sched/utils.py:46-47 in 0.16.0): no stop, the length cap included,
  // before min_tokens outputs.
  if (config_.rules.min_tokens_defers_length_cap && r.num_output_tokens() < r.min_tokens) return false;
  const int last = r.all_token_ids.back();
  const bool length_capped = r.num_tokens() >= max_model_len_ || r.num_output_tokens() >= r.max_tokens;
  if (!config_.rules.eos_checked_before_length && length_capped) {
    r.status = RequestStatus::kFinishedLengthCapped;
    return true;
  }
  if (!r.ignore_eos && last == r.eos_token_id) {
    r.status = RequestStatus::kFinishedStopped;
    return true;
  }
  if (std::find(r.stop_token_ids.begin(), r.stop_token_ids.end(), last) != r.stop_token_ids.end()) {
    r.status = RequestStatus::kFinishedStopped;
    r.stop_reason = last;
    return true;
  }
  if (length_capped) {
    r.status = RequestStatus::kFinishedLengthCapped;
    return true;
  }
  return false;
}

std::vector<Request> Scheduler::update_from_output(const SchedulerOutput& out, const ModelRunnerOutput& mo) {
  MLASIM_CHECK(output_pending_ && out.step == step_ - 1, "update_from_output needs the latest schedule()'s output");
  MLASIM_CHECK(out.num_scheduled_tokens.size() == scheduled_reqs_.size() && mo.req_ids.size() == scheduled_reqs_.size() &&
                   mo.sampled_token_ids.size() == mo.req_ids.size() && mo.spec_token_ids.size() == mo.req_ids.size(),
               "model output does not match the scheduled requests");
  output_pending_ = false;
  std::vector<Request> finished;
  std::size_t spec_j = 0;
  stopped_reqs_.clear();
  for (std::size_t i = 0; i < scheduled_reqs_.size(); ++i) {
    Request& r = *scheduled_reqs_[i];
    MLASIM_CHECK(out.num_scheduled_tokens[i].first == r.request_id && mo.req_ids[i] == r.request_id,
                 "model output rows are not in scheduling order");
    const std::vector<int>& sampled = mo.sampled_token_ids[i];
    int num_drafts = 0;
    if (spec_j < out.scheduled_spec_decode_tokens.size() && out.scheduled_spec_decode_tokens[spec_j].first == r.request_id) {
      num_drafts = static_cast<int>(out.scheduled_spec_decode_tokens[spec_j].second.size());
      ++spec_j;
    }
    if (r.is_prefill_chunk) MLASIM_CHECK(sampled.empty(), "a partial prefill chunk sampled tokens");
    else MLASIM_CHECK(!sampled.empty() && static_cast<int>(sampled.size()) <= num_drafts + 1, "bad number of sampled tokens");
    if (num_drafts > 0 && !sampled.empty()) {
      const int num_rejected = num_drafts - (static_cast<int>(sampled.size()) - 1);
      if (r.num_computed_tokens > 0) r.num_computed_tokens -= num_rejected;
      // A padded admission's placeholders are not a verification of real drafts.
      if (out.scheduled_spec_decode_tokens[spec_j - 1].second.front() != kPlaceholderDraftToken) ++r.num_verify_steps;
    }
    bool stopped = false;
    int num_appended = 0;
    for (int tok : sampled) {  // appended one at a time; tokens after a stop are discarded
      r.all_token_ids.push_back(tok);
      ++num_appended;
      if (may_stop(r) && check_stop(r)) {
        stopped = true;
        break;
      }
    }
    if (!sampled.empty() && config_.enable_prefix_caching) update_block_hashes(r, hash_block_size_, num_hash_lookahead_tokens());
    // vLLM 0.33 (scheduler.py ~2757-2762): nct covers every kept token but the last; the tokens
    // discarded at a stop are rolled back. With speculation the full blocks up to nct are cached
    // after every sampling step, stopped requests included (~2403-2415).
    if (config_.rules.spec_caches_blocks_after_update) {
      if (stopped) r.num_computed_tokens -= static_cast<int>(sampled.size()) - num_appended;
      if (!sampled.empty() && config_.num_speculative_tokens > 0) {
        if (grouped_) grouped_->cache_blocks(r, r.num_computed_tokens);
        else kv_.cache_blocks(r, r.num_computed_tokens);
      }
    }
    if (stopped) {
      free_blocks(r);
      r.spec_token_ids.clear();
      finished_req_ids_.push_back(r.request_id);
      finished_slots_.push_back(r.slot);
      stopped_reqs_.push_back(&r);
      continue;
    }
    MLASIM_CHECK(r.num_computed_tokens <= r.num_tokens(), "nct exceeds the request's tokens");
    // update_draft_token_ids: drafts are ignored while the request is still a prefill chunk.
    const std::vector<int>& drafts = mo.spec_token_ids[i];
    MLASIM_CHECK(static_cast<int>(drafts.size()) <= config_.num_speculative_tokens, "more drafts than num_speculative_tokens");
    if (r.is_prefill_chunk) r.spec_token_ids.clear();
    else r.spec_token_ids.assign(drafts.begin(), drafts.end());
  }
  MLASIM_CHECK(spec_j == out.scheduled_spec_decode_tokens.size(), "spec tokens of an unscheduled request");
  if (!stopped_reqs_.empty()) {
    std::erase_if(running_, [](const Request* r) { return is_finished(r->status); });
    for (Request* r : stopped_reqs_) {  // in scheduling order
      MLASIM_CHECK(is_finished(r->status) && r->block_ids.empty(), "a finished request holds blocks");
      const int slot = r->slot;
      slot_of_.erase(static_cast<std::uint32_t>(r->request_id));
      finished.push_back(std::move(*r));
      slots_[static_cast<std::size_t>(slot)].reset();
      free_slots_.push_back(slot);
      std::push_heap(free_slots_.begin(), free_slots_.end(), std::greater<>());
      --num_alive_;
    }
    // Slots past the last alive request are dropped: the slots follow the requests alive.
    while (!slots_.empty() && !slots_.back()) slots_.pop_back();
  }
  scheduled_reqs_.clear();
  if (delta_audit_) audit_changes();
  if (audit_every_step_) audit();
  return finished;
}

}  // namespace mlasim
