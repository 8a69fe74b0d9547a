// make_step_plan: form selection, context chunks, cache writes after faults, sampled tokens.
#include "attention/step_plan.h"

#include <algorithm>
#include <cstddef>

#include "attention/attention_metadata.h"
#include "attention/context_chunk.h"
#include "base/check.h"

namespace mlasim {
namespace {

void check_inputs(const StepInputs& in, int vocab_size, int block_size) {
  MLASIM_CHECK(in.metadata != nullptr, "StepInputs without metadata");
  const AttentionMetadata& md = *in.metadata;
  MLASIM_CHECK(static_cast<int>(in.token_ids.size()) == md.num_actual_tokens, "one token id per scheduled token");
  MLASIM_CHECK(md.block_size == block_size, "metadata block size differs from the cache's");
  MLASIM_CHECK(md.has_token_arrays, "the metadata was built without positions and block tables (MetadataDetail::kRows)");
  MLASIM_CHECK(in.sample_rows.size() == in.num_sample_tokens.size(), "num_sample_tokens per sample row");
  for (int id : in.token_ids) MLASIM_CHECK(id >= 0 && id < vocab_size, "token id outside the vocabulary");
}

// Rows through the decode form and the prefill-form rows' context chunks.
void select_forms(const StepInputs& in, StepPlan& p) {
  const AttentionMetadata& md = *in.metadata;
  if (in.force_prefill_path) {
    p.forms.num_decodes = 0;
    p.context_chunks = single_context_chunks(md, 0, md.num_reqs);
    return;
  }
  p.forms.num_decodes = md.decode ? md.decode->num_rows : 0;
  if (md.prefill) {
    MLASIM_CHECK(md.prefill->row_start == p.forms.num_decodes, "prefill rows must follow the decode rows");
    p.context_chunks = context_chunks_from_metadata(md);
  } else {
    MLASIM_CHECK(p.forms.num_decodes == md.num_reqs, "rows on neither path");
  }
}

// decode_skips_cache_write_for_fresh_rows: decode-form rows with no context keep their latents.
std::vector<bool> cache_writes(const StepPlan& p, const FaultSet& faults) {
  std::vector<bool> write(static_cast<std::size_t>(p.num_actual_tokens), true);
  if (!faults.has(Fault::kDecodeSkipsCacheWriteForFreshRows)) return write;
  for (int r = 0; r < p.forms.num_decodes; ++r) {
    if (p.md->context_lens[static_cast<std::size_t>(r)] != 0) continue;
    for (int t = p.query_start(r); t < p.query_start(r + 1); ++t) write[static_cast<std::size_t>(t)] = false;
  }
  return write;
}

std::vector<int> sampled_tokens(const StepInputs& in, const StepPlan& p) {
  std::vector<int> tokens;
  for (std::size_t i = 0; i < in.sample_rows.size(); ++i) {
    const int r = in.sample_rows[i], k = in.num_sample_tokens[i];
    MLASIM_CHECK(r >= 0 && r < p.num_reqs, "sample row outside the batch");
    MLASIM_CHECK(k >= 1 && k <= p.query_len(r), "more sampled tokens than scheduled");
    for (int t = p.query_start(r + 1) - k; t < p.query_start(r + 1); ++t) tokens.push_back(t);
  }
  return tokens;
}

}  // namespace

int StepPlan::query_start(int row) const { return md->query_start_loc[static_cast<std::size_t>(row)]; }

int StepPlan::query_len(int row) const { return query_start(row + 1) - query_start(row); }

StepPlan make_step_plan(const StepInputs& in, int vocab_size, int block_size, const FaultSet& faults) {
  check_inputs(in, vocab_size, block_size);
  const AttentionMetadata& md = *in.metadata;
  StepPlan p;
  p.md = &md;
  p.num_reqs = md.num_reqs;
  p.num_actual_tokens = md.num_actual_tokens;
  select_forms(in, p);
  p.forms.num_prefills = p.num_reqs - p.forms.num_decodes;
  p.forms.num_decode_tokens = p.query_start(p.forms.num_decodes);
  p.forms.num_prefill_tokens = p.num_actual_tokens - p.forms.num_decode_tokens;
  p.forms.num_mqa_tokens = p.forms.num_decode_tokens;
  p.forms.num_mha_tokens = p.forms.num_prefill_tokens;
  MLASIM_CHECK(static_cast<int>(p.context_chunks.size()) == p.forms.num_prefills, "one context chunk list per prefill-form row");
  for (const std::vector<ContextChunk>& row : p.context_chunks)
    p.num_context_rounds = std::max(p.num_context_rounds, static_cast<int>(row.size()));
  p.write_cache = cache_writes(p, faults);
  p.prefill_rows_dense = in.prefill_rows_dense;
  MLASIM_CHECK(md.positions.size() >= static_cast<std::size_t>(p.num_actual_tokens), "a position per token");
  p.positions = std::span<const int>(md.positions).first(static_cast<std::size_t>(p.num_actual_tokens));
  p.logits_indices = sampled_tokens(in, p);
  return p;
}

}  // namespace mlasim
