// Reorder + split + forward split for one step, with the reason for every row's path.
#include "attention/route.h"

#include <algorithm>
#include <cstddef>

#include "attention/input_batch.h"
#include "attention/sglang_dispatch.h"

namespace mlasim {
namespace {

std::string num(int v) { return std::to_string(v); }

std::string region_reason(const RowInput& r, Region region, ReorderVersion v, int t) {
  const std::string q_t = "q=" + num(r.q) + (r.q <= t ? " <= " : " > ") + "T=" + num(t);
  switch (v) {
    case ReorderVersion::kMlaBuilderQ1:
      return std::string("early-2025 ") + (region == Region::kDecode ? "decode" : "prefill") + " (q=" + num(r.q) +
             (r.q == 1 ? " == 1" : " != 1") + ")";
    case ReorderVersion::kTwoRegion:
      return std::string("2-region ") + (region == Region::kDecode ? "decode" : "prefill") + " (" + q_t + ", nct ignored)";
    case ReorderVersion::kThreeRegion:
      if (region == Region::kPrefill) return "region prefill (nct=0)";
      return std::string("region ") + (region == Region::kDecode ? "decode" : "extend") + " (nct=" + num(r.nct) + " > 0, " + q_t + ")";
    case ReorderVersion::kNone:
    case ReorderVersion::kFourRegion:
      break;
  }
  const std::string head = "region " + num(static_cast<int>(region)) + " " + to_string(region);
  switch (region) {
    case Region::kPrefill: return head + " (nct=0)";
    case Region::kLongExtend: return head + " (nct=" + num(r.nct) + " > 0, " + q_t + ")";
    case Region::kShortExtend: return head + " (nct=" + num(r.nct) + " < P=" + num(r.prompt_len) + ", " + q_t + ")";
    case Region::kDecode: return head + " (nct=" + num(r.nct) + " >= P=" + num(r.prompt_len) + ", " + q_t + ")";
  }
  return head;
}

std::string split_reason(const SplitResult& s, int row, int max_q, int q0, int t, const RowInput& r) {
  switch (s.rule) {
    case SplitRule::kEmpty: return "split: empty batch";
    case SplitRule::kMaxQueryLen:
      return "split: every row is a decode: max query length " + num(max_q) + " <= threshold " + num(t);
    case SplitRule::kFirstRowAboveT:
      return "split: every row is a prefill: the first row's query length " + num(q0) + " > threshold " + num(t);
    case SplitRule::kUniformPadded:
      return "split: every row is a decode: every query length equals the first row's " + num(q0) +
             " or is 0 (uniform query lengths required)";
    case SplitRule::kNoPrefill: return "split: every row is a decode: no row is a prefill";
    case SplitRule::kFirstPrefill: break;
  }
  const int f = s.num_decodes;
  if (row < f) return "split: a decode: before the first prefill row " + num(f);
  if (row > f) return "split: a prefill: after the first prefill row " + num(f) + ", whatever its query length";
  switch (s.first_prefill_cause) {
    case PrefillCause::kQueryAboveT:
      return "split: the first prefill row: query length " + num(r.q) + " > threshold " + num(t);
    case PrefillCause::kQueryDiffersFromFirst:
      return "split: the first prefill row: query length " + num(r.q) + " != the first row's " + num(q0) +
             " (uniform query lengths required)";
    case PrefillCause::kIsPrefilling:
      return "split: the first prefill row: still prefilling (nct=" + num(r.nct) + " < P=" + num(r.prompt_len) +
             ") and short extends are not treated as decodes";
    case PrefillCause::kNone: break;
  }
  return "split: the first prefill row";
}

// A padded row (q = 0) carries no token, so it cannot be a prefill on the decode path.
bool fresh_on_decode_path(const RowRoute& rr) { return rr.q > 0 && rr.nct == 0 && rr.path == MlaPath::kMqa; }

void finish_rows(BatchRoute& br) {
  for (RowRoute& rr : br.rows) {
    rr.fresh_on_decode_path = fresh_on_decode_path(rr);
    if (!rr.reason.empty()) rr.reason += std::string(" -> ") + to_string(rr.path);
  }
}

}  // namespace

const char* to_string(MlaPath p) { return p == MlaPath::kMqa ? "mqa" : "mha"; }

BatchRoute route_batch(std::span<const RowInput> input, const RoutingConfig& c, bool reorder) {
  const ReorderVersion version = reorder_version(c.profile);
  const int t = c.decode_threshold;
  ReorderResult rr = reorder ? reorder_rows(input, version, t) : reorder_rows(input, ReorderVersion::kNone, t);
  if (!reorder) {  // regions under the profile's version, rows left in place
    for (std::size_t i = 0; i < input.size(); ++i) rr.regions[i] = row_region(input[i], version, t);
  }
  BatchRoute br;
  br.order = rr.order;
  br.modified = rr.modified;
  br.profile = c.profile;
  br.decode_threshold = t;

  std::vector<RowInput> rows;
  rows.reserve(input.size());
  for (int idx : br.order) rows.push_back(input[static_cast<std::size_t>(idx)]);
  const int n = static_cast<int>(rows.size());
  int total = 0;
  for (const RowInput& r : rows) total += r.q;

  br.rows.resize(rows.size());
  for (int i = 0; i < n; ++i) {
    const std::size_t k = static_cast<std::size_t>(i);
    RowRoute& rt = br.rows[k];
    rt.input_index = br.order[k];
    rt.q = rows[k].q;
    rt.nct = rows[k].nct;
    rt.prompt_len = rows[k].prompt_len;
    rt.region = rr.regions[static_cast<std::size_t>(rt.input_index)];
  }

  if (c.profile == EngineProfile::kSglang) {
    const SglangDispatch d = sglang_dispatch(rows, c);
    for (int i = 0; i < n; ++i) {
      const std::size_t k = static_cast<std::size_t>(i);
      RowRoute& rt = br.rows[k];
      rt.is_decode = !d.row_is_extend[k];
      rt.path = (d.use_mha && !c.sparse_mla) ? MlaPath::kMha : MlaPath::kMqa;
      if (c.row_reasons || fresh_on_decode_path(rt)) {
        rt.reason = std::string(rt.is_decode ? "sglang decode row" : "sglang extend row") + " (nct=" +
                    num(rt.nct) + ", P=" + num(rt.prompt_len) + ", q=" + num(rt.q) + "); " + d.reason;
        if (c.sparse_mla) rt.reason += "; sparse MLA (index_topk): every token on the decode path";
      }
      if (rt.is_decode) {
        ++br.num_decodes;
        br.num_decode_tokens += rt.q;
      } else {
        ++br.num_prefills;
        br.num_prefill_tokens += rt.q;
      }
    }
    // Sparse MLA under SGLang (NSA backend): every token absorbed, as in vLLM; the spec is silent
    // and SGLang's short-sequence MHA variants of the NSA backend are not modelled.
    const bool mha = d.use_mha && !c.sparse_mla;
    br.num_mha_tokens = mha ? total : 0;
    br.num_mqa_tokens = total - br.num_mha_tokens;
    br.batch_reason = d.reason;
    if (c.sparse_mla) br.batch_reason += "; sparse MLA (index_topk): every token on the decode path";
    finish_rows(br);
    return br;
  }

  std::vector<int> q(rows.size());
  std::vector<bool> is_prefilling(rows.size());
  for (std::size_t k = 0; k < rows.size(); ++k) {
    q[k] = rows[k].q;
    // vLLM: is_prefilling = nct < num_prompt_tokens; strict also requires nct > 0 for a decode
    // (vllm-ascend), which nct < P already implies for any non-empty prompt.
    is_prefilling[k] = rows[k].nct == 0 || rows[k].nct < rows[k].prompt_len;
  }
  const bool treat_short = c.profile != EngineProfile::kStrict;
  const SplitResult s = split_decodes_and_prefills(q, is_prefilling, t, c.require_uniform, treat_short);
  br.num_decodes = s.num_decodes;
  br.num_prefills = s.num_prefills;
  br.num_decode_tokens = s.num_decode_tokens;
  br.num_prefill_tokens = s.num_prefill_tokens;
  br.split_rule = s.rule;
  // §4: tokens [0, num_decode_tokens) take the decode path; sparse MLA sends every token there.
  br.num_mqa_tokens = c.sparse_mla ? total : s.num_decode_tokens;
  br.num_mha_tokens = total - br.num_mqa_tokens;
  const int max_q = n > 0 ? *std::max_element(q.begin(), q.end()) : 0;
  const int q0 = n > 0 ? q[0] : 0;
  br.batch_reason = n > 0 ? split_reason(s, 0, max_q, q0, t, rows[0]) : "split: empty batch";
  if (s.rule == SplitRule::kFirstPrefill) br.batch_reason = "split: rows [0, " + num(s.num_decodes) + ") are decodes, the rest prefills";
  for (int i = 0; i < n; ++i) {
    const std::size_t k = static_cast<std::size_t>(i);
    RowRoute& rt = br.rows[k];
    rt.is_decode = i < s.num_decodes;
    rt.path = (c.sparse_mla || rt.is_decode) ? MlaPath::kMqa : MlaPath::kMha;
    if (!c.row_reasons && !fresh_on_decode_path(rt)) continue;
    rt.reason = region_reason(rows[k], rt.region, version, t) + "; " + split_reason(s, i, max_q, q0, t, rows[k]);
    if (c.sparse_mla) rt.reason += "; sparse MLA (index_topk): every token on the decode path";
  }
  finish_rows(br);
  return br;
}

BatchRoute route_batch(InputBatch& batch, const RoutingConfig& c, bool reorder) {
  const std::vector<RowInput> rows = row_inputs(batch);
  BatchRoute br = route_batch(rows, c, reorder);
  if (reorder) {
    const ReorderResult rr = reorder_rows(rows, c);
    for (const auto& [i, j] : rr.swaps) batch.swap_rows(i, j);
  }
  return br;
}

}  // namespace mlasim
