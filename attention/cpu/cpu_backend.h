// The CPU reference backend: the whole MLA model on the host, templated on the scalar type
// (double for goldens, float for speed), owning one paged latent cache per layer, tensor
// parallelism emulated with partial sums in rank order, optional injected faults.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "attention/backend.h"
#include "attention/faults.h"
#include "attention/cpu/latent_cache.h"
#include "model/mla_weights.h"
#include "attention/cpu/model_forward_cpu.h"

namespace mlasim {

struct CpuBackendOptions {
  int tensor_parallel_size = 1;  // 1..8; num_attention_heads and intermediate_size divisible by it
  int num_blocks = 0;            // latent cache blocks per layer (the scheduler's num_gpu_blocks)
  int block_size = 16;           // B; every step's metadata must use the same
  FaultSet faults;               // none by default
  double cache_fill = 0.0;       // initial value of every cache entry; NaN poisons unwritten slots
  bool bf16_cache = false;       // round cache entries to bf16 (the decode form then reads rounded
                                 // latents while the prefill form's new tokens use exact ones)
  KvCacheQuant cache_quant;      // an fp8 KV cache (attention/kv_cache_quant.h); overrides bf16_cache
};

template <typename T>
class CpuBackend final : public Backend {
 public:
  // CpuBackend<float> reads `weights` in place: they must outlive the backend.
  CpuBackend(const MlaWeights& weights, const CpuBackendOptions& options);
  std::string name() const override;  // "cpu-f64" | "cpu-f32" (+ " tp=N", + " faults=...")
  // fp64 in double; in float, fp8 or fp8_ds_mla with such a cache, bf16 when the cache holds bf16
  // values, else fp32.
  PrecisionClass precision() const override;
  StepOutputs run_step(const StepInputs& inputs) override;

  const ModelConfig& config() const { return model_.config; }
  const CpuBackendOptions& options() const { return options_; }
  LatentCache<T>& cache(int layer) { return caches_[static_cast<size_t>(layer)]; }

 private:
  CpuModel<T> model_;
  CpuBackendOptions options_;
  std::vector<LatentCache<T>> caches_;
  std::vector<LatentCache<T>> index_caches_;  // the DSA indexer's keys, one per layer (has_dsa_indexer)
};

extern template class CpuBackend<float>;
extern template class CpuBackend<double>;

enum class CpuPrecision { kFloat, kDouble };
// kFloat reads `weights` in place (see CpuBackend): they must outlive the backend.
std::unique_ptr<Backend> make_cpu_backend(const MlaWeights& weights, const CpuBackendOptions& options,
                                          CpuPrecision precision);

}  // namespace mlasim
