// The backend table of docs/spec/routing.md §3.
#include "attention/backend_profile.h"

#include <algorithm>

namespace mlasim {

BackendProfile backend_profile(AttentionBackendKind kind) {
  switch (kind) {
    case AttentionBackendKind::kFlashMla: return {kind, QueryLenSupport::kUniform, 128};
    case AttentionBackendKind::kFlashAttnMla: return {kind, QueryLenSupport::kVarlen, 512};
    case AttentionBackendKind::kFlashInferMla: return {kind, QueryLenSupport::kUniform, 1};
    case AttentionBackendKind::kRocmAiterMla: return {kind, QueryLenSupport::kUniform, 1};
    case AttentionBackendKind::kCutlassMla: return {kind, QueryLenSupport::kSingle, 1};
    case AttentionBackendKind::kTritonMla: return {kind, QueryLenSupport::kSingle, 1};
  }
  return {kind, QueryLenSupport::kSingle, 1};
}

int effective_decode_threshold(const BackendProfile& backend, int num_speculative_tokens, bool parallel_drafting) {
  if (backend.query_len_support == QueryLenSupport::kSingle) return backend.class_threshold;
  int spec = parallel_drafting ? 1 + 2 * num_speculative_tokens : 1 + num_speculative_tokens;
  return std::max(backend.class_threshold, spec);
}

}  // namespace mlasim
