// Routing reasons in words, from the reorder region, the split and SGLang's dispatch.
#include "attention/route_explain.h"

#include <charconv>
#include <optional>

#include "attention/row_route.h"

namespace mlasim {
namespace {

using namespace std::string_view_literals;

std::string num(long long v) { return std::to_string(v); }

// Appends each part to `out`: text as it is, an int in decimal (as std::to_string writes it). The
// words below run for every row of every step when reasons are written: each appends to the
// caller's string (its capacity kept from row to row), no temporaries.
void append_num(std::string& out, long long v) {
  char buf[24];
  out.append(buf, static_cast<std::size_t>(std::to_chars(buf, buf + sizeof buf, v).ptr - buf));  // not (first, last): no replace
}
void append_part(std::string& out, std::string_view text) { out += text; }  // also a const char* chosen at run time
template <std::size_t N>
void append_part(std::string& out, const char (&text)[N]) {  // a literal: its length known, no strlen
  out.append(text, N - 1);
}
void append_part(std::string& out, int v) { append_num(out, v); }
template <class... Parts>
void words(std::string& out, const Parts&... parts) {
  (append_part(out, parts), ...);
}

std::string_view decode_or_prefill(const RowFacts& row) {
  return row.region == Region::kDecode ? "decode"sv : "prefill"sv;
}

// "q=5 > T=1", then `tail`.
void query_vs_threshold(std::string& out, const RowFacts& row, int decode_threshold, std::string_view tail) {
  words(out, "q=", row.q, row.q <= decode_threshold ? " <= T="sv : " > T="sv, decode_threshold, tail);
}

void explain_three_region(std::string& out, const RowFacts& row, int decode_threshold) {
  if (row.region == Region::kPrefill) return words(out, "region prefill (nct=0)");
  words(out, row.region == Region::kDecode ? "region decode (nct="sv : "region extend (nct="sv, row.nct, " > 0, ");
  query_vs_threshold(out, row, decode_threshold, ")");
}

void explain_three_region_q_first(std::string& out, const RowFacts& row, int decode_threshold) {
  if (row.region == Region::kDecode) {
    words(out, "region decode (");
    return query_vs_threshold(out, row, decode_threshold, ", nct ignored)");
  }
  words(out, row.region == Region::kPrefill ? "region prefill (nct="sv : "region extend (nct="sv, row.nct,
        row.nct == 0 ? ", "sv : " > 0, "sv);
  query_vs_threshold(out, row, decode_threshold, ")");
}

void explain_four_region(std::string& out, const RowFacts& row, int decode_threshold) {
  words(out, "region ", static_cast<int>(row.region), " ", to_string(row.region));
  switch (row.region) {
    case Region::kPrefill: return words(out, " (nct=0)");
    case Region::kLongExtend: words(out, " (nct=", row.nct, " > 0, "); break;
    case Region::kShortExtend:
    case Region::kDecode:
      words(out, " (nct=", row.nct, row.region == Region::kDecode ? " >= P="sv : " < P="sv, row.prompt_len, ", ");
      break;
    default: return;
  }
  query_vs_threshold(out, row, decode_threshold, ")");
}

// The row's region as the reorder version names it (kNone, SGLang's, reports the four regions).
void explain_region(std::string& out, const RowFacts& row, ReorderVersion version, int decode_threshold) {
  switch (version) {
    case ReorderVersion::kMlaBuilderQ1:
      return words(out, "early-2025 ", decode_or_prefill(row), " (q=", row.q, row.q == 1 ? " == 1)"sv : " != 1)"sv);
    case ReorderVersion::kTwoRegion:
      words(out, "2-region ", decode_or_prefill(row), " (");
      return query_vs_threshold(out, row, decode_threshold, ", nct ignored)");
    case ReorderVersion::kThreeRegionQFirst: return explain_three_region_q_first(out, row, decode_threshold);
    case ReorderVersion::kThreeRegion: return explain_three_region(out, row, decode_threshold);
    case ReorderVersion::kNone:
    case ReorderVersion::kFourRegion: break;
  }
  explain_four_region(out, row, decode_threshold);
}

// Rule 5 on the row at `pos`: before, at or after the first prefill row.
void explain_first_prefill(std::string& out, const SplitResult& split, int pos, const RowFacts& row) {
  const int first_prefill = split.counts.num_decodes;
  if (pos < first_prefill) return words(out, "split: a decode: before the first prefill row ", first_prefill);
  if (pos > first_prefill)
    return words(out, "split: a prefill: after the first prefill row ", first_prefill, ", whatever its query length");
  switch (split.first_prefill_cause) {
    case PrefillCause::kQueryAboveT:
      return words(out, "split: the first prefill row: query length ", row.q, " > threshold ", split.decode_threshold);
    case PrefillCause::kQueryDiffersFromFirst:
      return words(out, "split: the first prefill row: query length ", row.q, " != the first row's ",
                   split.first_query_len, " (uniform query lengths required)");
    case PrefillCause::kIsPrefilling:
      return words(out, "split: the first prefill row: still prefilling (nct=", row.nct, " < P=", row.prompt_len,
                   ") and short extends are not treated as decodes");
    case PrefillCause::kNone: break;
  }
  words(out, "split: the first prefill row");
}

std::string explain_dispatch_choice(const SglangWording& dispatch) {
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

std::string explain_dispatch(const SglangWording& dispatch) {
  return std::string("sglang ") + to_string(dispatch.mode) + " batch on " + sglang_backend_name(dispatch.backend) +
         ", sum(extend_prefix_lens) = " + num(dispatch.sum_extend_prefix_lens) + ": " +
         explain_dispatch_choice(dispatch);
}

// vLLM: the split's rule for the whole batch.
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

// explain_split(split), kept while the split repeats (most steps of a long replay): valid until
// the calling thread's next call.
const std::string& split_words(const SplitResult& split) {
  thread_local std::optional<SplitResult> last_split;
  thread_local std::string cached;
  if (last_split != split) {
    cached = explain_split(split);
    last_split = split;
  }
  return cached;
}

}  // namespace

void word_batch_reason(std::string& out, const RouteWording& wording) {
  if (wording.sglang) return words(out, explain_dispatch(wording.dispatch), wording.row_note);
  words(out, split_words(wording.split), wording.batch_note);
}

void word_row_reason(std::string& out, const RouteWording& wording, const RowFacts& row, int pos) {
  if (wording.sglang) {
    words(out, row.is_decode ? "sglang decode row (nct="sv : "sglang extend row (nct="sv, row.nct, ", P=", row.prompt_len,
          ", q=", row.q, "); ", explain_dispatch(wording.dispatch), wording.row_note);
  } else {
    explain_region(out, row, wording.reorder_version, wording.reorder_threshold);
    out += "; ";
    if (wording.split.rule == SplitRule::kFirstPrefill)
      explain_first_prefill(out, wording.split, pos, row);
    else
      out += split_words(wording.split);
    out += wording.row_note;
  }
  words(out, " -> ", std::string_view(to_string(row.path)));
}

}  // namespace mlasim
