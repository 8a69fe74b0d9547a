// Internal to the CUDA backend (shared by its .cu files): the per-step plan built on the host,
// one tensor-parallel rank's resources, and CudaBackend::Impl.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "attention/attention_metadata.h"
#include "attention/cuda/cache_quant.h"
#include "attention/cuda/cache_write.h"
#include "attention/cuda/communicator.h"
#include "attention/cuda/cublas_gemm.h"
#include "attention/cuda/cuda_backend.h"
#include "attention/cuda/cuda_check.h"
#include "attention/cuda/device_query.h"
#include "attention/cuda/device_weights.h"
#include "attention/cuda/elementwise.h"
#include "attention/cuda/merge_attn_states.h"
#include "attention/cuda/mla_decode.h"
#include "attention/cuda/mla_prefill.h"
#include "attention/cuda/mla_sparse.h"
#include "attention/context_chunk.h"
#include "model/mla_dims.h"
#include "model/rope.h"
#include "attention/step_plan.h"
#include "model/tp_shard.h"
#include "base/check.h"

namespace mlasim {
namespace cuda_detail {

using u16 = std::uint16_t;
constexpr int kRkv = 512, kDr = 64, kDn = 128, kDv = 128, kL = kRkv + kDr, kDqk = kDn + kDr, kDkv = kDn + kDv;
static_assert(kL == kMlaDecodeKDim && kRkv == kMlaDecodeVDim && kDqk == kMlaPrefillDqk && kDv == kMlaPrefillDv);

int visible_devices(const CudaBackendOptions& o);
// How the options' KV cache stores a row (bf16 unless the cache is fp8).
inline CacheFormat cache_format(const CudaBackendOptions& o) {
  switch (o.cache_quant.kind) {
    case KvCacheQuantKind::kFp8PerTensor: return CacheFormat::kFp8PerTensor;
    case KvCacheQuantKind::kFp8DsMla: return CacheFormat::kFp8DsMla;
    default: return CacheFormat::kBf16;
  }
}
std::vector<int> devices_for(const CudaBackendOptions& o);

// The step plan packed for the kernels on the host, uploaded once to every rank: every int array
// in `ints` at its offset, and the RoPE tables.
struct DevicePlan : StepPlan {
  explicit DevicePlan(StepPlan plan) : StepPlan(std::move(plan)) {}
  int max_q = 0;          // longest prefill-form query
  int max_blocks = 1;     // decode block-table width
  int max_dec_len = 0;    // an fp8 cache: the longest decode token's cache length (width of dec_idx)
  std::vector<int> ints;  // every int array below, packed
  // token ids [n], cache slots [n] (-1: not written), per decode token its cache length and block
  // table [num_decode_tokens, max_blocks], prefill-form cu_seqlens_q, logits_indices
  std::size_t off_ids = 0, off_slots = 0, off_dec_seqlens = 0, off_dec_bt = 0, off_cu_q = 0, off_samples = 0;
  // An fp8 cache: per decode token the slots of its cache positions [num_decode_tokens, max_dec_len]
  // (-1 past its length), which mla_sparse_fwd reads as a top-k of every position.
  std::size_t off_dec_idx = 0;
  struct Round {  // the k-th context chunk of every prefill-form row (none: s_k = 0)
    std::size_t off_cu_k = 0, off_slots = 0;
    int total = 0, max_len = 0;
  };
  std::vector<Round> rounds;
  int max_round_total = 0;
  std::vector<float> rope;  // cos [n, d_r/2], then sin [n, d_r/2]

  int num_samples() const { return static_cast<int>(logits_indices.size()); }
  std::size_t push(const std::vector<int>& v) {
    const std::size_t off = ints.size();
    ints.insert(ints.end(), v.begin(), v.end());
    ints.resize((ints.size() + 63) / 64 * 64, 0);  // keep every array 256-byte aligned
    return off;
  }
};

// Packs the plan of one step (host only).
DevicePlan pack_step_plan(StepPlan plan, std::span<const int> token_ids, const ModelConfig& c,
                          const std::vector<double>& inv_freq, const CudaBackendOptions& o);

// One tensor-parallel rank: its device, stream, cuBLAS handle, weights, caches and step buffers.
struct Rank {
  int rank = 0, device = 0, num_sms = 1;
  cudaStream_t stream = nullptr;
  std::unique_ptr<CublasGemm> gemm;
  std::unique_ptr<DeviceWeights> w;
  std::vector<DeviceBuffer> caches;  // per layer [num_blocks, block_size] rows of cache_row_bytes(cache_format)
  // Step buffers (grown on demand between steps).
  DeviceBuffer ints, rope, h, partial, x_bf, cq, cq_bf, lat, lat_bf, q, q_bf, attn;
  DeviceBuffer qlat, olat, lse_dec, o_accum, lse_accum, tile_md, num_splits;
  DeviceBuffer kvb, kbuf, o_new, lse_new, o_ctx, lse_ctx, o_chunk, lse_chunk, ctx_lat;
  DeviceBuffer g, u, a_bf, hs, xs_bf, logits;
  int num_sm_parts = 1;

  const int* ip(std::size_t off) const { return ints.as<const int>() + off; }
  void* s() const { return stream; }
};

}  // namespace cuda_detail

struct CudaBackend::Impl {
  ModelConfig config;
  CudaBackendOptions options;
  std::vector<double> inv_freq;
  float scale = 0.f;
  std::vector<cuda_detail::Rank> ranks;
  std::unique_ptr<Communicator> comm;
  std::vector<float> host_logits;

  void prepare(cuda_detail::Rank& rk, const cuda_detail::DevicePlan& p);
  // One layer's attention on one rank, stage by stage (cuda_backend_attention.cu).
  void attention(cuda_detail::Rank& rk, int layer, const cuda_detail::DevicePlan& p);
  void project_q_and_latent(cuda_detail::Rank& rk, const DeviceLayerWeights& w, const cuda_detail::DevicePlan& p);
  void write_cache(cuda_detail::Rank& rk, int layer, const cuda_detail::DevicePlan& p);
  void decode_form(cuda_detail::Rank& rk, const DeviceLayerWeights& w, int layer, const cuda_detail::DevicePlan& p);
  void prefill_form(cuda_detail::Rank& rk, const DeviceLayerWeights& w, int layer, const cuda_detail::DevicePlan& p);
  void o_proj(cuda_detail::Rank& rk, const DeviceLayerWeights& w, const cuda_detail::DevicePlan& p);
  void mlp(cuda_detail::Rank& rk, int layer, const cuda_detail::DevicePlan& p);
  void all_reduce_and_add(const cuda_detail::DevicePlan& p);
};

}  // namespace mlasim
