// One step's routing in one pass: reorder the batch once, place the rows in their new order, then
// route them as vLLM (the split) or SGLang (the per-batch dispatch) does.
#include "attention/route.h"

#include <algorithm>

#include <cstddef>
#include <utility>

#include "attention/input_batch.h"
#include "attention/route_explain.h"
#include "attention/sglang_dispatch.h"
#include "config/mla_backends.h"

namespace mlasim {
namespace {

std::size_t sz(int i) { return static_cast<std::size_t>(i); }

// `rows` as they stand after the reorder; reordered.order[pos] names each one's index before it.
// Each row's verdict and reason are set afresh by the router (a reason only where it words one).
void placed_rows(std::span<const RowInput> rows, const ReorderResult& reordered, std::vector<RowRoute>& placed) {
  placed.resize(rows.size());
  for (std::size_t pos = 0; pos < rows.size(); ++pos) {
    RowRoute& row = placed[pos];
    row.input_index = reordered.order[pos];
    row.q = rows[pos].q;
    row.nct = rows[pos].nct;
    row.prompt_len = rows[pos].prompt_len;
    row.region = reordered.regions[sz(row.input_index)];
    row.reason.clear();
  }
}

// A padded row (q = 0) carries no token, so it cannot be a prefill on the decode path. DeepSeek-V4
// runs its prefill rows on a prefill kernel of their own, absorbed too: only its decode rows are
// on the decode path.
bool fresh_on_decode_path(const RowRoute& row, bool prefill_kernel_of_its_own) {
  return row.q > 0 && row.nct == 0 && row.path == MlaPath::kMqa && (row.is_decode || !prefill_kernel_of_its_own);
}

// What follows a row's words under a sparse model (SGLang's batch reason ends with it too).
std::string_view sparse_note(const RoutingConfig& config) {
  if (is_deepseek_v4_backend(config.backend))
    return "; DeepSeek-V4 attention: every token absorbed, decode rows on the sparse decode kernel, the rest on the "
           "sparse prefill kernel";
  if (!config.sparse_mla) return "";
  if (config.sparse_dense_mha_any_length)
    return "; sparse MLA (index_topk) with engine.sparse_mla_prefill dense_mha: prefill rows take dense MHA over "
           "every position";
  return config.sparse_dense_mha_prefill
             ? "; sparse MLA (index_topk): prefill rows take dense MHA while the longest fits index_topk, else "
               "every token the decode path"
             : "; sparse MLA (index_topk): every token on the decode path";
}

// What follows the split's words in a vLLM batch's reason.
std::string_view vllm_batch_note(const RoutingConfig& config, bool masked, bool sparse_all_mqa) {
  if (is_deepseek_v4_backend(config.backend))
    return "; DeepSeek-V4 attention: every token absorbed (MQA), the decode rows on the sparse decode kernel, the "
           "rest on the sparse prefill kernel";
  if (config.sparse_mla && config.sparse_dense_mha_any_length)
    return "; sparse MLA with engine.sparse_mla_prefill dense_mha: prefill rows on dense MHA over every position, "
           "whatever their length";
  if (masked) return "; sparse MLA: prefill rows past index_topk on masked MHA (the top-k as a key mask, SM100)";
  if (config.sparse_mla && config.sparse_mla_force_mqa)
    return "; sparse MLA with sparse_mla_force_mqa: every token on the decode path (top-k MQA)";
  if (config.sparse_mla)
    return sparse_all_mqa ? "; sparse MLA: every token on the decode path (top-k MQA)"
                          : "; sparse MLA: prefill rows fit index_topk, dense MHA prefill";
  return "";
}

// The router's verdict on one row; its reason is worded when reasons are wanted.
// prefill_kernel_of_its_own: is_deepseek_v4_backend(config.backend), asked once per batch.
void decide_row(RowRoute& row, int pos, bool is_decode, MlaPath path, const RoutingConfig& config,
                bool prefill_kernel_of_its_own, const RouteWording& wording) {
  row.is_decode = is_decode;
  row.path = path;
  row.fresh_on_decode_path = fresh_on_decode_path(row, prefill_kernel_of_its_own);
  if (config.row_reasons)
    word_row_reason(row.reason, wording, {row.q, row.nct, row.prompt_len, row.region, is_decode, path}, pos);
}

// Sparse MLA (index_topk): every token takes the decode path.
SplitCounts all_on_decode_path(SplitCounts counts) {
  counts.num_mqa_tokens = counts.num_actual_tokens();
  counts.num_mha_tokens = 0;
  return counts;
}

// The counts of the rows' verdicts and paths (SGLang has no split to take them from).
SplitCounts counts_of(std::span<const RowRoute> rows) {
  SplitCounts counts;
  for (const RowRoute& row : rows) {
    (row.is_decode ? counts.num_decodes : counts.num_prefills) += 1;
    (row.is_decode ? counts.num_decode_tokens : counts.num_prefill_tokens) += row.q;
    (row.path == MlaPath::kMqa ? counts.num_mqa_tokens : counts.num_mha_tokens) += row.q;
  }
  return counts;
}

// split_decodes_and_prefills over the rows in their reordered order.
SplitResult split_rows(std::span<const RowInput> rows, const RoutingConfig& config) {
  thread_local std::vector<int> query_lens;
  thread_local std::vector<std::uint8_t> is_prefilling;
  query_lens.resize(rows.size());
  is_prefilling.resize(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    query_lens[i] = rows[i].q;
    // vLLM: is_prefilling = nct < num_prompt_tokens; strict also requires nct > 0 for a decode
    // (vllm-ascend), which nct < P already implies for any non-empty prompt.
    is_prefilling[i] = rows[i].nct == 0 || rows[i].nct < rows[i].prompt_len;
  }
  return split_decodes_and_prefills(query_lens, is_prefilling, config.decode_threshold, config.require_uniform,
                                    /*treat_short_extends_as_decodes=*/config.profile != EngineProfile::kStrict);
}

// _use_sparse_mha's masked half (mla_attention.py ~1221-1237) for the split's prefill rows
// [num_decodes, n): the length table, then whether their top-k masks fit the workspace, with the
// context chunks' longest piece (the prefill rows' contexts in batch order).
bool masked_mha_prefill(const BatchRoute& route, int num_decodes, int max_query_len, long long max_seq_len,
                        const MaskedMhaRule& rule) {
  std::vector<int> context_lens;
  for (std::size_t pos = static_cast<std::size_t>(num_decodes); pos < route.rows.size(); ++pos)
    context_lens.push_back(route.rows[pos].nct);
  const bool has_context = std::any_of(context_lens.begin(), context_lens.end(), [](int c) { return c > 0; });
  if (!masked_mha_by_lengths(rule, max_query_len, max_seq_len, has_context)) return false;
  const int chunk = has_context ? max_context_chunk_seq_len(context_lens, rule.workspace_size, rule.block_size) : 0;
  return masked_mha_workspace_fits(static_cast<int>(context_lens.size()), max_query_len, chunk);
}

// vLLM (§2, §4): rows [0, num_decodes) of the split take the decode path, the rest the prefill path.
void route_vllm(std::span<const RowInput> rows, const RoutingConfig& config, BatchRoute& route) {
  const SplitResult split = split_rows(rows, config);
  // Sparse MLA: every token on the decode path, except that vLLM 0.33's sparse backends send the
  // prefill rows through dense MHA when the longest prefill sequence fits index_topk
  // (MLAAttention.forward_impl ~986-994, _use_sparse_mha ~1215-1240; _use_dense_mha_prefill,
  // sparse_mla_attention.py ~136-144), unless attention_config.sparse_mla_force_mqa is set (both
  // read it), which make_routing_config folds into sparse_dense_mha_prefill.
  bool sparse_all_mqa = config.sparse_mla;
  bool masked = false;
  if (config.sparse_mla && config.sparse_dense_mha_prefill && config.index_topk > 0) {
    long long prefill_max_seq_len = 0;
    int prefill_max_query_len = 0;
    for (int pos = split.counts.num_decodes; pos < static_cast<int>(route.rows.size()); ++pos) {
      const RowRoute& r = route.rows[sz(pos)];
      prefill_max_seq_len = std::max<long long>(prefill_max_seq_len, 1LL * r.nct + r.q);
      prefill_max_query_len = std::max(prefill_max_query_len, r.q);
    }
    sparse_all_mqa = !config.sparse_dense_mha_any_length && prefill_max_seq_len > config.index_topk;
    // Past index_topk the prefill rows may still take the MHA form, masked (SM100).
    if (sparse_all_mqa && config.masked_mha.available && split.counts.num_prefills > 0) {
      masked = masked_mha_prefill(route, split.counts.num_decodes, prefill_max_query_len, prefill_max_seq_len,
                                  config.masked_mha);
      sparse_all_mqa = !masked;
    }
  }
  route.counts = sparse_all_mqa ? all_on_decode_path(split.counts) : split.counts;
  route.split_rule = split.rule;
  RouteWording& wording = route.wording;
  wording.sglang = false;
  wording.split = split;
  wording.dispatch = {};
  wording.batch_note = vllm_batch_note(config, masked, sparse_all_mqa);
  wording.row_note = config.sparse_mla ? sparse_note(config) : std::string_view();
  // The words only where reasons are wanted (route_reordered cleared them).
  if (config.row_reasons) word_batch_reason(route.batch_reason, wording);
  const bool v4 = is_deepseek_v4_backend(config.backend);
  for (int pos = 0; pos < static_cast<int>(route.rows.size()); ++pos) {
    RowRoute& row = route.rows[sz(pos)];
    const bool is_decode = pos < split.counts.num_decodes;
    decide_row(row, pos, is_decode, sparse_all_mqa || is_decode ? MlaPath::kMqa : MlaPath::kMha, config, v4, wording);
  }
}

// SGLang (§6): one path for the whole batch. Sparse MLA (NSA backend) absorbs every token, as in
// vLLM; the spec is silent and SGLang's short-sequence MHA variants of NSA are not modelled.
void route_sglang(std::span<const RowInput> rows, const RoutingConfig& config, BatchRoute& route) {
  const SglangDispatch dispatch = sglang_dispatch(rows, config);
  const MlaPath path = dispatch.use_mha && !config.sparse_mla ? MlaPath::kMha : MlaPath::kMqa;
  RouteWording& wording = route.wording;
  wording.sglang = true;
  wording.split = SplitResult{};
  wording.dispatch = {dispatch.mode, dispatch.sum_extend_prefix_lens, dispatch.rule, dispatch.backend,
                      dispatch.chunked_prefix_cache_threshold};
  wording.batch_note = {};
  wording.row_note = sparse_note(config);
  const bool v4 = is_deepseek_v4_backend(config.backend);
  for (std::size_t pos = 0; pos < route.rows.size(); ++pos)
    decide_row(route.rows[pos], static_cast<int>(pos), !dispatch.row_is_extend[pos], path, config, v4, wording);
  route.counts = counts_of(route.rows);
  if (config.row_reasons) word_batch_reason(route.batch_reason, wording);
}

// Routes `rows`, whose RowRoutes, order and `modified` are in `route` already.
void route_placed(std::span<const RowInput> rows, const RoutingConfig& config, BatchRoute& route) {
  route.counts = SplitCounts{};
  route.split_rule = SplitRule::kEmpty;
  route.batch_reason.clear();
  route.wording.reorder_version = reorder_version(config.profile);
  route.wording.reorder_threshold = reorder_threshold(config);
  if (config.profile == EngineProfile::kSglang) route_sglang(rows, config, route);
  else route_vllm(rows, config, route);
}

// Routes `rows`, which stand in the order the reorder left them, into `route`.
void route_reordered(std::span<const RowInput> rows, const ReorderResult& reordered, const RoutingConfig& config,
                     BatchRoute& route) {
  placed_rows(rows, reordered, route.rows);
  route.order.assign(reordered.order.begin(), reordered.order.end());
  route.modified = reordered.modified;
  route_placed(rows, config, route);
}

// Routes `rows` where no reorder moves them: each row keeps its place and gets its region under the
// profile's reorder version, in one pass.
void route_unreordered(std::span<const RowInput> rows, const RoutingConfig& config, BatchRoute& route) {
  const ReorderVersion version = reorder_version(config.profile);
  const int threshold = reorder_threshold(config);
  route.rows.resize(rows.size());
  route.order.resize(rows.size());
  for (std::size_t pos = 0; pos < rows.size(); ++pos) {
    RowRoute& row = route.rows[pos];
    row.input_index = static_cast<int>(pos);
    row.q = rows[pos].q;
    row.nct = rows[pos].nct;
    row.prompt_len = rows[pos].prompt_len;
    row.region = row_region(rows[pos], version, threshold);
    row.reason.clear();
    route.order[pos] = static_cast<int>(pos);
  }
  route.modified = false;
  route_placed(rows, config, route);
}

}  // namespace

BatchRoute route_batch(std::span<const RowInput> rows, const RoutingConfig& config, bool reorder) {
  BatchRoute route;
  if (!reorder) {
    route_unreordered(rows, config, route);
    return route;
  }
  const ReorderResult reordered = reorder_rows(rows, config);
  std::vector<RowInput> placed;
  placed.reserve(rows.size());
  for (int index : reordered.order) placed.push_back(rows[sz(index)]);
  route_reordered(placed, reordered, config, route);
  return route;
}

BatchRoute route_batch(InputBatch& batch, const RoutingConfig& config, bool reorder) {
  BatchRoute route;
  route_batch(batch, config, reorder, route);
  return route;
}

void route_batch(InputBatch& batch, const RoutingConfig& config, bool reorder, BatchRoute& route) {
  thread_local std::vector<RowInput> rows;
  if (reorder) {
    const ReorderResult reordered = reorder_input_batch(batch, config);
    row_inputs(batch, rows);
    route_reordered(rows, reordered, config, route);
    return;
  }
  row_inputs(batch, rows);
  route_unreordered(rows, config, route);
}

}  // namespace mlasim
