// The backend table of docs/spec/routing.md §3, from vLLM 0.33.0's MLA metadata builders
// (config/mla_backends.cpp cites each).
#include "attention/backend_profile.h"

#include <algorithm>

namespace mlasim {

BackendProfile backend_profile(AttentionBackendKind kind) {
  BackendQuery q;  // an H200 serving DeepSeek-V3 on one GPU (128 heads), no speculation
  q.use_sparse = is_sparse_backend(kind);
  return backend_profile(kind, q);
}

BackendProfile backend_profile(AttentionBackendKind kind, const BackendQuery& query) {
  BackendQuery q = query;
  q.num_speculative_tokens = 0;
  const BuilderFacts f = builder_facts(kind, q);
  return {kind, f.query_len_support, f.class_threshold, f.require_uniform, is_sparse_backend(kind)};
}

int effective_decode_threshold(const BackendProfile& backend, int num_speculative_tokens, bool parallel_drafting) {
  if (!backend.sparse && backend.query_len_support == QueryLenSupport::kSingle) return backend.class_threshold;
  int spec = parallel_drafting ? 1 + 2 * num_speculative_tokens : 1 + num_speculative_tokens;
  return std::max(backend.class_threshold, spec);
}

}  // namespace mlasim
