// The scheduler rules of each engine profile's vLLM release.
#include "sim/scheduler_rules.h"

namespace mlasim {

SchedulerRules scheduler_rules_for(EngineProfile profile) {
  switch (profile) {
    case EngineProfile::kVllm033:
    case EngineProfile::kStrict:
    case EngineProfile::kSglang:
      return SchedulerRules{};
    case EngineProfile::kVllm2025Early:
    case EngineProfile::kVllm011:
    case EngineProfile::kVllm012:
    case EngineProfile::kVllm3Region:
      break;
  }
  SchedulerRules before_0_33;
  before_0_33.lone_request_skips_long_prefill_threshold = false;
  before_0_33.scheduler_reserve_full_isl = false;
  before_0_33.free_unhashed_blocks_first = false;
  before_0_33.pad_one_token_spec_admission = false;
  before_0_33.priority_preemption_continues = false;
  before_0_33.eos_checked_before_length = false;
  before_0_33.mtp_block_hashes_cover_next_token = false;
  before_0_33.spec_caches_blocks_after_update = false;
  before_0_33.fresh_admission_gets_lookahead_slots = false;
  before_0_33.eagle_drops_last_hit_block = true;
  before_0_33.startup_checks_usable_blocks = false;
  if (profile == EngineProfile::kVllm3Region || profile == EngineProfile::kVllm012) {  // vLLM 0.12.0-0.18.x
    before_0_33.eos_checked_before_length = true;
    before_0_33.min_tokens_defers_length_cap = true;
    before_0_33.priority_preemption_continues = false;
    return before_0_33;
  }
  // vLLM 0.11.0 (vllm-0.11)
  before_0_33.chunked_prefill_off_stops_waiting = false;
  before_0_33.priority_victim_leaves_step = false;
  if (profile == EngineProfile::kVllm2025Early) {  // vLLM 0.8.x's V1 engine: 0.11.0's rules and these
    before_0_33.priority_supported = false;
    before_0_33.chunked_prefill_always_on = true;
    before_0_33.v1_runs_mtp = false;
    before_0_33.free_in_order_without_caching = true;
    before_0_33.cache_count_counts_untrimmed_drafts = true;
    before_0_33.running_cap_reserves_sampled_token = false;
    before_0_33.preemption_clears_drafts = false;
  }
  return before_0_33;
}

}  // namespace mlasim
