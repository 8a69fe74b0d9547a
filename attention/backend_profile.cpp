// The backend table of docs/spec/routing.md §3, as vLLM 0.33.0's MLA metadata builders declare it
// (vllm/v1/attention/backends/mla/*.py; the class defaults are SINGLE_ONLY and threshold 1,
// model_executor/layers/attention/mla_attention.py ~2288, ~2301).
#include "attention/backend_profile.h"

#include <algorithm>

namespace mlasim {

BackendProfile backend_profile(AttentionBackendKind kind) {
  switch (kind) {
    // flashmla.py ~111-112: UNIFORM, 128 ("process small prefills with decode pathway").
    case AttentionBackendKind::kFlashMla: return {kind, QueryLenSupport::kUniform, 128};
    // flashattn_mla.py ~128-129: VARLEN, 512.
    case AttentionBackendKind::kFlashAttnMla: return {kind, QueryLenSupport::kVarlen, 512};
    // flashinfer_mla.py ~141: VARLEN; the threshold is the class default 1.
    case AttentionBackendKind::kFlashInferMla: return {kind, QueryLenSupport::kVarlen, 1};
    // rocm_aiter_mla.py ~699: UNIFORM, threshold 1 (VARLEN only with its adaptive-varlen verify
    // option, ~880, which mlasim does not model).
    case AttentionBackendKind::kRocmAiterMla: return {kind, QueryLenSupport::kUniform, 1};
    // cutlass_mla.py ~31: no override, so SINGLE_ONLY and threshold 1.
    case AttentionBackendKind::kCutlassMla: return {kind, QueryLenSupport::kSingle, 1};
    // triton_mla.py ~78: UNIFORM; the threshold is the class default 1.
    case AttentionBackendKind::kTritonMla: return {kind, QueryLenSupport::kUniform, 1};
  }
  return {kind, QueryLenSupport::kSingle, 1};
}

int effective_decode_threshold(const BackendProfile& backend, int num_speculative_tokens, bool parallel_drafting) {
  if (backend.query_len_support == QueryLenSupport::kSingle) return backend.class_threshold;
  int spec = parallel_drafting ? 1 + 2 * num_speculative_tokens : 1 + num_speculative_tokens;
  return std::max(backend.class_threshold, spec);
}

}  // namespace mlasim
