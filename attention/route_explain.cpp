// Routing reasons in words, from the reorder region, the split and SGLang's dispatch.
#include "attention/route_explain.h"

#include <fmt/compile.h>
#include <fmt/format.h>

#include "attention/row_route.h"
#include "config/mla_backends.h"

namespace mlasim {
namespace {

constexpr const char* kSparseMlaNote = "; sparse MLA (index_topk): every token on the decode path";

std::string num(long long v) { return std::to_string(v); }

std::string sparse_note(const RoutingConfig& config) {
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
             : kSparseMlaNote;
}

std::string query_vs_threshold(const RowRoute& row, int decode_threshold) {
  return fmt::format("q={}{}T={}", row.q, row.q <= decode_threshold ? " <= " : " > ", decode_threshold);
}

std::string decode_or_prefill(const RowRoute& row) { return row.region == Region::kDecode ? "decode" : "prefill"; }

std::string explain_three_region(const RowRoute& row, int decode_threshold) {
  if (row.region == Region::kPrefill) return "region prefill (nct=0)";
  return std::string("region ") + (row.region == Region::kDecode ? "decode" : "extend") + " (nct=" + num(row.nct) +
         " > 0, " + query_vs_threshold(row, decode_threshold) + ")";
}

std::string explain_three_region_q_first(const RowRoute& row, int decode_threshold) {
  if (row.region == Region::kDecode)
    return "region decode (" + query_vs_threshold(row, decode_threshold) + ", nct ignored)";
  return std::string("region ") + (row.region == Region::kPrefill ? "prefill" : "extend") + " (nct=" + num(row.nct) +
         (row.nct == 0 ? ", " : " > 0, ") + query_vs_threshold(row, decode_threshold) + ")";
}

// One format call a row, parsed at compile time: this runs for every row of every step when
// reasons are written.
std::string explain_four_region(const RowRoute& row, int decode_threshold) {
  const int region = static_cast<int>(row.region);
  const char* name = to_string(row.region);
  const char* cmp = row.q <= decode_threshold ? " <= " : " > ";
  switch (row.region) {
    case Region::kPrefill: return fmt::format(FMT_COMPILE("region {} {} (nct=0)"), region, name);
    case Region::kLongExtend:
      return fmt::format(FMT_COMPILE("region {} {} (nct={} > 0, q={}{}T={})"), region, name, row.nct, row.q, cmp,
                         decode_threshold);
    case Region::kShortExtend:
      return fmt::format(FMT_COMPILE("region {} {} (nct={} < P={}, q={}{}T={})"), region, name, row.nct, row.prompt_len,
                         row.q, cmp, decode_threshold);
    case Region::kDecode:
      return fmt::format(FMT_COMPILE("region {} {} (nct={} >= P={}, q={}{}T={})"), region, name, row.nct,
                         row.prompt_len, row.q, cmp, decode_threshold);
  }
  return fmt::format(FMT_COMPILE("region {} {}"), region, name);
}

// The row's region as the reorder version names it (kNone, SGLang's, reports the four regions).
std::string explain_region(const RowRoute& row, ReorderVersion version, int decode_threshold) {
  switch (version) {
    case ReorderVersion::kMlaBuilderQ1:
      return "early-2025 " + decode_or_prefill(row) + " (q=" + num(row.q) + (row.q == 1 ? " == 1" : " != 1") + ")";
    case ReorderVersion::kTwoRegion:
      return "2-region " + decode_or_prefill(row) + " (" + query_vs_threshold(row, decode_threshold) + ", nct ignored)";
    case ReorderVersion::kThreeRegionQFirst: return explain_three_region_q_first(row, decode_threshold);
    case ReorderVersion::kThreeRegion: return explain_three_region(row, decode_threshold);
    case ReorderVersion::kNone:
    case ReorderVersion::kFourRegion: break;
  }
  return explain_four_region(row, decode_threshold);
}

// Rule 5 on the row at `pos`: before, at or after the first prefill row.
std::string explain_first_prefill(const SplitResult& split, int pos, const RowRoute& row) {
  const int first_prefill = split.counts.num_decodes;
  const std::string threshold = num(split.decode_threshold);
  if (pos < first_prefill) return "split: a decode: before the first prefill row " + num(first_prefill);
  if (pos > first_prefill)
    return "split: a prefill: after the first prefill row " + num(first_prefill) + ", whatever its query length";
  switch (split.first_prefill_cause) {
    case PrefillCause::kQueryAboveT:
      return "split: the first prefill row: query length " + num(row.q) + " > threshold " + threshold;
    case PrefillCause::kQueryDiffersFromFirst:
      return "split: the first prefill row: query length " + num(row.q) + " != the first row's " +
             num(split.first_query_len) + " (uniform query lengths required)";
    case PrefillCause::kIsPrefilling:
      return "split: the first prefill row: still prefilling (nct=" + num(row.nct) + " < P=" + num(row.prompt_len) +
             ") and short extends are not treated as decodes";
    case PrefillCause::kNone: break;
  }
  return "split: the first prefill row";
}

std::string explain_dispatch_choice(const SglangDispatch& dispatch) {
  const std::string threshold = num(dispatch.chunked_prefix_cache_threshold);
  switch (dispatch.rule) {
    case SglangMhaRule::kNotExtend: return "not an extend batch, so absorbed MLA";
    case SglangMhaRule::kAiterAnyExtend: return "aiter takes MHA for any extend";
    case SglangMhaRule::kPrefixZero: return "prefix sum 0, so MHA";
    case SglangMhaRule::kTritonPrefixNonzero: return "triton takes MHA only when the prefix sum is 0, so absorbed MLA";
    case SglangMhaRule::kChunkedPrefix:
      return "prefix sum >= chunked_prefix_cache_threshold " + threshold + ", so MHA (chunked KV)";
    case SglangMhaRule::kShortPrefix:
      return "0 < prefix sum < chunked_prefix_cache_threshold " + threshold + ", so absorbed MLA";
  }
  return "?";
}

std::string explain_dispatch(const SglangDispatch& dispatch) {
  return std::string("sglang ") + to_string(dispatch.mode) + " batch on " + sglang_backend_name(dispatch.backend) +
         ", sum(extend_prefix_lens) = " + num(dispatch.sum_extend_prefix_lens) + ": " +
         explain_dispatch_choice(dispatch);
}

}  // namespace

std::string explain_split(const SplitResult& split) {
  const std::string threshold = num(split.decode_threshold);
  switch (split.rule) {
    case SplitRule::kEmpty: return "split: empty batch";
    case SplitRule::kMaxQueryLen:
      return "split: every row is a decode: max query length " + num(split.max_query_len) + " <= threshold " +
             threshold;
    case SplitRule::kFirstRowAboveT:
      return "split: every row is a prefill: the first row's query length " + num(split.first_query_len) +
             " > threshold " + threshold;
    case SplitRule::kUniformPadded:
      return "split: every row is a decode: every query length equals the first row's " + num(split.first_query_len) +
             " or is 0 (uniform query lengths required)";
    case SplitRule::kNoPrefill: return "split: every row is a decode: no row is a prefill";
    case SplitRule::kFirstPrefill:
      return "split: rows [0, " + num(split.counts.num_decodes) + ") are decodes, the rest prefills";
  }
  return "?";
}

std::string explain_vllm_row(const RowRoute& row, int pos, const SplitResult& split, const RoutingConfig& config,
                             std::string_view split_text) {
  std::string out = explain_region(row, reorder_version(config.profile), reorder_threshold(config));
  out += "; ";
  if (split.rule == SplitRule::kFirstPrefill)
    out += explain_first_prefill(split, pos, row);
  else
    out += split_text;
  if (config.sparse_mla) out += sparse_note(config);
  return out;
}

std::string explain_sglang_batch(const SglangDispatch& dispatch, const RoutingConfig& config) {
  return explain_dispatch(dispatch) + sparse_note(config);
}

std::string explain_sglang_row(const RowRoute& row, const SglangDispatch& dispatch, const RoutingConfig& config) {
  return std::string(row.is_decode ? "sglang decode row" : "sglang extend row") + " (nct=" + num(row.nct) +
         ", P=" + num(row.prompt_len) + ", q=" + num(row.q) + "); " + explain_dispatch(dispatch) + sparse_note(config);
}

}  // namespace mlasim
