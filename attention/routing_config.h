// What the routing of a step depends on (docs/spec/routing.md §3, §7): the engine profile, the
// attention backend's decode threshold T and query-length support, speculation, sparse MLA,
// and the sizes the chunked-context workspace is derived from.
#pragma once

#include <optional>
#include <span>

#include "config/masked_mha.h"
#include "config/backend_card.h"
#include "config/scenario.h"

namespace mlasim {

// The deployment facts both the options and the resolved config carry, copied through unchanged.
struct RoutingDeployment {
  EngineProfile profile = EngineProfile::kVllm033;
  AttentionBackendKind backend = AttentionBackendKind::kFlashAttnMla;  // vLLM's Hopper default
  int num_speculative_tokens = 0;       // k
  bool sparse_mla = false;              // model.index_topk present: every token on the decode path
  int index_topk = 0;                   // with sparse_mla: model.index_topk
  // attention_config.sparse_mla_force_mqa (config/attention.py ~135; HY-V4's learnable sink sets it,
  // config/hy_v4_attention.h): a sparse model's prefill rows never take dense MHA.
  bool sparse_mla_force_mqa = false;
  // engine.sparse_mla_prefill: dense_mha: every prefill row of a sparse model takes dense MHA over
  // every causal position, whatever its length (a build without _use_dense_mha_prefill's bound).
  bool sparse_dense_mha_any_length = false;
  int sglang_chunked_prefix_cache_threshold = 8192;  // SGLang default
  int block_size = 16;                  // B, vLLM default
  int max_model_len = 163840;           // DeepSeek-V3 max_position_embeddings
  int max_num_seqs = 128;               // vLLM default
  ModelRunner model_runner = ModelRunner::kV1;  // V2: rows sorted afresh each step, no reorder
  // The model has linear-attention (KDA) layers beside its MLA layers (Kimi-Linear, GLM-5-Next; or
  // the scenario's KV cache lists a Mamba group): each step also carries their own split
  // (attention/linear_attention_split.h).
  bool linear_attention_layers = false;
};

struct RoutingConfig : RoutingDeployment {
  QueryLenSupport query_len_support = QueryLenSupport::kVarlen;
  int decode_threshold = 512;           // T: the runner's reorder_batch_threshold
  bool require_uniform = false;         // split_decodes_and_prefills(require_uniform=...)
  // vLLM 0.33's sparse backends: prefill rows take dense MHA when their longest sequence fits
  // index_topk (not SM120's, which has no dense prefill: flashinfer_mla_sparse_sm120.py ~37).
  bool sparse_dense_mha_prefill = false;
  // With sparse_dense_mha_prefill: vLLM 0.33's masked-MHA prefill past index_topk on SM100
  // (config/masked_mha.h); unavailable elsewhere.
  MaskedMhaRule masked_mha;
  // The runner's reorder_batch_threshold when it is below T: the minimum over every KV cache
  // group's builder (§3), which the linear-attention layers' builder lowers to 1 + k
  // (gdn_attn.py ~171-176; model runner V1 reorders with it, the MLA builder still splits with T).
  // 0: T.
  int reorder_threshold = 0;
  // Word RowRoute::reason and BatchRoute::batch_reason (mlasim route); the step loop leaves them
  // unworded and keeps BatchRoute::wording, from which its writers word the reasons they write.
  bool row_reasons = true;
};

// The threshold the batch is reordered with (regions, swaps): reorder_threshold, else T.
inline int reorder_threshold(const RoutingConfig& c) { return c.reorder_threshold > 0 ? c.reorder_threshold : c.decode_threshold; }

// Inputs of make_routing_config; every field documents its default. Used by the `mlasim route`
// CLI and by tests; make_routing_config(const Scenario&) fills it from a scenario.
struct RoutingOptions : RoutingDeployment {
  std::optional<int> reorder_batch_threshold;           // overrides T (wins over the spec term)
  std::optional<QueryLenSupport> query_len_support;     // overrides the backend's support
  bool parallel_drafting = false;                       // spec term 1 + 2k instead of 1 + k
  // The deployment the builder's threshold depends on (sparse backends: heads per rank, SM100);
  // nullopt: an H200 with 128 heads per rank.
  std::optional<BackendQuery> backend_query;
  int tensor_parallel_size = 1;  // the masked-MHA table is per TP size
};

// Resolves T and require_uniform from the backend's card (config/backend_card.h, which holds
// each profile's thresholds, support and speculation rule), then the overrides:
// - an explicit T wins over the card's (and its raise for speculation), except under
//   vllm-2025-early, whose builder had no threshold (T = 1, no require_uniform);
// - an explicit support replaces the builder's before the card derives T's raise and
//   require_uniform from it (vllm-0.11, vllm-2025-early: reported, no require_uniform).
// - sglang: T and require_uniform are reported but unused (per-batch dispatch, §6).
// Sparse MLA: where the DSA indexer's builder votes (every profile but vllm-0.33/strict with a
// sparse backend, and vllm-0.11 / vllm-2025-early, which take the class threshold alone), T =
// min(T_backend, 1 + k) (§3); vLLM 0.33's sparse backends take dense MHA for prefills whose
// longest sequence fits index_topk. Decode context parallelism (T forced to 1) is not modelled.
RoutingConfig make_routing_config(const RoutingOptions& options);

// The `mlasim route` form: profile, backend, optional T and support overrides, k.
RoutingConfig make_routing_config(EngineProfile profile, AttentionBackendKind backend,
                                  std::optional<int> threshold = std::nullopt,
                                  std::optional<QueryLenSupport> support = std::nullopt,
                                  int num_speculative_tokens = 0);

// From a scenario: engine.*, scheduler.{num_speculative_tokens, block_size, max_model_len (0 =
// the model's max_position_embeddings), max_num_seqs}, model.index_topk, and whether the model's
// layers include linear attention.
RoutingConfig make_routing_config(const Scenario& scenario);

// The runner's threshold: the minimum over attention groups' thresholds, nullopt ignored
// (nullopt when every group has none).
std::optional<int> min_threshold(std::span<const std::optional<int>> thresholds);

// Which engine release a profile models, e.g. "vLLM v0.11.x (2-region reorder, ...)".
const char* modeled_vllm_version(EngineProfile profile);

}  // namespace mlasim
