// Dense MLA decode (absorbed MQA form, docs/spec/mla.md §2.4, §6) on the GPU: params structs and launch
// functions. Host-only header (no CUDA types): device pointers are plain pointers, the stream a void*.
// Flow per step: mla_decode_get_metadata once (depends only on cache_seqlens), then mla_decode_fwd
// per layer (split-KV main kernel + combine). Kernels and tiling: mla_decode.cu.
#pragma once

#include <cstddef>

namespace mlasim {

inline constexpr int kMlaDecodeKDim = 576;        // key dim: r_kv 512 + d_r 64 = [c_kv | k_pe]
inline constexpr int kMlaDecodeVDim = 512;        // value dim: V = first 512 columns of the cache rows
inline constexpr int kMlaDecodeTileRows = 64;     // query rows (s_q × heads) per CTA
inline constexpr int kMlaDecodeTileTokens = 64;   // KV tokens per tile (one page when block_size = 64)
inline constexpr int kMlaDecodeSplitOverhead = 5; // fixed cost of one (request, part) in tile units
inline constexpr int kMlaDecodeMetadataInts = 8;  // ints per part in tile_scheduler_metadata

// Number of split-KV parts for a step: max(num_SMs / ceil(q_rows / 64), 1), q_rows = s_q · heads.
int mla_decode_num_sm_parts(int num_sms, int q_rows);

// Workspace sizes (elements) for the split-KV partial results: at most batch + num_sm_parts − 1 splits.
std::size_t mla_decode_o_accum_floats(int batch, int q_rows, int num_sm_parts);
std::size_t mla_decode_lse_accum_floats(int batch, int q_rows, int num_sm_parts);

// The per-step scheduling pass: total work Σ(ceil(len_i / 64) + 5) divided evenly over the parts,
// a request split across parts when needed. Reusable by every layer of the step.
// tile_scheduler_metadata, per part p (8 ints): [0] begin request, [1] begin token (multiple of 64),
// [2] end request (inclusive), [3] end token (exclusive, within the end request), [4] split index of
// the begin request's chunk, [5..7] 0. A part with begin request > end request has no work.
// num_splits: prefix sums, num_splits[i + 1] − num_splits[i] = number of chunks of request i; chunk
// j of request i is split num_splits[i] + j of the workspace. A request with one chunk is written
// straight to the output by the main kernel; the combine kernel merges the others.
struct MlaDecodeMetadataParams {
  const int* cache_seqlens = nullptr;    // [batch] int32, device: cached tokens incl. this step's
  int batch = 0;
  int num_sm_parts = 1;
  int* tile_scheduler_metadata = nullptr;  // [num_sm_parts, 8] int32, device (written)
  int* num_splits = nullptr;               // [batch + 1] int32, device (written)
  void* stream = nullptr;                  // cudaStream_t
};
void mla_decode_get_metadata(const MlaDecodeMetadataParams& p);

// The same pass on the host (host arrays), for tests and for callers that hold seqlens on the host.
void mla_decode_get_metadata_host(const int* cache_seqlens, int batch, int num_sm_parts, int* tile_scheduler_metadata,
                                  int* num_splits);

struct MlaDecodeParams {
  // Shapes
  int batch = 0;
  int s_q = 1;         // query tokens per request (1 for decode, >1 for speculative / short prefill)
  int num_heads = 0;   // H (query heads; one latent KV head)
  int block_size = 64; // tokens per cache block (any value ≥ 1; 64 is the fast path)
  int max_blocks_per_seq = 0;
  int num_blocks = 0;  // cache blocks (only for argument checks)
  float softmax_scale = 0;  // the model's (e.g. 0.1352338 for V3), never 1/sqrt(576) by default
  bool causal = true;       // bottom-right: query i sees keys j < seqlen − s_q + i + 1

  // Inputs
  const void* q = nullptr;              // [batch, s_q, num_heads, 576] bf16 (q_lat | q_pe), contiguous
  const void* kv_cache = nullptr;       // [num_blocks, block_size, 576] bf16 ([c_kv | k_pe]), contiguous
  const int* block_table = nullptr;     // [batch, max_blocks_per_seq] int32; entries past a request's
                                        // last block are never read (may hold a sentinel)
  const int* cache_seqlens = nullptr;   // [batch] int32

  // Outputs
  void* out = nullptr;   // [batch, s_q, num_heads, 512] bf16
  float* lse = nullptr;  // [batch, num_heads, s_q] fp32, natural log; +inf for rows with no key

  // Scheduling (from mla_decode_get_metadata with the same cache_seqlens and num_sm_parts)
  int num_sm_parts = 1;
  const int* tile_scheduler_metadata = nullptr;  // [num_sm_parts, 8] int32
  const int* num_splits = nullptr;               // [batch + 1] int32
  float* o_accum = nullptr;    // [mla_decode_o_accum_floats] fp32: [splits, s_q·num_heads, 512]
  float* lse_accum = nullptr;  // [mla_decode_lse_accum_floats] fp32: [splits, s_q·num_heads], log2

  void* stream = nullptr;  // cudaStream_t
};

// Main split-KV kernel + combine kernel on p.stream (asynchronous).
void mla_decode_fwd(const MlaDecodeParams& p);

}  // namespace mlasim
