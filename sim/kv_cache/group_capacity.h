// Block counts of several KV cache groups sharing one pool, as vLLM 0.33 plans them: every group
// claims its own blocks, so a request's need is the sum over the groups
// (v1/core/kv_cache_planning.py:1253-1286 _max_memory_usage_bytes_from_groups).
#pragma once

#include "config/kv_cache_layout.h"

namespace mlasim {

// The blocks vLLM's start-up check asks the usable blocks to hold for one request of max_model_len
// tokens: per group its spec's max_memory_usage_bytes in pages (kv_cache_interface.py: full
// attention cdiv(max_model_len, block_size) :643-648; sliding window its admission cap :918-945;
// Mamba 2 + speculative + checkpoint blocks in "align", 1 + speculative in "none" :1130-1137;
// circular buffer 1 :974-977). max_in_flight_tokens is max_num_batched_tokens (synchronous).
long long kv_cache_startup_blocks(const KvCacheLayout& layout, int max_model_len, int max_num_batched_tokens);

// The blocks one request holding `tokens` tokens (at most max_model_len) keeps at once: full
// attention every block, a sliding window at most its admission cap, Mamba and circular buffers
// their fixed count. For deciding that a request can never run (Scheduler::can_never_fit).
long long kv_cache_request_blocks(const KvCacheLayout& layout, long long tokens, int max_model_len,
                                  int max_num_batched_tokens);

}  // namespace mlasim
