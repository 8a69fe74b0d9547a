// Block counts of several KV cache groups sharing one pool.
#include "sim/kv_cache/group_capacity.h"

#include <algorithm>

#include "sim/kv_cache/sliding_window_manager.h"

namespace mlasim {

namespace {

long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

// The group's admission cap (SlidingWindowSpec.max_admission_blocks_per_request), as its manager has it.
long long sliding_window_cap(const KvCacheGroup& g, int max_model_len, int max_num_batched_tokens) {
  return SlidingWindowManager::max_admission_blocks(g, max_num_batched_tokens, max_model_len);
}

long long fixed_blocks(const KvCacheGroup& g) {
  if (g.kind == KvCacheSpecKind::kCircularBuffer) return 1;
  if (g.mamba_cache_mode == "align") return 2LL + g.num_speculative_blocks + g.num_prefill_checkpoint_blocks;
  return 1LL + g.num_speculative_blocks;
}

}  // namespace

long long kv_cache_startup_blocks(const KvCacheLayout& layout, int max_model_len, int max_num_batched_tokens) {
  long long total = 0;
  for (const KvCacheGroup& g : layout.groups) {
    switch (g.kind) {
      case KvCacheSpecKind::kMlaAttention: total += ceil_div(max_model_len, g.block_size); break;
      case KvCacheSpecKind::kSlidingWindowMla: total += sliding_window_cap(g, max_model_len, max_num_batched_tokens); break;
      default: total += fixed_blocks(g);
    }
  }
  return total;
}

long long kv_cache_request_blocks(const KvCacheLayout& layout, long long tokens, int max_model_len,
                                  int max_num_batched_tokens) {
  tokens = std::min<long long>(tokens, max_model_len);
  long long total = 0;
  for (const KvCacheGroup& g : layout.groups) {
    switch (g.kind) {
      case KvCacheSpecKind::kMlaAttention: total += ceil_div(tokens, g.block_size); break;
      case KvCacheSpecKind::kSlidingWindowMla:
        total += std::min(ceil_div(tokens, g.block_size), sliding_window_cap(g, max_model_len, max_num_batched_tokens));
        break;
      default: total += fixed_blocks(g);
    }
  }
  return total;
}

}  // namespace mlasim
