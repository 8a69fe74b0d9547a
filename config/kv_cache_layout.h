// The KV cache as vLLM 0.33 lays it out for a model: its KV cache groups (layers sharing one block
// table, v1/kv_cache_interface.py KVCacheGroupSpec), each with the spec its manager reads, and the
// pool they share (KVCacheConfig.num_blocks, v1/core/kv_cache_utils.py resolve_kv_cache_block_sizes
// for the scheduler and hash block sizes). A model with one kind of attention layer has one group,
// the case the scheduler handled before hybrid models.
#pragma once

#include <string>
#include <vector>

namespace mlasim {

// The KVCacheSpec class of a group (v1/kv_cache_interface.py), which picks its manager
// (v1/core/single_type_kv_cache_manager.py get_manager_for_kv_cache_spec).
enum class KvCacheSpecKind {
  kMlaAttention,      // MLAAttentionSpec: FullAttentionManager (tokens_per_state > 1: compressed, V4)
  kSlidingWindowMla,  // SlidingWindowMLASpec: SlidingWindowManager
  kMamba,             // MambaSpec (linear attention state, KDA): MambaManager
  // CircularBufferSpec (GLM-5-Next's kpool indexer tail, models/glm5next/common/attention.py:125-178):
  // CircularBufferManager, one block per request, outside prefix caching (prefix_cacheable False,
  // v1/kv_cache_interface.py:991-993).
  kCircularBuffer,
};

struct KvCacheGroup {
  KvCacheSpecKind kind = KvCacheSpecKind::kMlaAttention;
  std::vector<std::string> layer_names;  // as vLLM names them ("model.layers.3.self_attn.attn")
  int block_size = 0;                    // tokens per block of this group
  long long page_size_bytes = 0;         // bytes of one block of one layer (page_size_bytes)
  int tokens_per_state = 1;              // AttentionSpec.tokens_per_state (V4 compress ratio)
  int sliding_window = 0;                // SlidingWindowSpec.sliding_window; 0 for none
  int extra_retained_tokens = 0;         // SlidingWindowSpec.extra_retained_tokens
  std::string mamba_cache_mode;          // MambaSpec.mamba_cache_mode ("none", "align", "all")
  int num_speculative_blocks = 0;        // MambaSpec.num_speculative_blocks
  bool is_eagle_group = false;           // KVCacheGroupSpec.is_eagle_group
  // A group whose layers' specs differ (KVCacheGroupSpec.kv_cache_spec is a
  // UniformTypeKVCacheSpecs, kv_cache_interface.py ~1310: DeepSeek-V4's compressed layers at ratios 4
  // and 128, a sparse model's MLA and indexer caches). The fields above are then its first layer's;
  // these give every layer's, parallel to layer_names.
  bool uniform_type = false;
  std::vector<long long> layer_page_size_bytes;
  std::vector<int> layer_tokens_per_state;  // -1 for Mamba layers (MambaSpec.tokens_per_state)
  // KVCacheGroupSpec.kv_cache_spec.page_size_bytes: a UniformTypeKVCacheSpecs sums its layers' (~1372).
  long long group_page_size_bytes = 0;
  // kv_cache_spec.prefix_cacheable (~241): false for CircularBufferSpec rings and bounded-replay
  // windows, whose groups resolve_kv_cache_block_sizes leaves out of the hash block size.
  bool prefix_cacheable = true;
  // MambaSpec.num_prefill_checkpoint_blocks and prefill_checkpoint_alignment (0: None): a KDA layer on
  // FlashKDA exports a checkpoint inside a prefill chunk (models/glm5next/common/kda.py:168-176,
  // model_executor/layers/mamba/kda_checkpoint.py:9-10: alignment 16).
  int num_prefill_checkpoint_blocks = 0;
  int prefill_checkpoint_alignment = 0;
  int num_layers = 0;  // len(KVCacheGroupSpec.layer_names) when the names are not given
};

inline constexpr int kDenseRetention = -1;  // prefix_cache_retention_interval None

struct KvCacheLayout {
  std::vector<KvCacheGroup> groups;  // empty: one MLA group of cache.block_size (the default)
  int num_blocks = 0;                // KVCacheConfig.num_blocks, shared by every group
  int scheduler_block_size = 0;      // lcm of the groups' block sizes
  int hash_block_size = 0;           // tokens per prefix-cache block hash
  // KVCacheConfig.prefix_cache_retention_interval (v1/kv_cache_interface.py:1541, from
  // CacheConfig's, config/cache.py:275-281): which states of the sliding-window and Mamba groups
  // enter the prefix cache. 0 (vLLM's default): only the semantic ones (the prompt's replay
  // boundary, a shared-prefix junction); k > 0: also one per k tokens; kDenseRetention (None):
  // every reachable one.
  int prefix_cache_retention_interval = 0;

  bool hybrid() const { return groups.size() > 1; }
};

// vLLM's resolve_kv_cache_block_sizes (v1/core/kv_cache_utils.py:816-918), without DCP or a
// prefix_match_unit. One group (or none): both are cache_config.block_size (`cache_block_size`;
// 0 takes the group's own). Several: scheduler_block_size = lcm of the group block sizes;
// hash_block_size = their gcd over the prefix-cacheable groups when block hashing is on (prefix
// caching) and no Mamba group is outside "align" mode, else the scheduler block size. Sets each
// field of `layout` only when it is 0.
void resolve_kv_cache_block_sizes(KvCacheLayout& layout, bool enable_prefix_caching, int cache_block_size = 0);

// Whether the group takes part in prefix caching (KVCacheSpec.prefix_cacheable, ~241): the field
// the plan fills from its layer specs, and never a CircularBufferSpec ring (~964), which a
// scenario or a test may list without the field.
inline bool prefix_cacheable(const KvCacheGroup& g) {
  return g.prefix_cacheable && g.kind != KvCacheSpecKind::kCircularBuffer;
}

// "mla_attention", "sliding_window_mla", "mamba", "circular_buffer" (the scenario's names).
const char* to_string(KvCacheSpecKind kind);

}  // namespace mlasim
