// The KV-cache-holding layers of vLLM 0.33's MLA models, their backends and their specs.
#include "config/kv_cache_layers.h"

#include <algorithm>
#include <numeric>
#include <optional>

namespace mlasim {
namespace {

using K = AttentionBackendKind;
using Customize = KvBackendFacts::Customize;

// The KvCacheDtype as vLLM's cache_dtype string.
std::string cache_dtype_name(KvCacheDtype d) { return to_string(d); }

// canonical_sparse_mla_kv_cache_dtype (config/deployment.h) on a cache_dtype string.
std::string canonical_sparse_mla_dtype(K backend, const std::string& d) {
  const std::optional<KvCacheDtype> dtype = parse_kv_cache_dtype(d);
  return dtype ? to_string(canonical_sparse_mla_kv_cache_dtype(backend, *dtype)) : d;
}

KvBackendFacts fixed_backend(const char* cls, const char* name, std::vector<KernelBlockSize> sizes) {
  KvBackendFacts b;
  b.cls = cls;
  b.name = name;
  b.kernel_block_sizes = b.worker_kernel_block_sizes = std::move(sizes);
  return b;
}

KvBackendFacts mla_backend(K kind, const BackendQuery& q) {
  KvBackendFacts b = fixed_backend(vllm_backend_name(kind), vllm_backend_name(kind), supported_kernel_block_sizes(kind, q));
  b.worker_kernel_block_sizes = supported_kernel_block_sizes(kind, q, true);
  b.mla_kind = kind;
  b.query = q;
  switch (kind) {  // customize_spec
    case K::kFlashMlaSparse: b.customize = Customize::kFlashMlaSparse; break;        // flashmla_sparse.py ~168
    case K::kFlashInferMlaSparse:                                                      // flashinfer_mla_sparse.py ~73
    case K::kFlashInferMlaSparseSm120:
    case K::kFlashAttnMlaSparseFa4: b.customize = Customize::kAlignRowsKernelBlock; break;
    case K::kFlashInferMlaSparseSm90:                                                  // flashinfer_mla_sparse_sm90.py ~160
    case K::kFlashAttnMlaSparse: b.customize = Customize::kAlignRows; break;          // flashattn_mla_sparse.py ~54
    default: break;  // MLACommonBackend's packs per-token-head scales only
  }
  return b;
}

// The layers of one model as they register, collecting each distinct backend once.
class LayerList {
 public:
  explicit LayerList(KvModelLayers& m) : m_(m) {}
  int backend(const KvBackendFacts& b) {
    for (std::size_t i = 0; i < m_.backends.size(); ++i)
      if (m_.backends[i].cls == b.cls) return static_cast<int>(i);
    m_.backends.push_back(b);
    return static_cast<int>(m_.backends.size()) - 1;
  }
  KvLayer& add(std::string name, KvLayerKind kind, const KvBackendFacts& b) {
    KvLayer l;
    l.name = std::move(name);
    l.kind = kind;
    l.backend = backend(b);
    m_.layers.push_back(l);
    return m_.layers.back();
  }

 private:
  KvModelLayers& m_;
};

int layer_count(const ModelConfig& m) {
  return m.config_num_hidden_layers > 0 ? m.config_num_hidden_layers : m.num_hidden_layers;
}

KvBackendFacts dsa_indexer_backend() {  // DeepseekV32IndexerBackend (v1/attention/backends/mla/indexer.py ~266)
  return fixed_backend("DeepseekV32IndexerBackend", "DEEPSEEK_V32_INDEXER", {{64, false}});
}

// An MLAAttention layer (mla_attention.py ~470-620) after its indexer's caches.
void add_mla(LayerList& list, KvModelLayers& m, const ModelConfig& cfg, const KvCachePlanInputs& in,
             const std::string& prefix) {
  const K kind = in.mla_backend;
  m.cache_dtype = canonical_sparse_mla_dtype(kind, m.cache_dtype);
  KvLayer& l = list.add(prefix, KvLayerKind::kMla, mla_backend(kind, in.mla_query));
  l.head_size = cfg.kv_lora_rank + cfg.qk_rope_head_dim;
}

void plain_mla_layers(LayerList& list, KvModelLayers& m, const ModelConfig& cfg, const KvCachePlanInputs& in) {
  for (int i = 0; i < layer_count(cfg); ++i) {
    const std::string prefix = "model.layers." + std::to_string(i) + ".self_attn";
    if (cfg.index_topk) {  // deepseek_v32/attention.py ~189: the indexer's cache first
      KvLayer& idx = list.add(prefix + ".indexer.k_cache", KvLayerKind::kDsaIndexer, dsa_indexer_backend());
      idx.head_size = 128 + 128 / 128 * 4;  // index_head_dim 128: 128 fp8 + 4 fp32 scale bytes
    }
    add_mla(list, m, cfg, in, prefix + ".attn");
    if (cfg.index_topk) {
      m.layers.back().topk_buffer_width = *cfg.index_topk;
      m.layers.back().index_group_leader = true;
    }
  }
}

// _resolve_dsv4_kv_cache_dtype (deepseek_v4/attention.py ~94-129): the fp8_ds_mla block format
// takes fp8 only (auto is fp8) and writes fp8_ds_mla back to the cache config; the plain-row one
// stores bf16 or per-tensor fp8.
Status resolve_deepseek_v4_dtype(KvModelLayers& m) {
  std::string d = m.cache_dtype;
  if (!m.dsv4_ds_layout) {
    m.dsv4_kv_cache_dtype = d;
    m.dsv4_torch_dtype = torch_dtype(d.starts_with("fp8") ? "float8_e4m3fn" : "bfloat16");
    return Status::Ok();
  }
  if (d == "auto") d = "fp8";
  if (!d.starts_with("fp8")) {
    Error e;
    e.message = "DeepseekV4 fp8_ds_mla layout only supports fp8 kv-cache, got " + d +
                ". Please set `--kv-cache-dtype fp8` or select a backend that supports bfloat16 KV cache.";
    e.hint = "vLLM 0.33's DeepSeek-V4 attention (deepseek_v4/attention.py ~111) stores its KV cache as fp8_ds_mla";
    return e;
  }
  m.cache_dtype = m.dsv4_kv_cache_dtype = "fp8_ds_mla";
  m.dsv4_torch_dtype = torch_dtype("uint8");
  return Status::Ok();
}

// DeepseekV4Attention (deepseek_v4/attention.py ~206-380) of the class _select_dsv4_attn_cls picks
// (nvidia/model.py ~537): FlashMLA's, or FlashInfer's (SM120's keeps the fp8_ds_mla format, SM100's
// stores plain rows).
Result<int> deepseek_v4_layers(LayerList& list, KvModelLayers& m, const ModelConfig& cfg, const KvCachePlanInputs& in) {
  const bool flashinfer = in.mla_backend == AttentionBackendKind::kFlashInferMlaSparseDsv4;
  m.dsv4_ds_layout = !flashinfer || gpu_info(in.gpu).major == 12;
  if (Status st = resolve_deepseek_v4_dtype(m); !st) return st.error();
  const KvBackendFacts attn = flashinfer ? fixed_backend("DeepseekV4FlashInferMLASparseBackend", "FLASHINFER_MLA_SPARSE_DSV4", {{256, false}})
                                         : fixed_backend("DeepseekV4FlashMLABackend", "FLASHMLA_SPARSE_DSV4", {{256, false}});
  KvBackendFacts swa = fixed_backend(flashinfer ? "DeepseekSparseSWAFlashInferBackend" : "DeepseekSparseSWAFlashMLABackend",
                                     "DEEPSEEK_SPARSE_SWA", {{32, true}});
  swa.preferred_block_size = 256;  // sparse_swa.py ~165
  const KvBackendFacts compressor = fixed_backend("CompressorBackend", "CompressorBackend", {{1, true}});
  KvBackendFacts indexer = fixed_backend("DeepseekV4IndexerBackend", "DEEPSEEK_V4_INDEXER", {{256, false}});
  indexer.layouts = {KvTensorLayout::kBLHNC, KvTensorLayout::kBLNHC};  // indexer.py ~349
  const HybridAttentionDims& h = cfg.hybrid;
  for (std::size_t i = 0; i < cfg.attention_layers.size(); ++i) {
    const std::string prefix = "model.layers." + std::to_string(i) + ".attn";
    const int cr = cfg.attention_layers[i].compress_ratio;
    if (cr == 4) {  // C4A layers have the Lightning Indexer (~302)
      KvLayer& k = list.add(prefix + ".indexer.k_cache", KvLayerKind::kDeepseekV4Indexer, indexer);
      k.head_size = h.index_head_dim + h.index_head_dim / 128 * 4, k.tokens_per_state = cr;  // FP8 cache (~1026)
      KvLayer& s = list.add(prefix + ".indexer.compressor.state_cache", KvLayerKind::kCompressorState, compressor);
      s.head_size = 2 * 2 * h.index_head_dim, s.tokens_per_state = cr;
    }
    KvLayer& w = list.add(prefix + ".swa_cache", KvLayerKind::kDeepseekV4SwaCache, swa);
    w.head_size = h.head_dim, w.sliding_window = h.sliding_window, w.fixed_block_size = 64;
    KvLayer& a = list.add(prefix, KvLayerKind::kDeepseekV4Attention, attn);
    a.head_size = h.head_dim, a.tokens_per_state = cr;
    if (cr > 1) {
      KvLayer& c = list.add(prefix + ".compressor.state_cache", KvLayerKind::kCompressorState, compressor);
      c.head_size = 2 * (1 + (cr == 4)) * h.head_dim, c.tokens_per_state = cr;
    }
  }
  return 0;
}

KvBackendFacts gdn_backend() {  // GDN_ATTN (v1/attention/backends/gdn_attn.py): an SSM backend
  KvBackendFacts b = fixed_backend("GDNAttentionBackend", "GDN_ATTN", {{1, true}});
  b.ssm = true;
  return b;
}

KvLayer& add_kda(LayerList& list, const std::string& name, int heads, int head_dim, int conv) {
  KvLayer& l = list.add(name, KvLayerKind::kKda, gdn_backend());
  l.num_heads = heads, l.head_size = head_dim, l.conv_size = conv;
  return l;
}

// KDA layers at `model.layers.N.self_attn` and dense MLA layers at that name + `mla_suffix`:
// KimiLinearForCausalLM (KimiGatedDeltaNetAttention; MultiHeadLatentAttention, whose spec is
// MLAAttention's without the sparse fields, kimi_k3/nvidia/mla.py ~421; suffix "") and
// BailingMoeV3ForCausalLM (BailingMoeV3KimiDeltaAttention; MultiHeadLatentAttentionWrapper's
// MLAAttention, bailing_moe_v3.py ~1229-1263, layers/mla.py ~132; suffix ".attn").
void kda_and_mla_layers(LayerList& list, KvModelLayers& m, const ModelConfig& cfg, const KvCachePlanInputs& in,
                        const std::string& mla_suffix) {
  const HybridAttentionDims& h = cfg.hybrid;
  for (std::size_t i = 0; i < cfg.attention_layers.size(); ++i) {
    const std::string prefix = "model.layers." + std::to_string(i) + ".self_attn";
    if (cfg.attention_layers[i].kind == AttentionLayerKind::kLinear)
      add_kda(list, prefix, h.linear_num_heads, h.linear_head_dim, h.linear_conv_kernel_dim);
    else
      add_mla(list, m, cfg, in, prefix + mla_suffix);
  }
}

// Glm5NextForCausalLM: KDA layers (Glm5NextLinearAttention) and MLA layers with the kpool
// indexer's K cache and tail ring (glm5next/common/attention.py ~260-276) before MLAAttention.
void glm5_next_layers(LayerList& list, KvModelLayers& m, const ModelConfig& cfg, const KvCachePlanInputs& in) {
  const HybridAttentionDims& h = cfg.hybrid;
  const GpuInfo& gpu = gpu_info(in.gpu);
  // _resolve_kda_prefill_backend (kda.py ~137): FlashKDA on SM90/10x/12x for bf16, head 128 and a
  // bounded gate; its checkpoints land every 16 tokens (kda_checkpoint.py ~9).
  const bool flashkda = gpu.vendor == GpuVendor::kNvidia && (gpu.major == 9 || gpu.major == 10 || gpu.major == 12) &&
                        h.linear_head_dim == 128 && m.model_dtype == "bfloat16" && h.linear_lower_bound.has_value();
  // Glm5NextIndexerBackend: index_kpool x the paged-MQA page sizes (indexer.py ~299, deep_gemm.py ~37).
  std::vector<KernelBlockSize> pages;
  for (int p : gpu.major == 12 ? std::vector<int>{64} : std::vector<int>{32, 64}) pages.push_back({*h.index_kpool * p, false});
  const KvBackendFacts indexer = fixed_backend("Glm5NextIndexerBackend", "DEEPSEEK_V32_INDEXER", pages);
  KvBackendFacts tail = fixed_backend("KpoolTailBackend", "KPOOL_TAIL", {{1, true}});
  tail.layouts = {KvTensorLayout::kBLHNC};  // indexer.py ~314
  for (std::size_t i = 0; i < cfg.attention_layers.size(); ++i) {
    const std::string prefix = "model.layers." + std::to_string(i) + ".self_attn";
    if (cfg.attention_layers[i].kind == AttentionLayerKind::kLinear) {
      KvLayer& l = add_kda(list, prefix, h.linear_num_heads, h.linear_head_dim, h.linear_conv_kernel_dim);
      if (flashkda) l.checkpoint_alignment = 16;
      continue;
    }
    if (cfg.index_topk) {
      KvLayer& k = list.add(prefix + ".indexer.k_cache", KvLayerKind::kDsaIndexer, indexer);
      k.head_size = h.index_head_dim + h.index_head_dim / 128 * 4, k.tokens_per_state = *h.index_kpool;
      KvLayer& t = list.add(prefix + ".indexer.tail_cache", KvLayerKind::kKpoolTail, tail);
      t.head_size = h.index_head_dim, t.tokens_per_state = *h.index_kpool;
    }
    add_mla(list, m, cfg, in, prefix + ".attn");
    if (cfg.index_topk) {  // get_sparse_topk_buffer_width (glm5next/common/model.py ~106)
      const int width = *cfg.index_topk + *h.index_kpool - 1;
      m.layers.back().topk_buffer_width = (width + 127) / 128 * 128;
      m.layers.back().index_group_leader = true;
    }
  }
}

}  // namespace

bool KvBackendFacts::supports_block_size(int block_size) const {
  if (mla_kind) return mlasim::supports_block_size(*mla_kind, query, block_size);
  if (kernel_block_sizes.empty()) return true;  // AttentionBackend.supports_block_size (backend.py ~122)
  for (const auto& s : kernel_block_sizes)
    if (block_size % s.size == 0) return true;
  return false;
}

int KvBackendFacts::preferred(int default_block_size) const {
  if (preferred_block_size) return *preferred_block_size;
  if (kernel_block_sizes.empty() || supports_block_size(default_block_size)) return default_block_size;  // backend.py ~155
  int m = kernel_block_sizes.front().size;
  for (const auto& s : kernel_block_sizes) m = std::min(m, s.size);
  return m;
}

Result<KvModelLayers> kv_model_layers(const ModelConfig& cfg, const KvCachePlanInputs& in) {
  KvModelLayers m;
  m.cache_dtype = cache_dtype_name(in.kv_cache_dtype);
  // The serving dtype: float16 stays, float32 (and a config without one) serves as bfloat16
  // (vllm/config/model.py ~2440 _resolve_auto_dtype).
  m.model_dtype = cfg.torch_dtype == "float16" ? "float16" : "bfloat16";
  LayerList list(m);
  if (cfg.attention_layers.empty()) {
    plain_mla_layers(list, m, cfg, in);
  } else if (cfg.architecture == "DeepseekV4ForCausalLM") {
    auto r = deepseek_v4_layers(list, m, cfg, in);
    if (!r) return r.error();
  } else if (cfg.architecture == "KimiLinearForCausalLM") {
    kda_and_mla_layers(list, m, cfg, in, "");
  } else if (cfg.architecture == "BailingMoeV3ForCausalLM") {
    kda_and_mla_layers(list, m, cfg, in, ".attn");
  } else {
    glm5_next_layers(list, m, cfg, in);
  }
  m.is_hybrid = std::any_of(m.layers.begin(), m.layers.end(), [](const KvLayer& l) { return l.kind == KvLayerKind::kKda; });
  return m;
}

}  // namespace mlasim
