// The per-step split-KV scheduling pass of the MLA decode on the device (one thread; the work is a
// short serial scan over the batch) and on the host, plus the part count and workspace sizes.
#include <cuda_runtime.h>

#include "attention/cuda/cuda_check.h"
#include "attention/cuda/launch.cuh"
#include "attention/cuda/mla_decode.h"
#include "attention/cuda/mla_decode_schedule.cuh"
#include "base/check.h"

namespace mlasim {
namespace {

__global__ void mla_decode_metadata_kernel(const MlaDecodeMetadataParams p) {
  if (blockIdx.x == 0 && threadIdx.x == 0)
    mla_decode_schedule(p.cache_seqlens, p.batch, p.num_sm_parts, p.tile_scheduler_metadata, p.num_splits);
}

}  // namespace

int mla_decode_num_sm_parts(int num_sms, int q_rows) {
  const int m_blocks = (q_rows + kMlaDecodeTileRows - 1) / kMlaDecodeTileRows;
  const int parts = m_blocks > 0 ? num_sms / m_blocks : num_sms;
  return parts > 1 ? parts : 1;
}

std::size_t mla_decode_o_accum_floats(int batch, int q_rows, int num_sm_parts) {
  return static_cast<std::size_t>(batch + num_sm_parts) * static_cast<std::size_t>(q_rows) * kMlaDecodeVDim;
}

std::size_t mla_decode_lse_accum_floats(int batch, int q_rows, int num_sm_parts) {
  return static_cast<std::size_t>(batch + num_sm_parts) * static_cast<std::size_t>(q_rows);
}

void mla_decode_get_metadata(const MlaDecodeMetadataParams& p) {
  MLASIM_CHECK(p.batch >= 0 && p.num_sm_parts >= 1, "mla_decode_get_metadata: bad batch / num_sm_parts");
  MLASIM_CHECK(p.tile_scheduler_metadata && p.num_splits && (p.batch == 0 || p.cache_seqlens),
               "mla_decode_get_metadata: null pointer");
  MLASIM_LAUNCH(1, 32, 0, static_cast<cudaStream_t>(p.stream), mla_decode_metadata_kernel)(p);
  MLASIM_CUDA_CHECK(cudaGetLastError());
}

void mla_decode_get_metadata_host(const int* cache_seqlens, int batch, int num_sm_parts, int* tile_scheduler_metadata,
                                  int* num_splits) {
  MLASIM_CHECK(batch >= 0 && num_sm_parts >= 1, "mla_decode_get_metadata_host: bad batch / num_sm_parts");
  mla_decode_schedule(cache_seqlens, batch, num_sm_parts, tile_scheduler_metadata, num_splits);
}

}  // namespace mlasim
