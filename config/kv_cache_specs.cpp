// vLLM 0.33's KV cache spec dataclasses (v1/kv_cache_interface.py): page sizes, equality, merging.
#include "config/kv_cache_specs.h"

#include <algorithm>
#include <numeric>

namespace mlasim {
namespace {

long long round_up(long long x, long long m) { return (x + m - 1) / m * m; }

// Every spec's value of `field` is the first one's (a Python set of them has one element).
template <class F>
bool one_value(const std::vector<const KvCacheSpec*>& specs, F field) {
  for (const KvCacheSpec* s : specs)
    if (!(field(*s) == field(*specs[0]))) return false;
  return true;
}

// MLAAttentionSpec.merge (kv_cache_interface.py ~682-738): the sets of the MLA fields are
// singletons, then every AttentionSpec field the dataclass compares equals the merged spec's.
bool mla_merge(const std::vector<const KvCacheSpec*>& specs) {
  return one_value(specs, [](const KvCacheSpec& s) { return s.cache_dtype_str; }) &&
         one_value(specs, [](const KvCacheSpec& s) { return s.topk_buffer_width; }) &&
         one_value(specs, [](const KvCacheSpec& s) { return s.tokens_per_state; }) &&
         one_value(specs, [](const KvCacheSpec& s) { return s.model_version; }) &&
         one_value(specs, [](const KvCacheSpec& s) { return s.indexer_role; }) &&
         one_value(specs, [](const KvCacheSpec& s) { return s.is_index_group_leader; }) &&
         one_value(specs, [](const KvCacheSpec& s) { return s.block_stride_alignment; }) &&
         one_value(specs, [](const KvCacheSpec& s) { return s.block_size; }) &&
         one_value(specs, [](const KvCacheSpec& s) { return s.dcp_sharded; }) &&
         one_value(specs, [](const KvCacheSpec& s) { return s.max_tp_shards; }) &&
         one_value(specs, [](const KvCacheSpec& s) { return s.num_kv_heads; }) &&
         one_value(specs, [](const KvCacheSpec& s) { return s.head_size; }) &&
         one_value(specs, [](const KvCacheSpec& s) { return s.dtype; }) &&
         one_value(specs, [](const KvCacheSpec& s) { return s.head_size_v; }) &&
         one_value(specs, [](const KvCacheSpec& s) { return s.kv_quant_mode; }) &&
         one_value(specs, [](const KvCacheSpec& s) { return s.page_size_padded; }) &&
         one_value(specs, [](const KvCacheSpec& s) { return s.state_content_bytes; });
}

// SlidingWindowMLASpec.merge (~1052-1095): only these sets must be singletons; head size, dtype
// and page size are not compared.
bool sliding_window_mla_merge(const std::vector<const KvCacheSpec*>& specs) {
  return one_value(specs, [](const KvCacheSpec& s) { return s.dcp_sharded; }) &&
         one_value(specs, [](const KvCacheSpec& s) { return s.max_tp_shards; }) &&
         one_value(specs, [](const KvCacheSpec& s) { return s.cache_dtype_str; }) &&
         one_value(specs, [](const KvCacheSpec& s) { return s.tokens_per_state; }) &&
         one_value(specs, [](const KvCacheSpec& s) { return s.model_version; }) &&
         one_value(specs, [](const KvCacheSpec& s) { return s.sliding_window; }) &&
         one_value(specs, [](const KvCacheSpec& s) { return s.extra_retained_tokens; }) &&
         one_value(specs, [](const KvCacheSpec& s) { return s.bounded_replay; }) &&
         one_value(specs, [](const KvCacheSpec& s) { return s.block_stride_alignment; });
}

}  // namespace

TorchDtype torch_dtype(const std::string& name) {
  if (name == "float32") return {"torch.float32", 4};
  if (name == "float16") return {"torch.float16", 2};
  if (name == "uint8") return {"torch.uint8", 1};
  if (name == "float8_e4m3fn") return {"torch.float8_e4m3fn", 1};
  if (name == "float8_e5m2") return {"torch.float8_e5m2", 1};
  return {"torch.bfloat16", 2};
}

const char* kv_cache_spec_class_name(KvCacheSpecKind kind) {
  switch (kind) {
    case KvCacheSpecKind::kMlaAttention: return "MLAAttentionSpec";
    case KvCacheSpecKind::kSlidingWindowMla: return "SlidingWindowMLASpec";
    case KvCacheSpecKind::kMamba: return "MambaSpec";
    case KvCacheSpecKind::kCircularBuffer: return "CircularBufferSpec";
  }
  return "KVCacheSpec";
}

// get_num_kernel_states (~260): block_size // tokens_per_state; MambaSpec's tokens_per_state is -1.
long long KvCacheSpec::num_states() const {
  if (kind == KvCacheSpecKind::kMamba || tokens_per_state <= 0) return 1;
  return block_size / tokens_per_state;
}

// AttentionSpec.state_content_size_bytes (~560); MambaSpec's (~1135) sums its states.
long long KvCacheSpec::state_content_size_bytes() const {
  if (kind == KvCacheSpecKind::kMamba) {
    long long total = 0;
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      long long n = dtypes[i].size;
      for (long long d : shapes[i]) n *= d;
      total += n;
    }
    return total;
  }
  if (state_content_bytes) return *state_content_bytes;
  return static_cast<long long>(head_size + head_size_v) * dtype.size;
}

long long KvCacheSpec::real_page_size_bytes() const {
  if (kind == KvCacheSpecKind::kMamba) return state_content_size_bytes();
  return num_kv_heads * num_states() * state_content_size_bytes();  // unpadded_page_size_bytes (~567)
}

long long KvCacheSpec::page_size_bytes() const {
  return page_size_padded ? *page_size_padded : real_page_size_bytes();
}

long long KvCacheSpec::block_stride_alignment_bytes() const {
  if (!block_stride_alignment.multiple_of) return block_stride_alignment.value ? block_stride_alignment.value : 1;
  const int kernel_block = std::gcd(block_stride_alignment.value, block_size);
  if (kernel_block == block_size) return 1;
  return with_block_size(kernel_block).page_size_bytes();
}

void apply_alignment_padding(KvCacheSpec& spec) {
  if (!spec.alignment) return;
  const long long actual = spec.real_page_size_bytes();
  const long long padded = round_up(actual, *spec.alignment);
  if (padded != actual) spec.page_size_padded = padded;
}

KvCacheSpec KvCacheSpec::with_block_size(int new_block_size) const {
  KvCacheSpec s = *this;
  s.block_size = new_block_size;
  if (s.kind == KvCacheSpecKind::kMlaAttention || s.kind == KvCacheSpecKind::kSlidingWindowMla)
    apply_alignment_padding(s);
  return s;
}

bool KvCacheSpec::prefix_cacheable() const {
  if (kind == KvCacheSpecKind::kCircularBuffer) return false;  // ~964
  if (kind == KvCacheSpecKind::kSlidingWindowMla) return !bounded_replay;  // ~1043
  return true;
}

bool specs_merge(const std::vector<const KvCacheSpec*>& specs) {
  if (specs.empty()) return true;
  for (const KvCacheSpec* s : specs)
    if (s->kind != specs[0]->kind) return false;
  switch (specs[0]->kind) {
    case KvCacheSpecKind::kMlaAttention: return mla_merge(specs);
    case KvCacheSpecKind::kSlidingWindowMla: return sliding_window_mla_merge(specs);
    default:
      for (const KvCacheSpec* s : specs)
        if (!(*s == *specs[0])) return false;
      return true;
  }
}

bool is_uniform_type(const std::vector<const KvCacheSpec*>& specs) {
  if (!one_value(specs, [](const KvCacheSpec& s) { return s.block_size; })) return false;
  if (!one_value(specs, [](const KvCacheSpec& s) { return s.dcp_sharded; })) return false;
  const KvCacheSpec& first = *specs[0];
  for (const KvCacheSpec* s : specs) {
    if (s->kind != first.kind) return false;
    switch (first.kind) {
      case KvCacheSpecKind::kSlidingWindowMla:  // ~1097
        if (s->sliding_window != first.sliding_window || s->bounded_replay != first.bounded_replay) return false;
        break;
      case KvCacheSpecKind::kMamba:  // ~1165
        if (s->num_speculative_blocks != first.num_speculative_blocks ||
            s->num_prefill_checkpoint_blocks != first.num_prefill_checkpoint_blocks ||
            s->prefill_checkpoint_alignment != first.prefill_checkpoint_alignment ||
            s->page_size_bytes() != first.page_size_bytes() || s->tp_replicated != first.tp_replicated)
          return false;
        break;
      default: break;  // MLA: every spec a FullAttentionSpec; CircularBufferSpec (~980)
    }
  }
  return true;
}

}  // namespace mlasim
