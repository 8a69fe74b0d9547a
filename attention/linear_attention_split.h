// The decode/prefill split of a hybrid model's linear-attention layers (Kimi-Linear's and
// GLM-5-Next's KDA layers): GDNAttentionMetadataBuilder.build (v1/attention/backends/gdn_attn.py
// ~337-430, docs/spec/routing.md §8). These layers have no MLA path: the split picks the
// recurrent decode kernel, the speculative-decode kernel or the chunked prefill kernel per row.
#pragma once

#include <span>
#include <string>

#include "base/formats/json_writer.h"
#include "config/engine_enums.h"

namespace mlasim {

// One row of the batch in the runner's order, with what the builder and the runner read of it.
struct LinearAttentionRow {
  int q = 0;            // num_scheduled_tokens
  int nct = 0;          // num_computed_tokens before the step
  int prompt_len = 0;   // num_prompt_tokens (model runner V1's is_prefilling)
  int prefill_len = 0;  // tokens the request was last added to the runner with (model runner V2:
                        // the prompt, or prompt + outputs after a preemption; states.py ~106)
  int num_drafts = -1;  // draft tokens scheduled (scheduled_spec_decode_tokens); -1: none listed
};

struct LinearAttentionSplit {
  int num_spec_decodes = 0;
  int num_spec_decode_tokens = 0;
  int num_decodes = 0;
  int num_decode_tokens = 0;
  int num_prefills = 0;
  int num_prefill_tokens = 0;
  bool operator==(const LinearAttentionSplit&) const = default;
};

// Which rows the runner marks as speculative decodes (num_decode_draft_tokens >= 0): V1
// (gpu_model_runner.py ~2199-2226) a row whose q is its drafts + 1, or a decode (nct >= P) of one
// token; V2 (model_states/mamba_hybrid.py ~281-301) a row no longer prefilling (nct >= prefill_len,
// or one new prompt token over context, model_runner.py ~1356-1365) with 0 < q <= 1 + k. Only
// with speculation (k > 0).
bool is_spec_decode_row(const LinearAttentionRow& row, int num_speculative_tokens, ModelRunner runner);

// The builder's split over the rows in the runner's order. Without a speculative row:
// split_decodes_and_prefills(decode_threshold=1, treat_short_extends_as_decodes=False) with
// is_prefilling = "no prior state" (q > 0, nct == 0), so a fresh prompt, one token or more, takes
// the prefill kernel. With one: non-speculative rows of q == 1 are decodes, the rest prefills,
// and decodes are folded into the prefills when speculative rows are present.
LinearAttentionSplit split_linear_attention(std::span<const LinearAttentionRow> rows, int num_speculative_tokens,
                                            ModelRunner runner);

// The split as the step line and `deploy` print it: " [kda_spec=n/t] kda_decodes=n/t
// kda_prefills=n/t" (requests/tokens; the speculative rows only when there are some).
std::string format_linear_attention_counts(const LinearAttentionSplit& l);

// The member "linear_attention": {num_spec_decodes, num_spec_decode_tokens, num_decodes,
// num_decode_tokens, num_prefills, num_prefill_tokens}, written into an open object (run JSON/JSONL
// steps, deploy's probes).
void write_linear_attention_json(JsonWriter& w, const LinearAttentionSplit& l);

}  // namespace mlasim
