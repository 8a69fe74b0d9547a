// One layer's KV cache spec as vLLM 0.33 builds it (v1/kv_cache_interface.py): the dataclass
// fields that decide its page size, its equality (dataclass __eq__, is_draft excluded) and whether
// specs merge into one KV cache group (each class's merge / is_uniform_with_collection).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/kv_cache_layout.h"

namespace mlasim {

// KVCacheSpec.block_stride_alignment (kv_cache_interface.py ~200): None, an int number of bytes,
// or MultipleOf(n) (whole kernel blocks of up to n tokens).
struct BlockStrideAlignment {
  int value = 0;  // 0: None
  bool multiple_of = false;
  bool operator==(const BlockStrideAlignment&) const = default;
};

// A torch dtype as the specs name it ("torch.bfloat16") with its element size.
struct TorchDtype {
  std::string name = "torch.bfloat16";
  int size = 2;
  bool operator==(const TorchDtype&) const = default;
};
TorchDtype torch_dtype(const std::string& name);  // "bfloat16", "float8_e4m3fn", "uint8", "float32", ...

struct KvCacheSpec {
  KvCacheSpecKind kind = KvCacheSpecKind::kMlaAttention;
  int block_size = 16;
  bool dcp_sharded = true;                    // AttentionSpec default True; MambaSpec False
  BlockStrideAlignment block_stride_alignment;
  // AttentionSpec (MLA, sliding-window MLA, circular buffer)
  std::optional<int> max_tp_shards;
  int num_kv_heads = 1;
  int head_size = 0;
  TorchDtype dtype;
  int head_size_v = 0;                        // MLA: 0 (one latent vector); CircularBuffer as given
  std::string kv_quant_mode = "NONE";         // KVQuantMode name (get_kv_quant_mode)
  std::optional<long long> page_size_padded;
  std::optional<int> state_content_bytes;
  int tokens_per_state = 1;
  // MLAAttentionSpec / SlidingWindowMLASpec
  std::optional<std::string> cache_dtype_str;
  std::optional<int> topk_buffer_width;
  std::optional<int> alignment;               // DeepseekV4: pages rounded up to it
  std::optional<std::string> model_version;
  bool is_index_group_leader = false;
  bool indexer_role = false;                  // cache_role SparseCacheRole.INDEXER (else SPARSE)
  // SlidingWindowSpec
  int sliding_window = 0;
  int extra_retained_tokens = 0;
  bool bounded_replay = false;
  // MambaSpec
  std::vector<std::vector<long long>> shapes;
  std::vector<TorchDtype> dtypes;
  std::string mamba_type;                     // MambaAttentionBackendEnum name ("GDN_ATTN")
  std::string mamba_cache_mode = "none";
  int num_speculative_blocks = 0;
  int num_prefill_checkpoint_blocks = 0;
  std::optional<int> prefill_checkpoint_alignment;
  bool tp_replicated = false;

  bool operator==(const KvCacheSpec&) const = default;

  bool is_attention() const { return kind != KvCacheSpecKind::kMamba; }
  bool is_sliding_window() const { return kind == KvCacheSpecKind::kSlidingWindowMla; }
  // num_states: block_size // tokens_per_state (Mamba: 1).
  long long num_states() const;
  long long state_content_size_bytes() const;
  long long real_page_size_bytes() const;  // unpadded_page_size_bytes
  long long page_size_bytes() const;
  // get_block_stride_alignment (~214): the bytes the stride between blocks must be a multiple of.
  long long block_stride_alignment_bytes() const;
  // dataclasses.replace(spec, block_size=...), __post_init__ (alignment padding) run again.
  KvCacheSpec with_block_size(int block_size) const;
  // AttentionSpec.prefix_cacheable: CircularBufferSpec and bounded-replay windows are not.
  bool prefix_cacheable() const;
};

// The MLA / sliding-window MLA __post_init__: _apply_alignment_padding (kv_cache_interface.py ~649).
void apply_alignment_padding(KvCacheSpec& spec);

// type(specs[0]).merge(specs) succeeds (no AssertionError / ValueError): MLAAttentionSpec.merge
// (~682), SlidingWindowMLASpec.merge (~1052), KVCacheSpec.merge (~283) for Mamba and circular buffers.
bool specs_merge(const std::vector<const KvCacheSpec*>& specs);

// UniformTypeKVCacheSpecs.is_uniform_type (~1390): one block size, one dcp_sharded, and the first
// spec's is_uniform_with_collection (the registry's base spec: MLA with full attention,
// v1/core/single_type_kv_cache_manager.py ~2708).
bool is_uniform_type(const std::vector<const KvCacheSpec*>& specs);

const char* kv_cache_spec_class_name(KvCacheSpecKind kind);  // "MLAAttentionSpec", ...

}  // namespace mlasim
