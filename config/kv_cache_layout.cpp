// The KV cache layout's block sizes, as vLLM 0.33 resolves them for the scheduler.
#include "config/kv_cache_layout.h"

#include <numeric>

namespace mlasim {

const char* to_string(KvCacheSpecKind kind) {
  switch (kind) {
    case KvCacheSpecKind::kMlaAttention: return "mla_attention";
    case KvCacheSpecKind::kSlidingWindowMla: return "sliding_window_mla";
    case KvCacheSpecKind::kMamba: return "mamba";
    case KvCacheSpecKind::kCircularBuffer: return "circular_buffer";
  }
  return "?";
}

void resolve_kv_cache_block_sizes(KvCacheLayout& layout, bool enable_prefix_caching, int cache_block_size) {
  if (layout.groups.size() <= 1) {  // kv_cache_utils.py:840-858
    const int bs = cache_block_size > 0 ? cache_block_size : layout.groups.empty() ? 0 : layout.groups[0].block_size;
    if (layout.scheduler_block_size == 0) layout.scheduler_block_size = bs;
    if (layout.hash_block_size == 0) layout.hash_block_size = layout.scheduler_block_size;
    return;
  }
  long long lcm = 1;
  for (const KvCacheGroup& g : layout.groups) lcm = std::lcm(lcm, static_cast<long long>(g.block_size));
  if (layout.scheduler_block_size == 0) layout.scheduler_block_size = static_cast<int>(lcm);
  if (layout.hash_block_size != 0) return;
  // kv_cache_utils.py:868-880: no hashing without prefix caching; a Mamba group outside "align"
  // breaks divisibility.
  bool hashing = enable_prefix_caching;
  for (const KvCacheGroup& g : layout.groups)
    if (g.kind == KvCacheSpecKind::kMamba && g.mamba_cache_mode != "align") hashing = false;
  if (!hashing) {
    layout.hash_block_size = layout.scheduler_block_size;
    return;
  }
  // kv_cache_utils.py:882-888: the gcd of the prefix-cacheable groups (all of them when none is).
  int gcd = 0;
  for (const KvCacheGroup& g : layout.groups)
    if (prefix_cacheable(g)) gcd = std::gcd(gcd, g.block_size);
  if (gcd == 0)
    for (const KvCacheGroup& g : layout.groups) gcd = std::gcd(gcd, g.block_size);
  layout.hash_block_size = gcd;
}

}  // namespace mlasim
