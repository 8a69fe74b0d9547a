// vLLM 0.33.0's attention backend selection for an MLA model, and what follows from the backend:
// the KV block size and the model runner. CudaPlatform.get_valid_backends / get_attn_backend_cls
// (vllm/platforms/cuda.py ~377-505; ROCm: platforms/rocm.py ~531-560, ~725-790), block sizes as
// Platform.update_block_size_for_backend (platforms/interface.py ~700-790) and the worker's
// select_common_block_size (v1/worker/utils.py ~515-557), the runner as VllmConfig.
// use_v2_model_runner (config/vllm.py ~731-767).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/backend_card.h"

namespace mlasim {

struct BackendCandidate {
  AttentionBackendKind kind;
  std::vector<std::string> reasons;  // empty = valid
};

struct BackendSelection {
  std::vector<BackendCandidate> candidates;  // priority order (the explicit one alone when given)
  AttentionBackendKind backend = AttentionBackendKind::kFlashAttnMla;
  bool explicit_backend = false;
  int block_size = 16;                // the KV-cache manager's block size
  bool block_size_auto = true;
  int kernel_block_size = 16;         // the attention kernel's (select_common_block_size)
  BackendCard card;                   // the chosen backend's facts under the request's profile
  ModelRunner model_runner = ModelRunner::kV2;
  std::string model_runner_reason;
  std::vector<std::string> warnings;  // vLLM's warnings, e.g. a --block-size that precluded a backend
  std::string error;                  // non-empty: vLLM refuses the configuration (this text)
  // The model's attention class names its backend itself, without the selector (DeepSeek-V4,
  // vllm/models/deepseek_v4/nvidia/model.py ~537): `candidates` stays empty.
  bool chosen_by_model = false;
  // HY-V4's learnable attention sink (config/hy_v4_attention.h): applied by the backend bound
  // (the selector's when it takes sinks, else HY-V4's FLASHMLA_SPARSE subclass), which also sets
  // attention_config.sparse_mla_force_mqa: no dense-MHA prefill on the sparse layers.
  bool learnable_sink_applied = false;
  bool sparse_mla_force_mqa = false;
  std::vector<std::string> notes;     // vLLM's info lines about the choice (HY-V4's sink backend)
};

struct SelectionRequest {
  EngineProfile profile = EngineProfile::kVllm033;  // vllm-0.33 or strict
  BackendQuery query;                              // query.block_size: the user's --block-size
  std::optional<AttentionBackendKind> backend;     // --attention-backend
  std::optional<ModelRunner> model_runner;         // VLLM_USE_V2_MODEL_RUNNER
  bool validate_explicit = true;                   // check an explicit backend as vLLM does
};

// _get_backend_priorities (cuda.py ~84-155; rocm.py ~531-551 with VLLM_ROCM_USE_AITER unset).
std::vector<AttentionBackendKind> backend_priorities(const BackendQuery& q);

BackendSelection select_backend(const SelectionRequest& request);

// The layers' backend is `kind` (chosen by the selector, or bound by the model's attention class):
// its card, and the block sizes that follow from it (the user's, else the backend's preferred size
// with a sparse model's indexer; the kernel's by select_common_block_size).
void bind_backend(const SelectionRequest& request, AttentionBackendKind kind, BackendSelection& sel);

// DeepSeek-V4's attention class (_select_dsv4_attn_cls, vllm/models/deepseek_v4/nvidia/model.py
// ~537-568): FLASHINFER_MLA_SPARSE_DSV4 on SM12x or when named, else FLASHMLA_SPARSE_DSV4; vLLM's
// other FlashInfer sparse backends named are refused. The block size is the KV planning's
// (config/kv_cache_plan.h); this sets the one the backend's kernels take.
BackendSelection select_deepseek_v4_backend(const SelectionRequest& request);

// The DeepseekV32 indexer's kernel block sizes (v1/attention/backends/mla/indexer.py ~285):
// the sparse model's second attention backend, which the block size must also suit.
std::vector<KernelBlockSize> indexer_kernel_block_sizes(const BackendQuery& q);

}  // namespace mlasim
