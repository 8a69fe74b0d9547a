// RoutingConfig from a profile + backend (+ overrides), or from a scenario (docs/spec/routing.md §3, §7).
#include "attention/routing_config.h"

#include <algorithm>
#include <array>

#include "attention/backend_profile.h"
#include "config/scenario_deployment.h"

namespace mlasim {

namespace {

// vLLM 0.14.0-0.18.x's MLA builders differ from 0.33.0's in two backends: FlashInfer-MLA is UNIFORM
// (v1/attention/backends/mla/flashinfer_mla.py:34 in 0.16.0; 0.33: VARLEN) and Triton-MLA keeps
// MLACommonMetadataBuilder's SINGLE_ONLY (model_executor/layers/attention/mla_attention.py:1225;
// 0.33: UNIFORM). Thresholds are the same (flashmla.py:111, flashattn_mla.py:105).
QueryLenSupport query_len_support_0_14(AttentionBackendKind kind, const BackendProfile& backend) {
  if (kind == AttentionBackendKind::kFlashInferMla) return QueryLenSupport::kUniform;
  if (kind == AttentionBackendKind::kTritonMla) return QueryLenSupport::kSingle;
  return backend.query_len_support;
}

// vLLM 0.11.1-0.13.x: as 0.14, and ROCm-AITER-MLA keeps SINGLE_ONLY too (0.12.0
// v1/attention/backends/mla/rocm_aiter_mla.py sets no query_len_support; 0.14+: UNIFORM).
QueryLenSupport query_len_support_0_12(AttentionBackendKind kind, const BackendProfile& backend) {
  if (kind == AttentionBackendKind::kRocmAiterMla) return QueryLenSupport::kSingle;
  return query_len_support_0_14(kind, backend);
}

}  // namespace

RoutingConfig make_routing_config(const RoutingOptions& o) {
  RoutingConfig c;
  static_cast<RoutingDeployment&>(c) = o;
  BackendProfile backend = o.backend_query ? backend_profile(o.backend, *o.backend_query) : backend_profile(o.backend);
  if (o.profile == EngineProfile::kVllm3Region) backend.query_len_support = query_len_support_0_14(o.backend, backend);
  if (o.profile == EngineProfile::kVllm012) backend.query_len_support = query_len_support_0_12(o.backend, backend);
  if (o.query_len_support) backend.query_len_support = *o.query_len_support;
  c.query_len_support = backend.query_len_support;

  if (o.profile == EngineProfile::kVllm2025Early) {
    // The early-2025 MLA builder hard-coded `num_tokens == 1` as decode; no threshold existed.
    c.decode_threshold = 1;
    c.require_uniform = false;
    return c;
  }

  if (o.profile == EngineProfile::kVllm011) {
    // vLLM 0.11.0's MLA builders keep their class threshold: 512 for FlashAttention-MLA
    // (v1/attention/backends/mla/flashattn_mla.py:67), MLACommonMetadataBuilder's 1 for every other
    // (mla/common.py:439); no raise for speculation (_init_reorder_batch_threshold is not called)
    // and no require_uniform in the split (mla/common.py:683).
    c.decode_threshold = o.reorder_batch_threshold ? *o.reorder_batch_threshold
                                                   : (o.backend == AttentionBackendKind::kFlashAttnMla ? 512 : 1);
    c.require_uniform = false;
    return c;
  }
  int t = o.reorder_batch_threshold ? *o.reorder_batch_threshold
                                    : effective_decode_threshold(backend, o.num_speculative_tokens, o.parallel_drafting);
  const bool vllm033 = o.profile == EngineProfile::kVllm033 || o.profile == EngineProfile::kStrict;
  if (o.sparse_mla && vllm033 && backend.sparse) {
    // vLLM 0.33: the DSA indexer's builder opts out of the threshold vote (reorder_batch_threshold
    // None, v1/attention/backends/mla/indexer.py ~985-1033), so T is the sparse backend's; its split
    // needs uniform decodes only where the builder says so (require_uniform_decodes).
    c.decode_threshold = t;
    c.require_uniform = o.query_len_support ? requires_uniform_query_len(backend.query_len_support) : backend.require_uniform;
    c.sparse_dense_mha_prefill = supports_dense_mha_prefill(o.backend) && o.index_topk > 0;
    return c;
  }
  if (o.sparse_mla) {
    // DeepSeek-V3.2 indexer group: threshold 1 + k (1 + 2k with parallel drafting); the runner
    // reorders with the minimum over groups.
    const int indexer = o.parallel_drafting ? 1 + 2 * o.num_speculative_tokens : 1 + o.num_speculative_tokens;
    const std::array<std::optional<int>, 2> groups{t, indexer};
    t = *min_threshold(groups);
  }
  c.decode_threshold = t;
  c.require_uniform = requires_uniform_query_len(backend.query_len_support);
  return c;
}

RoutingConfig make_routing_config(EngineProfile profile, AttentionBackendKind backend, std::optional<int> threshold,
                                  std::optional<QueryLenSupport> support, int num_speculative_tokens) {
  RoutingOptions o;
  o.profile = profile;
  o.backend = backend;
  o.reorder_batch_threshold = threshold;
  o.query_len_support = support;
  o.num_speculative_tokens = num_speculative_tokens;
  return make_routing_config(o);
}

RoutingConfig make_routing_config(const Scenario& s) {
  RoutingOptions o;
  o.profile = s.engine.profile;
  o.backend = s.engine.attention_backend;
  o.reorder_batch_threshold = s.engine.reorder_batch_threshold;
  o.query_len_support = s.engine.query_len_support;
  o.num_speculative_tokens = s.scheduler.num_speculative_tokens;
  o.sparse_mla = s.model.index_topk.has_value();
  o.index_topk = s.model.index_topk.value_or(0);
  o.sglang_chunked_prefix_cache_threshold = s.engine.sglang_chunked_prefix_cache_threshold;
  o.block_size = s.scheduler.block_size;
  o.max_model_len = s.scheduler.max_model_len > 0 ? s.scheduler.max_model_len : s.model.max_position_embeddings;
  o.max_num_seqs = s.scheduler.max_num_seqs;
  o.model_runner = s.engine.model_runner;
  o.backend_query = backend_query(s);
  return make_routing_config(o);
}

std::optional<int> min_threshold(std::span<const std::optional<int>> thresholds) {
  std::optional<int> best;
  for (const auto& t : thresholds)
    if (t && (!best || *t < *best)) best = *t;
  return best;
}

const char* modeled_vllm_version(EngineProfile profile) {
  switch (profile) {
    case EngineProfile::kVllm2025Early:
      return "vLLM 0.8.x's V1 engine (spring 2025): MLACommonMetadataBuilder.reorder_batch, q == 1 is decode; "
             "its scheduler rules (no priorities, no MTP on V1)";
    case EngineProfile::kVllm011:
      return "vLLM 0.11.0: 2-region reorder_batch_to_split_decodes_and_prefills, class thresholds, split without "
             "require_uniform; 0.11.0's scheduler rules";
    case EngineProfile::kVllm012:
      return "vLLM 0.12.0-0.13.x (Dec 2025): 3-region reorder with every q <= T row first, fresh prompts included; "
             "split with require_uniform; their scheduler rules";
    case EngineProfile::kVllm3Region:
      return "vLLM 0.14.0-0.18.x (Jan - Mar 2026): 3-region reorder with fresh prompts last, split with "
             "require_uniform; their scheduler rules";
    case EngineProfile::kVllm033:
      return "vLLM 0.33.0 (4-region reorder since Mar 2026): split with require_uniform, "
             "treat_short_extends_as_decodes; 0.33.0's scheduler rules";
    case EngineProfile::kStrict:
      return "vLLM 0.33.0 with treat_short_extends_as_decodes=False (stateful-layer rule, vllm-ascend fix)";
    case EngineProfile::kSglang:
      return "SGLang 0.5.18-0.5.19 DeepSeek-V2/V3 attention dispatch (per batch; not vLLM), vLLM 0.33.0's scheduler";
  }
  return "?";
}

}  // namespace mlasim
