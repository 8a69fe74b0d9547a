// One MLA attention backend under one engine profile: its class facts (name, sparse, kernel block
// sizes), its metadata builder's reorder_batch_threshold and query-length support, what
// speculation does to the threshold, the split's require_uniform, and what a sparse model's DSA
// indexer adds. Computed once per (profile, backend, deployment query with k speculative tokens);
// routing, `mlasim deploy`, `mlasim releases` and the reports read it. Each fact cites vLLM 0.33.0
// (config/backend_card.cpp) or, where the profile's release differs, that release's source.
#pragma once

#include <optional>
#include <vector>

#include "config/engine_enums.h"
#include "config/mla_backends.h"

namespace mlasim {

// max_decode_query_len with k speculative tokens: 1 + k, or 1 + 2k with parallel drafting
// (_init_reorder_batch_threshold, vllm/v1/attention/backend.py ~658-683). The threshold's raise
// under speculation and the DSA indexer's threshold both come from here.
int max_decode_query_len(int num_speculative_tokens, bool parallel_drafting);

struct BackendCard {
  EngineProfile profile = EngineProfile::kVllm033;
  AttentionBackendKind kind = AttentionBackendKind::kFlashAttnMla;
  const char* vllm_name = "FLASH_ATTN_MLA";  // AttentionBackendEnum name
  const char* source = "";                    // where the class is (validate_configuration's facts)
  bool sparse = false;                        // a sparse (DSA) backend
  // A sparse model's prefill rows may take dense MHA on this backend (vLLM 0.33's MLAAttention
  // builds a prefill backend for every sparse one but FLASHINFER_MLA_SPARSE_SM120).
  bool dense_mha_prefill = false;
  // get_supported_kernel_block_sizes: as the platform's selection calls it, and as the worker
  // does (with the kv_cache_spec: FLASHMLA_SPARSE's quantized-cache variant on SM100).
  std::vector<KernelBlockSize> kernel_block_sizes;
  std::vector<KernelBlockSize> worker_kernel_block_sizes;
  QueryLenSupport query_len_support = QueryLenSupport::kVarlen;
  int class_threshold = 1;            // the builder class's reorder_batch_threshold
  bool has_threshold = true;          // false: the early-2025 builder's fixed q == 1 (nothing to override)
  bool spec_as_decode = true;         // speculation raises the threshold to max_decode_query_len
  int reorder_batch_threshold = 1;    // T after speculation
  bool require_uniform = false;       // split_decodes_and_prefills(require_uniform=...)
  // A sparse model's DSA indexer group's threshold in the runner's minimum; nullopt: it has no vote.
  std::optional<int> indexer_threshold;
  const char* builder_source = "";    // where the builder sets threshold and support
};

// The card for `kind` under `profile`; q gives the device, heads per rank and k (num_speculative_
// tokens, parallel_drafting). `query_len_support` (engine.query_len_support, `mlasim route
// --query-len-support`) replaces the builder's support before the threshold's raise and the
// split's require_uniform are derived from it.
BackendCard backend_card(EngineProfile profile, AttentionBackendKind kind, const BackendQuery& q,
                         std::optional<QueryLenSupport> query_len_support = std::nullopt);

}  // namespace mlasim
