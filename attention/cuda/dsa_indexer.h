// DeepSeek sparse attention's indexer on the GPU (docs/spec/mla.md §10): each query token's scores
// against its request's cached index keys, score_j = Σ_h w_h ReLU(q_h · k_j) for j ≤ its position,
// and the index_topk best positions (equal scores: the lower position first; all of them when the
// position is below index_topk), ascending, with their cache slots, as FlashMLA's sparse kernels
// take them (global slot ids, −1 padded). Host-only header (no CUDA types).
#pragma once

namespace mlasim {

struct DsaIndexerScoresParams {
  int num_tokens = 0;
  int num_heads = 0;            // index heads
  int head_dim = 0;             // index_head_dim
  const float* q = nullptr;        // [num_tokens, num_heads, head_dim] (RoPE applied)
  const float* weights = nullptr;  // [num_tokens, num_heads] (scales applied)
  const float* key_cache = nullptr;  // [num_slots, head_dim]: the indexer's keys
  int block_size = 64;
  int max_blocks_per_seq = 0;
  const int* block_table = nullptr;  // [rows, max_blocks_per_seq]
  const int* token_row = nullptr;    // [num_tokens]: the token's row of block_table
  const int* token_pos = nullptr;    // [num_tokens]: its position (keys 0..pos are scored)
  int max_len = 0;                   // row stride of scores: ≥ every position + 1
  float* scores = nullptr;           // [num_tokens, max_len] written; −inf past the position
  void* stream = nullptr;
};
// Dynamic shared memory: (num_heads · head_dim + num_heads) floats per CTA.
void dsa_indexer_scores(const DsaIndexerScoresParams& p);

struct DsaTopkParams {
  int num_tokens = 0;
  int topk = 0;                     // index_topk
  const float* scores = nullptr;    // [num_tokens, max_len] (dsa_indexer_scores)
  int max_len = 0;
  const int* token_row = nullptr;
  const int* token_pos = nullptr;
  int block_size = 64;
  int max_blocks_per_seq = 0;
  const int* block_table = nullptr;
  int* positions = nullptr;         // [num_tokens, topk]: ascending, −1 padded (may be null)
  int* slots = nullptr;             // [num_tokens, topk]: the positions' cache slots, −1 padded
  void* stream = nullptr;
};
// One CTA per token: a radix select of the topk-th largest (score, −position) key over 64 bits,
// then the selected positions compacted in ascending order.
void dsa_topk(const DsaTopkParams& p);

}  // namespace mlasim
