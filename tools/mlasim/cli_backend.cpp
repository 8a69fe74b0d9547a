// Backend selection for the CLI.
#include "tools/mlasim/cli_backend.h"

#include "attention/cpu/cpu_backend.h"
#include "attention/kv_cache_quant.h"
#include "engine/replay.h"
#ifdef MLASIM_HAVE_CUDA
#include "base/check.h"
#include "tools/mlasim/cuda_module.h"
#endif

namespace mlasim::cli {

#ifdef MLASIM_HAVE_CUDA
namespace {
CudaBackendOptions cuda_options(const Scenario& s, const FaultSet& faults) {
  CudaBackendOptions o;
  o.tensor_parallel_size = s.parallel.tensor_parallel_size;
  o.num_blocks = s.scheduler.num_gpu_blocks;
  o.block_size = s.scheduler.block_size;
  o.faults = faults;
  o.cache_quant = scenario_kv_cache_quant(s).quant;  // an fp8 cache, as the CPU reference stores it
  return o;
}
}  // namespace
#endif

std::string backend_support_error(const std::string& device, const Scenario& scenario, const FaultSet& faults) {
  if (device == "cpu") return "";
#ifdef MLASIM_HAVE_CUDA
  std::string why;
  const CudaBackendModule* cuda = cuda_backend_module(&why);
  if (!cuda) return "the CUDA backend cannot be loaded: " + why;
  if (std::string dsa = sparse_past_index_topk(scenario); !dsa.empty())
    return dsa + "; the CUDA backend has no DSA indexer yet (it computes dense MLA): run it with --device cpu";
  return cuda->support_error(scenario.model, cuda_options(scenario, faults));
#else
  (void)scenario, (void)faults;
  return "this mlasim was built without CUDA";
#endif
}

std::unique_ptr<Backend> make_backend(const std::string& device, const MlaWeights& weights, const Scenario& scenario,
                                      const FaultSet& faults) {
#ifdef MLASIM_HAVE_CUDA
  if (device == "cuda") {
    const CudaBackendModule* cuda = cuda_backend_module();
    MLASIM_CHECK(cuda != nullptr, "make_backend: the CUDA backend is not loaded; call backend_support_error first");
    return cuda->make_backend(weights, cuda_options(scenario, faults));
  }
#else
  (void)device;  // the CLI refuses --device cuda before getting here
#endif
  return make_cpu_backend(weights, cpu_backend_options(scenario, CpuPrecision::kFloat, faults), CpuPrecision::kFloat);
}

}  // namespace mlasim::cli
