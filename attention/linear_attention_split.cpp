// GDNAttentionMetadataBuilder's decode/prefill split for linear-attention (KDA) layers.
#include "attention/linear_attention_split.h"

#include <fmt/format.h>

#include <vector>

#include "attention/split.h"

namespace mlasim {

bool is_spec_decode_row(const LinearAttentionRow& row, int num_speculative_tokens, ModelRunner runner) {
  if (num_speculative_tokens <= 0) return false;
  const int drafts = row.num_drafts < 0 ? 0 : row.num_drafts;
  if (runner == ModelRunner::kV1) {
    // num_decode_draft_tokens = draft_len when q == draft_len + 1; then 0 for a one-token decode.
    if (row.num_drafts >= 0 && row.q == row.num_drafts + 1) return true;
    return row.nct >= row.prompt_len && row.q == 1;
  }
  const bool runs_as_decode = row.q - drafts == 1 && row.nct > 0;  // prefill_runs_as_decode_np
  const bool is_prefilling = row.nct < row.prefill_len && !runs_as_decode;
  return !is_prefilling && row.q > 0 && row.q <= num_speculative_tokens + 1;
}

LinearAttentionSplit split_linear_attention(std::span<const LinearAttentionRow> rows, int num_speculative_tokens,
                                            ModelRunner runner) {
  LinearAttentionSplit s;
  if (rows.empty()) return s;
  int num_spec = 0;
  for (const LinearAttentionRow& r : rows) num_spec += is_spec_decode_row(r, num_speculative_tokens, runner);
  if (num_spec == 0) {
    // gdn_attn.py ~356-387: split_decodes_and_prefills (§2) with threshold 1, short extends not
    // decodes, and is_prefilling = no prior state (a first chunk: seq_len <= q, is_prefilling).
    thread_local std::vector<int> query_lens;
    thread_local std::vector<std::uint8_t> no_prior_state;
    query_lens.clear();
    no_prior_state.clear();
    for (const LinearAttentionRow& r : rows) {
      query_lens.push_back(r.q);
      no_prior_state.push_back(r.q > 0 && r.nct == 0);
    }
    const SplitCounts c = split_decodes_and_prefills(query_lens, no_prior_state, 1, false, false).counts;
    s.num_decodes = c.num_decodes;
    s.num_decode_tokens = c.num_decode_tokens;
    s.num_prefills = c.num_prefills;
    s.num_prefill_tokens = c.num_prefill_tokens;
    // Padding rows (q = 0) among the prefills are none (~381); mlasim's batches have none.
    for (std::size_t i = static_cast<std::size_t>(c.num_decodes); i < rows.size(); ++i) s.num_prefills -= rows[i].q == 0;
    return s;
  }
  // gdn_attn.py ~389-430: masks, not the row order.
  for (const LinearAttentionRow& r : rows) {
    if (is_spec_decode_row(r, num_speculative_tokens, runner)) {
      ++s.num_spec_decodes;
      s.num_spec_decode_tokens += r.q;
    } else if (r.q == 1) {
      ++s.num_decodes;
      ++s.num_decode_tokens;
    } else if (r.q > 0) {
      ++s.num_prefills;
      s.num_prefill_tokens += r.q;
    }
  }
  if (s.num_decodes > 0) {  // decodes and speculative decodes are mutually exclusive (~422-428)
    s.num_prefills += s.num_decodes;
    s.num_prefill_tokens += s.num_decode_tokens;
    s.num_decodes = s.num_decode_tokens = 0;
  }
  return s;
}

std::string format_linear_attention_counts(const LinearAttentionSplit& l) {
  std::string out;
  if (l.num_spec_decodes > 0) out += fmt::format(" kda_spec={}/{}", l.num_spec_decodes, l.num_spec_decode_tokens);
  out += fmt::format(" kda_decodes={}/{} kda_prefills={}/{}", l.num_decodes, l.num_decode_tokens, l.num_prefills,
                     l.num_prefill_tokens);
  return out;
}

void write_linear_attention_json(JsonWriter& w, const LinearAttentionSplit& l) {
  w.key("linear_attention").begin_object();
  w.key("num_spec_decodes").value(l.num_spec_decodes);
  w.key("num_spec_decode_tokens").value(l.num_spec_decode_tokens);
  w.key("num_decodes").value(l.num_decodes);
  w.key("num_decode_tokens").value(l.num_decode_tokens);
  w.key("num_prefills").value(l.num_prefills);
  w.key("num_prefill_tokens").value(l.num_prefill_tokens);
  w.end_object();
}

}  // namespace mlasim
