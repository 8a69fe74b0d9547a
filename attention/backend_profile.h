// Attention backends' decode thresholds and query-length support (docs/spec/routing.md §3).
#pragma once

#include "config/mla_backends.h"
#include "config/scenario.h"

namespace mlasim {

struct BackendProfile {
  AttentionBackendKind kind;
  QueryLenSupport query_len_support;
  int class_threshold;  // reorder_batch_threshold of the backend class
  bool require_uniform = true;  // the split's require_uniform (dense: support != varlen)
  bool sparse = false;          // a sparse backend: speculation always raises T (spec-as-decode)
};

// The backend on an H200 with 128 heads per rank (the sparse builders' thresholds depend on both).
BackendProfile backend_profile(AttentionBackendKind kind);
BackendProfile backend_profile(AttentionBackendKind kind, const BackendQuery& query);

// The effective reorder_batch_threshold T with k speculative tokens (`_init_reorder_batch_threshold`,
// vllm/v1/attention/backend.py ~658-683, called with supports_spec_as_decode = support != single,
// mla_attention.py ~2502):
// varlen/uniform backends raise T to at least 1 + k (1 + 2k with parallel drafting); single-token
// backends stay at 1. An explicit override wins.
int effective_decode_threshold(const BackendProfile& backend, int num_speculative_tokens,
                               bool parallel_drafting = false);

// vLLM: require_uniform = (support != varlen).
inline bool requires_uniform_query_len(QueryLenSupport s) { return s != QueryLenSupport::kVarlen; }

}  // namespace mlasim
