// Chunked-context workspace size and per-chunk lengths (docs/spec/routing.md §4).
#include "attention/chunked_context.h"

#include <algorithm>
#include <cstddef>

namespace mlasim {

int chunked_prefill_workspace_size(int max_model_len, int max_num_seqs, int block_size, int cap) {
  const long long a = 8LL * max_model_len;
  const long long b = 4LL * max_num_seqs * block_size;
  const long long w = std::max(std::min(std::max(a, b), static_cast<long long>(cap)),
                               static_cast<long long>(max_num_seqs) * block_size);
  return static_cast<int>(w);
}

ChunkedContextMetadata build_chunked_context(std::span<const int> ctx, int workspace_size, int block_size) {
  ChunkedContextMetadata m;
  build_chunked_context(ctx, workspace_size, block_size, m);
  return m;
}

void build_chunked_context(std::span<const int> ctx, int workspace_size, int block_size, ChunkedContextMetadata& m) {
  m.workspace_size = workspace_size;
  m.num_prefills_with_context = 0;
  m.max_context_chunk = 0;
  m.num_chunks = 0;
  m.chunk_total_tokens.clear();
  m.context_lens.assign(ctx.begin(), ctx.end());
  int max_ctx = 0;
  for (int c : ctx) {
    if (c > 0) ++m.num_prefills_with_context;
    max_ctx = std::max(max_ctx, c);
  }
  if (m.num_prefills_with_context > 0) {
    m.max_context_chunk = (workspace_size / m.num_prefills_with_context) / block_size * block_size;
    if (m.max_context_chunk > 0)  // else validate() reports it
      m.num_chunks = (max_ctx + m.max_context_chunk - 1) / m.max_context_chunk;
  }
  const std::size_t n = ctx.size(), chunks = static_cast<std::size_t>(m.num_chunks);
  m.starts.resize(chunks);  // each chunk's rows written in place, their vectors' capacity kept
  m.seq_lens.resize(chunks);
  m.cu_seq_lens.resize(chunks);
  for (std::size_t i = 0; i < chunks; ++i) {
    const int start = static_cast<int>(i) * m.max_context_chunk;
    std::vector<int>& lens = m.seq_lens[i];
    std::vector<int>& cu = m.cu_seq_lens[i];
    m.starts[i].assign(n, start);
    lens.resize(n);
    cu.assign(n + 1, 0);
    for (std::size_t r = 0; r < n; ++r) {
      lens[r] = std::max(0, std::min(ctx[r], start + m.max_context_chunk) - start);
      cu[r + 1] = cu[r] + lens[r];
    }
    m.chunk_total_tokens.push_back(cu[n]);
  }
}

std::string ChunkedContextMetadata::validate(int block_size) const {
  if (num_prefills_with_context == 0) return num_chunks == 0 ? "" : "chunks without any context";
  if (max_context_chunk <= 0) return "max_context_chunk " + std::to_string(max_context_chunk) + " is not positive (workspace too small)";
  if (max_context_chunk % block_size != 0) return "max_context_chunk is not a multiple of the block size";
  if (static_cast<long long>(max_context_chunk) * num_prefills_with_context > workspace_size)
    return "max_context_chunk * num_prefills_with_context exceeds the workspace";
  const std::size_t n = context_lens.size();
  if (starts.size() != static_cast<std::size_t>(num_chunks) || seq_lens.size() != starts.size() ||
      cu_seq_lens.size() != starts.size() || chunk_total_tokens.size() != starts.size())
    return "chunk arrays do not have num_chunks entries";
  thread_local std::vector<long long> covered;
  covered.assign(n, 0);
  for (std::size_t i = 0; i < starts.size(); ++i) {
    if (starts[i].size() != n || seq_lens[i].size() != n || cu_seq_lens[i].size() != n + 1)
      return "chunk " + std::to_string(i) + " does not have one entry per row";
    if (cu_seq_lens[i][0] != 0) return "chunk " + std::to_string(i) + " cu_seq_lens does not start at 0";
    for (std::size_t r = 0; r < n; ++r) {
      if (seq_lens[i][r] < 0 || seq_lens[i][r] > max_context_chunk)
        return "chunk " + std::to_string(i) + " row " + std::to_string(r) + " length out of [0, MCC]";
      if (seq_lens[i][r] > 0 && starts[i][r] != covered[r])
        return "chunk " + std::to_string(i) + " row " + std::to_string(r) + " does not continue the previous chunk";
      if (cu_seq_lens[i][r + 1] != cu_seq_lens[i][r] + seq_lens[i][r])
        return "chunk " + std::to_string(i) + " cu_seq_lens is not the prefix sum of seq_lens";
      covered[r] += seq_lens[i][r];
    }
    if (chunk_total_tokens[i] != cu_seq_lens[i][n]) return "chunk " + std::to_string(i) + " total mismatch";
    if (chunk_total_tokens[i] > workspace_size) return "chunk " + std::to_string(i) + " exceeds the workspace";
  }
  for (std::size_t r = 0; r < n; ++r)
    if (covered[r] != context_lens[r]) return "row " + std::to_string(r) + " context not covered exactly by the chunks";
  return "";
}

}  // namespace mlasim
