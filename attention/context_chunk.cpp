// The context chunks of prefill-path rows, from the metadata or one chunk a row.
#include "attention/context_chunk.h"

#include <cstddef>

#include "attention/attention_metadata.h"

namespace mlasim {

std::vector<std::vector<ContextChunk>> context_chunks_from_metadata(const AttentionMetadata& md) {
  if (!md.prefill) return {};
  const PrefillMetadata& pm = *md.prefill;
  const ChunkedContextMetadata& cc = pm.chunked_context;
  std::vector<std::vector<ContextChunk>> out(static_cast<size_t>(pm.num_rows));
  for (size_t c = 0; c < cc.seq_lens.size(); ++c)
    for (size_t r = 0; r < out.size() && r < cc.seq_lens[c].size(); ++r)
      if (cc.seq_lens[c][r] > 0) out[r].push_back({cc.starts[c][r], cc.seq_lens[c][r]});
  return out;
}

std::vector<std::vector<ContextChunk>> single_context_chunks(const AttentionMetadata& md, int row_begin, int row_end) {
  std::vector<std::vector<ContextChunk>> out(static_cast<size_t>(row_end - row_begin));
  for (int r = row_begin; r < row_end; ++r) {
    const int ctx = md.seq_lens[static_cast<size_t>(r)] -
                    (md.query_start_loc[static_cast<size_t>(r) + 1] - md.query_start_loc[static_cast<size_t>(r)]);
    if (ctx > 0) out[static_cast<size_t>(r - row_begin)].push_back({0, ctx});
  }
  return out;
}

}  // namespace mlasim
