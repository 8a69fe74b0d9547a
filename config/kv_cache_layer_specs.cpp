// Each KV-cache-holding layer's get_kv_cache_spec in vLLM 0.33, and the worker's
// customize_attention_spec (v1/worker/utils.py ~476).
#include "config/kv_cache_layers.h"

#include <algorithm>

namespace mlasim {
namespace {

using Customize = KvBackendFacts::Customize;

std::string kv_quant_mode(const std::string& d) {  // get_kv_quant_mode (kv_cache_interface.py ~120)
  if (d == "nvfp4_ds_mla") return "NVFP4_DS_MLA";
  if (d.starts_with("nvfp4")) return "NVFP4";
  if (d.starts_with("fp8")) return "FP8_PER_TENSOR";
  return "NONE";
}

KvCacheSpec attention_spec(KvCacheSpecKind kind, int block_size, int head_size, TorchDtype dtype) {
  KvCacheSpec s;
  s.kind = kind;
  s.block_size = block_size;
  s.num_kv_heads = 1;
  s.max_tp_shards = 1;
  s.head_size = head_size;
  s.dtype = std::move(dtype);
  return s;
}

// MLAAttention.get_kv_cache_spec (mla_attention.py ~1371); Kimi's MultiHeadLatentAttention the same
// without the sparse fields (kimi_k3/nvidia/mla.py ~421).
KvCacheSpec mla_spec(const KvModelLayers& m, const KvLayer& l, const KvSpecContext& ctx) {
  const std::string& d = m.cache_dtype;
  KvCacheSpec s = attention_spec(KvCacheSpecKind::kMlaAttention, ctx.block_size, l.head_size, cache_torch_dtype(d, m.model_dtype));
  s.cache_dtype_str = d;
  s.kv_quant_mode = kv_quant_mode(d);
  if (d == "fp8_ds_mla") s.state_content_bytes = 656;
  if (d == "nvfp4_ds_mla") s.state_content_bytes = 352;
  s.topk_buffer_width = l.topk_buffer_width;
  s.is_index_group_leader = l.index_group_leader;
  return s;
}

// DeepseekV4Attention.get_kv_cache_spec (deepseek_v4/attention.py ~860-884): in the fp8_ds_mla
// format 448 NoPE + 128 RoPE + 8 scale bytes = 584 per state, pages rounded up to 576 bytes;
// plain rows in their element dtype, pages rounded up to 512.
KvCacheSpec deepseek_v4_spec(const KvModelLayers& m, const KvLayer& l, const KvSpecContext& ctx) {
  const bool ds = m.dsv4_kv_cache_dtype == "fp8_ds_mla";
  KvCacheSpec s = attention_spec(KvCacheSpecKind::kMlaAttention, ctx.block_size, l.head_size,
                                 ds ? torch_dtype("uint8") : m.dsv4_torch_dtype);
  s.tokens_per_state = l.tokens_per_state;
  s.cache_dtype_str = m.dsv4_kv_cache_dtype;
  s.alignment = ds ? 576 : 512;
  s.model_version = "deepseek_v4";
  s.kv_quant_mode = kv_quant_mode(m.dsv4_kv_cache_dtype);
  if (ds) s.state_content_bytes = 584;
  apply_alignment_padding(s);
  return s;
}

// DeepseekV4SWACache.get_kv_cache_spec (v1/attention/backends/mla/sparse_swa.py ~120-147).
KvCacheSpec swa_cache_spec(const KvModelLayers& m, const KvLayer& l) {
  const bool ds = m.cache_dtype == "fp8_ds_mla" || m.cache_dtype == "nvfp4_ds_mla";
  KvCacheSpec s = attention_spec(KvCacheSpecKind::kSlidingWindowMla, l.fixed_block_size, l.head_size, m.dsv4_torch_dtype);
  s.sliding_window = l.sliding_window;
  s.cache_dtype_str = m.cache_dtype;
  if (ds) s.state_content_bytes = 584;
  s.alignment = ds ? 576 : 512;
  s.model_version = "deepseek_v4";
  s.kv_quant_mode = kv_quant_mode(m.cache_dtype);
  apply_alignment_padding(s);
  return s;
}

// CompressorStateCache (deepseek_v4/compressor.py ~140-192): float32 kv + score state, block 4
// (C4) or 8 (C128), window (1 + overlap) * ratio.
KvCacheSpec compressor_state_spec(const KvModelLayers& m, const KvLayer& l) {
  const int cr = l.tokens_per_state;
  KvCacheSpec s = attention_spec(KvCacheSpecKind::kSlidingWindowMla, cr == 4 ? 4 : 8, l.head_size, torch_dtype("float32"));
  s.sliding_window = (1 + (cr == 4)) * cr;
  s.alignment = m.cache_dtype == "fp8_ds_mla" ? 576 : 512;
  apply_alignment_padding(s);
  return s;
}

// DeepseekV4IndexerCache (deepseek_v4/attention.py ~911-925) and DeepseekV32IndexerCache
// (deepseek_v2.py ~658), which GLM-5-Next's pools index_kpool tokens into one state
// (glm5next/common/attention.py ~112-119).
KvCacheSpec indexer_spec(const KvModelLayers& m, const KvLayer& l, const KvSpecContext& ctx) {
  KvCacheSpec s = attention_spec(KvCacheSpecKind::kMlaAttention, ctx.block_size, l.head_size, torch_dtype("uint8"));
  s.tokens_per_state = l.tokens_per_state;
  if (l.kind == KvLayerKind::kDeepseekV4Indexer) {
    s.alignment = m.cache_dtype == "fp8_ds_mla" ? 576 : 512;
    apply_alignment_padding(s);
  } else {
    s.indexer_role = true;
  }
  return s;
}

// Glm5NextTailCache (glm5next/common/attention.py ~157-178): a ring of index_kpool * 2^n slots
// holding the open pool and the drafts; K and gate score as two bf16 heads.
KvCacheSpec kpool_tail_spec(const KvLayer& l, const KvSpecContext& ctx) {
  const int kpool = l.tokens_per_state;
  int pools = (kpool + ctx.num_speculative_tokens + kpool - 1) / kpool, pow2 = 1;
  while (pow2 < pools) pow2 *= 2;
  KvCacheSpec s = attention_spec(KvCacheSpecKind::kCircularBuffer, kpool * pow2, l.head_size, torch_dtype("bfloat16"));
  s.max_tp_shards.reset();
  s.num_kv_heads = 2;
  s.dcp_sharded = false;
  return s;
}

// customize_attention_spec: the backend's customize_spec, then MultipleOf(the largest size) when
// the backend takes fixed kernel block sizes only.
KvCacheSpec customize(const KvBackendFacts& b, KvCacheSpec s) {
  const auto rows = [&](int n) { s.block_stride_alignment = {static_cast<int>(n * s.state_content_size_bytes()), false}; };
  switch (b.customize) {
    case Customize::kNone: break;
    case Customize::kAlignRows: rows(1); break;  // sparse_utils.py ~44 align_blocks_to_rows
    case Customize::kAlignRowsKernelBlock: rows(b.worker_kernel_block_sizes.front().size); break;
    case Customize::kFlashMlaSparse:  // flashmla_sparse.py ~168
      if (s.kv_quant_mode != "NONE" && b.query.major != 10) s.block_stride_alignment = {64, true};
      else rows(1);
      break;
  }
  const auto& sizes = b.worker_kernel_block_sizes;
  const bool all_fixed = std::none_of(sizes.begin(), sizes.end(), [](const KernelBlockSize& k) { return k.multiple_of; });
  if (s.block_stride_alignment == BlockStrideAlignment{} && !sizes.empty() && all_fixed) {
    int largest = 0;
    for (const auto& k : sizes) largest = std::max(largest, k.size);
    s.block_stride_alignment = {largest, true};
  }
  return s;
}

}  // namespace

TorchDtype cache_torch_dtype(const std::string& d, const std::string& model_dtype) {  // torch_utils.py ~519
  if (d == "auto") return torch_dtype(model_dtype);
  if (d == "bfloat16" || d == "float16" || d == "float32") return torch_dtype(d);
  return torch_dtype("uint8");
}

KvCacheSpec kda_state_spec(const KvModelLayers& m, int num_heads, int head_dim, int conv_size, const KvSpecContext& ctx) {
  KvCacheSpec s;
  s.kind = KvCacheSpecKind::kMamba;
  s.dcp_sharded = false;
  s.block_size = ctx.mamba_block_size;
  const long long conv_dim = 3LL * num_heads * head_dim / ctx.tensor_parallel_size;
  s.shapes = {{conv_dim, conv_size - 1 + ctx.num_speculative_tokens},
              {num_heads / ctx.tensor_parallel_size, head_dim, head_dim}};
  s.dtypes = {torch_dtype(m.model_dtype), torch_dtype("float32")};
  s.page_size_padded = ctx.mamba_page_size_padded;
  s.mamba_type = "GDN_ATTN";
  s.mamba_cache_mode = ctx.mamba_cache_mode;
  s.num_speculative_blocks = ctx.num_speculative_tokens;
  return s;
}

std::optional<KvCacheSpec> kv_layer_spec(const KvModelLayers& m, const KvLayer& l, const KvSpecContext& ctx) {
  const KvBackendFacts& b = m.backends[l.backend];
  switch (l.kind) {
    case KvLayerKind::kMla: return customize(b, mla_spec(m, l, ctx));
    case KvLayerKind::kDeepseekV4Attention:
      if (l.tokens_per_state <= 1) return std::nullopt;  // the SWA part is its own cache (~862)
      return customize(b, deepseek_v4_spec(m, l, ctx));
    case KvLayerKind::kDeepseekV4SwaCache: return customize(b, swa_cache_spec(m, l));
    case KvLayerKind::kCompressorState: return customize(b, compressor_state_spec(m, l));
    case KvLayerKind::kDeepseekV4Indexer:
    case KvLayerKind::kDsaIndexer: return customize(b, indexer_spec(m, l, ctx));
    case KvLayerKind::kKpoolTail: return customize(b, kpool_tail_spec(l, ctx));
    case KvLayerKind::kKda: {
      KvCacheSpec s = kda_state_spec(m, l.num_heads, l.head_size, l.conv_size, ctx);
      if (l.checkpoint_alignment) {  // Glm5NextLinearAttention.get_kv_cache_spec (kda.py ~168-176)
        s.num_prefill_checkpoint_blocks = 1;
        s.prefill_checkpoint_alignment = l.checkpoint_alignment;
      }
      return s;
    }
  }
  return std::nullopt;
}

}  // namespace mlasim
