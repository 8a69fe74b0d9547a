// RoutingConfig from a profile + backend (+ overrides), or from a scenario (docs/spec/routing.md §3, §7).
#include "attention/routing_config.h"

#include <algorithm>
#include <array>

#include "config/scenario_deployment.h"
#include "config/model_config.h"

namespace mlasim {

namespace {

// The card's query: the deployment's (an H200 with 128 heads per rank when not given), with the
// options' speculation.
BackendQuery card_query(const RoutingOptions& o) {
  BackendQuery q;
  if (o.backend_query)
    q = *o.backend_query;
  else
    q.use_sparse = is_sparse_backend(o.backend);
  q.num_speculative_tokens = o.num_speculative_tokens;
  q.parallel_drafting = o.parallel_drafting;
  return q;
}

}  // namespace

RoutingConfig make_routing_config(const RoutingOptions& o) {
  RoutingConfig c;
  static_cast<RoutingDeployment&>(c) = o;
  const BackendCard card = backend_card(o.profile, o.backend, card_query(o), o.query_len_support);
  c.query_len_support = card.query_len_support;
  c.require_uniform = card.require_uniform;
  c.decode_threshold = card.reorder_batch_threshold;
  // An explicit T wins over the builder's and its raise for speculation (the early-2025 builder
  // had no threshold to override).
  if (o.reorder_batch_threshold && card.has_threshold) c.decode_threshold = *o.reorder_batch_threshold;
  if (o.linear_attention_layers) {
    // GDNAttentionMetadataBuilder: _init_reorder_batch_threshold(1, use_spec_decode) votes 1, or
    // max_decode_query_len with speculation; the runner takes the minimum over the groups.
    const int gdn = o.num_speculative_tokens > 0 ? max_decode_query_len(o.num_speculative_tokens, o.parallel_drafting) : 1;
    if (gdn < c.decode_threshold) c.reorder_threshold = gdn;
  }
  if (!o.sparse_mla) return c;
  // A sparse model: the runner reorders with the minimum over attention groups, the DSA indexer's
  // among them where it votes; vLLM 0.33's sparse backends take dense MHA for short prefills.
  if (card.indexer_threshold) {
    const std::array<std::optional<int>, 2> groups{c.decode_threshold, card.indexer_threshold};
    c.decode_threshold = *min_threshold(groups);
  }
  c.sparse_dense_mha_prefill = card.dense_mha_prefill && o.index_topk > 0 && !o.sparse_mla_force_mqa;
  if (o.sparse_dense_mha_any_length) c.sparse_dense_mha_prefill = true, c.sparse_mla_force_mqa = false;
  // The masked-MHA prefill needs the layer's prefill backend, as the dense one does.
  if (card.dense_mha_prefill && !o.sparse_mla_force_mqa && o.index_topk > 0)
    c.masked_mha = masked_mha_rule(card_query(o), o.backend, o.tensor_parallel_size, o.max_model_len, o.max_num_seqs,
                                   o.block_size, o.index_topk);
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
  o.sparse_mla_force_mqa =
      s.deployment.selection.sparse_mla_force_mqa || s.engine.sparse_mla_prefill == SparseMlaPrefill::kForceMqa;
  o.sparse_dense_mha_any_length = s.engine.sparse_mla_prefill == SparseMlaPrefill::kDenseMha;
  o.sglang_chunked_prefix_cache_threshold = s.engine.sglang_chunked_prefix_cache_threshold;
  o.block_size = s.scheduler.block_size;
  o.max_model_len = s.scheduler.max_model_len > 0 ? s.scheduler.max_model_len : s.model.max_position_embeddings;
  o.max_num_seqs = s.scheduler.max_num_seqs;
  o.model_runner = s.engine.model_runner;
  o.backend_query = backend_query(s);
  o.tensor_parallel_size = s.parallel.tensor_parallel_size;
  // Linear attention: the config's layers say so, or the KV cache has a Mamba group (the state of
  // the linear-attention layers in the MLA families vLLM 0.33 serves: Kimi-Linear, GLM-5-Next),
  // as a scenario's cache.kv_cache_groups may list it.
  const auto& layers = s.model.attention_layers;
  const auto& groups = s.scheduler.kv_cache_layout.groups;
  o.linear_attention_layers =
      std::any_of(layers.begin(), layers.end(), [](const AttentionLayerPlan& l) { return l.kind == AttentionLayerKind::kLinear; }) ||
      std::any_of(groups.begin(), groups.end(), [](const KvCacheGroup& g) { return g.kind == KvCacheSpecKind::kMamba; });
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
