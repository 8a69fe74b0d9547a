// Chunked-context metadata of MLA's prefill path (vllm MLACommonMetadataBuilder,
// docs/spec/routing.md §4): the cached context of prefill rows is gathered into a workspace of W
// tokens chunk by chunk, each chunk attended non-causally and merged by log-sum-exp.
#pragma once

#include <span>
#include <string>
#include <vector>

namespace mlasim {

// W = max(min(max(8 * max_model_len, 4 * max_num_seqs * B), cap), max_num_seqs * B), cap = 65536
// (131072 in early-2025 code).
int chunked_prefill_workspace_size(int max_model_len, int max_num_seqs, int block_size, int cap = 65536);
inline constexpr int kWorkspaceCap = 65536;
inline constexpr int kWorkspaceCapEarly2025 = 131072;

struct ChunkedContextMetadata {
  int workspace_size = 0;             // W
  int num_prefills_with_context = 0;  // npwc
  int max_context_chunk = 0;          // MCC = round_down(W / npwc, B); 0 when npwc == 0
  int num_chunks = 0;                 // ceil(max_context / MCC); 0 when npwc == 0
  std::vector<int> context_lens;      // per prefill-path row (nct)
  // [chunk][row]: chunk i covers context positions [starts, starts + seq_lens) of each row.
  // As vLLM: starts = i * MCC for every row, seq_lens = max(0, min(ctx, (i+1) MCC) - i MCC).
  std::vector<std::vector<int>> starts;
  std::vector<std::vector<int>> seq_lens;
  std::vector<std::vector<int>> cu_seq_lens;  // [chunk][row + 1], exclusive prefix sums
  std::vector<int> chunk_total_tokens;        // per chunk: tokens gathered (<= W)
  std::string validate(int block_size) const;  // "" or the first inconsistency
};

ChunkedContextMetadata build_chunked_context(std::span<const int> context_lens, int workspace_size, int block_size);
// The same into `out`, its row vectors' capacity kept.
void build_chunked_context(std::span<const int> context_lens, int workspace_size, int block_size, ChunkedContextMetadata& out);

}  // namespace mlasim
