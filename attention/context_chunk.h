// One chunk of a prefill row's context (docs/spec/routing.md §4, "Chunked context metadata"):
// what the step plan hands both backends, without the CPU attention code.
#pragma once

#include <vector>

namespace mlasim {

struct AttentionMetadata;

// Context positions [start, start + len) of one row, attended non-causally as one chunk.
struct ContextChunk {
  int start = 0;
  int len = 0;
};

// The prefill-path rows' context chunks from md.prefill->chunked_context (rows
// [prefill->row_start, num_reqs)); empty lists when the metadata has no prefill part.
std::vector<std::vector<ContextChunk>> context_chunks_from_metadata(const AttentionMetadata& md);
// One chunk [0, context_len) per row of [row_begin, row_end) (no chunk when the context is empty).
std::vector<std::vector<ContextChunk>> single_context_chunks(const AttentionMetadata& md, int row_begin, int row_end);

}  // namespace mlasim
