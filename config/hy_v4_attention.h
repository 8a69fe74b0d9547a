// HY-V4's attention class (HYV4MLAAttention, vllm/models/hy_v4/nvidia/attention.py; ROCm builds the
// same class, models/hy_v4/amd/model.py ~65) decides the layers' backend after vLLM's selector:
//   1. a DSA layer probes the selector for a sparse backend and refuses to fall back to dense
//      attention when there is none (~341-361);
//   2. with learnable_sink (the config class's default), _resolve_sink_backend (~544-640) keeps the
//      selector's backend when it applies sinks, else binds HY-V4's sink-capable subclass of
//      FLASHMLA_SPARSE (models/hy_v4/nvidia/flashmla_sparse.py: the same name, builder and kernel
//      block sizes) when that validates for the deployment (has_sink=True; the block size only if
//      the user set one), else loads the sink but disables it (a warning);
//   3. a bound sink sets attention_config.sparse_mla_force_mqa (_force_sparse_mqa, ~643-664): the
//      DSA layers send every token through top-k MQA, no dense-MHA prefill
//      (MLAAttention._use_sparse_mha, mla_attention.py ~1215-1240).
// Every layer of a model mlasim reads is of one kind (every layer DSA, or none), so the first
// layer's answer is every layer's.
#pragma once

#include "config/backend_selection.h"

namespace mlasim {

// Rewrites `sel` (the selector's answer for the request, `request.query.use_sparse` = the layers
// are DSA) as HYV4MLAAttention leaves it: the refusal of step 1, the backend, card and block sizes
// of step 2 with its warning or note, learnable_sink_applied and sparse_mla_force_mqa.
void apply_hy_v4_attention(const SelectionRequest& request, bool learnable_sink, BackendSelection& sel);

// The message HYV4MLAAttention raises for a DSA layer that the selector finds no sparse backend for.
extern const char* const kHyV4NoSparseBackend;

}  // namespace mlasim
