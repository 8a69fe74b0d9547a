// The layers of a model that hold KV cache, as vLLM 0.33 constructs them (their order in
// static_forward_context, their attention backends, the spec each one returns from
// get_kv_cache_spec). Plain MLA models: one MLAAttention per layer, after its DSA indexer's cache
// when sparse. The hybrid families: DeepSeek-V4 (vllm/models/deepseek_v4/attention.py,
// compressor.py, v1/attention/backends/mla/sparse_swa.py), Kimi-Linear (models/kimi_k3/nvidia/
// model.py, mla.py, model_executor/layers/mamba/gdn/kimi_gdn_linear_attn.py) and GLM-5-Next
// (models/glm5next/common/model.py, attention.py, kda.py).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "config/deployment.h"
#include "config/engine_enums.h"
#include "config/kv_cache_groups.h"
#include "config/mla_backends.h"
#include "config/model_config.h"

namespace mlasim {

// What the KV planning reads off vLLM's CacheConfig, ParallelConfig and the platform.
struct KvCachePlanInputs {
  GpuKind gpu = GpuKind::kH200;
  KvCacheDtype kv_cache_dtype = KvCacheDtype::kAuto;  // after verify_and_update_config
  int tensor_parallel_size = 1;
  std::optional<int> block_size;                      // --block-size (cache_config.user_specified_block_size)
  int selected_block_size = 16;                       // plain MLA: the block size the selection chose
  int num_speculative_tokens = 0;
  int num_gpu_blocks = 8192;                          // num_gpu_blocks_override
  bool enable_prefix_caching = true;
  int max_model_len = 0;
  AttentionBackendKind mla_backend = AttentionBackendKind::kFlashAttnMla;  // the selector's, for MLAAttention
  BackendQuery mla_query;                             // what it was selected for
};

// One attention backend class as the KV planning sees it.
struct KvBackendFacts {
  std::string cls;   // the class (distinct backends are distinct classes)
  std::string name;  // get_name()
  bool ssm = false;  // is_ssm(): Mamba-style layers take no part in block-size choice
  std::vector<KernelBlockSize> kernel_block_sizes;         // get_supported_kernel_block_sizes()
  std::vector<KernelBlockSize> worker_kernel_block_sizes;  // ... (kv_cache_spec), as the worker asks
  std::optional<int> preferred_block_size;                 // a get_preferred_block_size override
  std::optional<AttentionBackendKind> mla_kind;            // an MLA backend: supports_block_size is its own
  BackendQuery query;
  std::vector<KvTensorLayout> layouts;                     // supported_kv_cache_layouts(); empty: None
  enum class Customize { kNone, kAlignRows, kAlignRowsKernelBlock, kFlashMlaSparse } customize = Customize::kNone;
  bool supports_block_size(int block_size) const;
  int preferred(int default_block_size) const;  // get_preferred_block_size
};

enum class KvLayerKind {
  kMla,                  // MLAAttention / Kimi's MultiHeadLatentAttention
  kDeepseekV4Attention,  // DeepseekV4Attention with compress ratio > 1 (~860)
  kDeepseekV4SwaCache,   // DeepseekV4SWACache (sparse_swa.py ~120)
  kCompressorState,      // CompressorStateCache (compressor.py ~179)
  kDeepseekV4Indexer,    // DeepseekV4IndexerCache (attention.py ~911)
  kDsaIndexer,           // DeepseekV32IndexerCache (deepseek_v2.py ~658); GLM-5-Next's pools tokens
  kKpoolTail,            // Glm5NextTailCache (glm5next/common/attention.py ~157)
  kKda,                  // a KDA layer's MambaBase.get_kv_cache_spec (mamba/abstract.py ~72)
};

struct KvLayer {
  std::string name;
  KvLayerKind kind = KvLayerKind::kMla;
  int backend = 0;                     // index into KvModelLayers::backends
  int head_size = 0;                   // MLA head / head_dim / state_dim / indexer cache head / KDA head dim
  int tokens_per_state = 1;            // compress ratio, index_kpool
  int sliding_window = 0;
  int fixed_block_size = 0;            // 0: the cache block size
  std::optional<int> topk_buffer_width;
  bool index_group_leader = false;
  int num_heads = 0, conv_size = 0;    // KDA
  std::optional<int> checkpoint_alignment;  // KDA prefill checkpoints (FlashKDA: 16)
};

struct KvModelLayers {
  std::vector<KvBackendFacts> backends;  // distinct, in the order the layers first use them
  std::vector<KvLayer> layers;           // static_forward_context order
  bool is_hybrid = false;                // ModelConfig.is_hybrid: Mamba-style layers
  std::string cache_dtype;               // cache_config.cache_dtype once the layers are built
  std::string model_dtype = "bfloat16";  // the serving dtype
  // DeepSeek-V4's attention layers: their kv_cache_dtype and torch dtype as
  // _resolve_dsv4_kv_cache_dtype gives them (deepseek_v4/attention.py ~94-129), and whether their
  // class keeps the fp8_ds_mla block format (use_fp8_ds_mla_layout).
  std::string dsv4_kv_cache_dtype;
  TorchDtype dsv4_torch_dtype;
  bool dsv4_ds_layout = true;
};

// The layers of `m` (the config's layers: m.attention_layers, else config_num_hidden_layers or
// num_hidden_layers plain MLA ones). Errors: what vLLM raises building them (DeepSeek-V4's
// fp8_ds_mla layout with a non-fp8 --kv-cache-dtype).
Result<KvModelLayers> kv_model_layers(const ModelConfig& m, const KvCachePlanInputs& in);

// A layer's spec at the resolved sizes (get_kv_cache_spec, then customize_attention_spec,
// v1/worker/utils.py ~476, for attention specs).
struct KvSpecContext {
  int block_size = 16;          // cache_config.block_size
  int mamba_block_size = 16;    // cache_config.mamba_block_size
  std::optional<long long> mamba_page_size_padded;
  std::string mamba_cache_mode = "none";
  int num_speculative_tokens = 0;
  int tensor_parallel_size = 1;
};
// nullopt: a layer without a cache of its own (DeepSeek-V4's sliding-window-only attention).
std::optional<KvCacheSpec> kv_layer_spec(const KvModelLayers& model, const KvLayer& layer, const KvSpecContext& ctx);

// MambaStateShapeCalculator.kda_state_shape / kda_state_dtype (mamba_utils.py ~296, ~133): the
// conv state (conv_dim / tp, kernel - 1 + k) in the model dtype and the recurrent state
// (heads / tp, head_dim, head_dim) in float32.
KvCacheSpec kda_state_spec(const KvModelLayers& model, int num_heads, int head_dim, int conv_size, const KvSpecContext& ctx);

// The cache tensor's element type for a kv_cache_dtype string (get_kv_cache_torch_dtype,
// utils/torch_utils.py ~519): "auto" the model dtype, a float name itself, anything else uint8.
TorchDtype cache_torch_dtype(const std::string& kv_cache_dtype, const std::string& model_dtype);

}  // namespace mlasim
