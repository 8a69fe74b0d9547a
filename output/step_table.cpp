// Step table formatting.
#include "output/step_table.h"

#include <fmt/format.h>

#include "engine/step_words.h"

namespace mlasim {
namespace {

std::string id_list(const char* label, const std::vector<int>& requests, const RequestNames& names) {
  if (requests.empty()) return "";
  std::string out = fmt::format(" {}=[", label);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (i) out += ',';
    out += names[requests[i]];
  }
  return out + "]";
}

}  // namespace

std::string format_step_line(const StepRecord& s, const RequestNames& names) {
  // "num_mqa=.. num_mha=.. total_toks=.." is the form of the observation being reproduced.
  std::string out = fmt::format("step {:>4}: num_mqa={} num_mha={} total_toks={} decodes={}/{} prefills={}/{}",
                                s.step, s.counts.num_mqa_tokens, s.counts.num_mha_tokens, s.total_num_scheduled_tokens, s.counts.num_decodes,
                                s.counts.num_decode_tokens, s.counts.num_prefills, s.counts.num_prefill_tokens);
  if (s.has_linear_attention) out += format_linear_attention_counts(s.linear_attention);
  out += fmt::format(" free_blocks={} |", s.num_free_blocks);
  for (const RowRecord& r : s.rows) {
    out += fmt::format(" {}(q={},nct={},P={})={}", names[r.index], r.q, r.nct, r.prompt_len, to_string(r.path));
    if (r.fresh_on_decode_path) out += "[fresh-on-decode-path]";
  }
  out += " |";
  out += id_list("new", s.new_reqs, names);
  out += id_list("resumed", s.resumed, names);
  out += id_list("preempted", s.preempted, names);
  out += id_list("finished", s.finished, names);
  if (s.context_chunks.num_chunks > 0)
    out += fmt::format(" context_chunks={}x{}", s.context_chunks.num_chunks, s.context_chunks.max_context_chunk);
  return out;
}

std::string format_step_explanation(const StepRecord& s, const RequestNames& names) {
  std::string out = fmt::format("       batch: {}{}\n", split_reason(s), s.reorder_modified ? " (batch reordered)" : "");
  if (s.has_linear_attention)
    out += fmt::format("       linear-attention (KDA) layers:{} (GDN_ATTN's split: first chunks prefill, one token over "
                       "prior state decode)\n", format_linear_attention_counts(s.linear_attention));
  for (std::size_t pos = 0; pos < s.rows.size(); ++pos) {
    const RowRecord& r = s.rows[pos];
    out += fmt::format("       {} -> {}: {}\n", names[r.index], to_string(r.path), row_reason(s, pos));
  }
  return out;
}

}  // namespace mlasim
