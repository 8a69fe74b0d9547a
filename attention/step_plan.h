// One engine step as every model backend executes it (docs/spec/routing.md §4): which rows take
// which MLA form, the prefill-form rows' context chunks, whose latents are written to the cache,
// each token's RoPE position and which tokens' logits are sampled. Built once per step by
// make_step_plan; the CPU backend runs it as it is, the CUDA backend packs it into device arrays.
#pragma once

#include <span>
#include <vector>

#include "attention/backend.h"
#include "attention/faults.h"
#include "attention/context_chunk.h"
#include "attention/split_counts.h"

namespace mlasim {

struct AttentionMetadata;

// Rows in reordered order: [0, forms.num_decodes) through the decode (absorbed MQA) form, then
// [forms.num_decodes, num_reqs) through the prefill (MHA) form; their tokens are contiguous in the
// same order: [0, forms.num_decode_tokens), then [forms.num_decode_tokens, num_actual_tokens).
struct StepPlan {
  const AttentionMetadata* md = nullptr;  // the step's metadata (query_start_loc, seq_lens, blocks)
  int num_reqs = 0;
  int num_actual_tokens = 0;
  // The forms the step runs, not the split's verdict (force_prefill_path sends every row through
  // the prefill form): num_mqa_tokens = num_decode_tokens, num_mha_tokens = num_prefill_tokens.
  SplitCounts forms;
  // Per prefill-form row (index row - num_decodes): its cached context, chunk by chunk, attended
  // non-causally and merged in this order.
  std::vector<std::vector<ContextChunk>> context_chunks;
  int num_context_rounds = 0;  // the longest row's chunk count (round k: every row's k-th chunk)
  // Per token: its latent is written to md->slot_mapping[t] (false only where a fault drops the
  // write: decode_skips_cache_write_for_fresh_rows).
  std::vector<bool> write_cache;
  bool prefill_rows_dense = false;   // StepInputs::prefill_rows_dense
  std::span<const int> positions;    // per token: its RoPE position (md->positions)
  std::vector<int> logits_indices;   // tokens whose logits are wanted: each sample row's last k
                                     // tokens in position order, sample rows in request order
  int query_start(int row) const;    // md->query_start_loc[row]
  int query_len(int row) const;      // tokens of `row` in this step
};

// Checks the step's inputs (metadata present with `block_size`, one token id in [0, vocab_size)
// per token, sample rows inside the batch with 1 <= k <= q), selects each row's form, takes the
// context chunks from the metadata (forced prefill: one chunk over the whole context per row) and
// applies the faults that change what a step writes; faults that change arithmetic stay with each
// backend's math.
StepPlan make_step_plan(const StepInputs& inputs, int vocab_size, int block_size, const FaultSet& faults);

}  // namespace mlasim
