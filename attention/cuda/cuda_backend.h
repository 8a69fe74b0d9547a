// The CUDA model backend (docs/design.md layer 3): the whole MLA model on 1..8 tensor-parallel ranks,
// each rank on device rank % num_devices with its own stream, cuBLAS handle, bf16 weight shard and
// per-layer paged latent caches [num_blocks, block_size, 576] bf16 (zero-initialised). The same
// routing as the CPU reference: tokens [0, num_mqa) through the absorbed decode form (mla_decode),
// the rest through the prefill form (mla_prefill over new tokens, cached context chunk by chunk,
// merge_attn_states); logits for the sampled tokens only. Host-only header (no CUDA types): the
// CLI and the harness's callers may include it; the harness itself never does.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "attention/backend.h"
#include "attention/faults.h"
#include "attention/kv_cache_quant.h"
#include "model/mla_weights.h"

namespace mlasim {

struct CudaBackendOptions {
  int tensor_parallel_size = 1;  // 1..8; num_attention_heads and intermediate_size divisible by it
  int num_blocks = 0;            // latent cache blocks per layer (the scheduler's num_gpu_blocks)
  int block_size = 16;           // tokens per block; every step's metadata must use the same
  FaultSet faults;               // see cuda_backend_supports_fault
  int max_devices = 0;           // ranks go to devices rank % min(visible devices, max_devices);
                                 // 0: every visible device; 1: all ranks share device 0
  KvCacheQuant cache_quant;      // an fp8 KV cache, stored and read as vLLM does (attention/kv_cache_quant.h)
};

// Faults the CUDA backend reproduces: decode_skips_cache_write_for_fresh_rows,
// decode_scale_1_over_sqrt_576, rope_neox_instead_of_interleaved, kv_norm_dropped, w_uk_transposed.
// Not chunk_lse_merge_wrong (merge_attn_states on the GPU has no swapped weighting).
bool cuda_backend_supports_fault(Fault f);

// "" when the backend can run this model with these options on this machine, else why not: no
// usable device, geometry other than r_kv 512 / d_r 64 / d_n 128 / d_v 128 (the kernels' dims),
// an unsupported TP size or rank layout (see communicator.h), an unsupported fault, no cache.
std::string cuda_backend_support_error(const ModelConfig& config, const CudaBackendOptions& options);

class CudaBackend final : public Backend {
 public:
  // Aborts (file:line) when cuda_backend_support_error is not "": check it first for a clean error.
  CudaBackend(const MlaWeights& weights, const CudaBackendOptions& options);
  ~CudaBackend() override;
  std::string name() const override;  // "cuda" (+ " tp=N", + " faults=...")
  PrecisionClass precision() const override;  // bf16 (bf16 weights and cache); fp8_bf16 on an fp8 cache
  StepOutputs run_step(const StepInputs& inputs) override;

  const CudaBackendOptions& options() const;
  std::vector<int> rank_devices() const;
  std::string communicator_mode() const;  // "single" | "in-device" | "nccl"

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The factory the CLI uses for `--device cuda` (aborts like the constructor; check
// cuda_backend_support_error first).
std::unique_ptr<Backend> make_cuda_backend(const MlaWeights& weights, const CudaBackendOptions& options);

}  // namespace mlasim
