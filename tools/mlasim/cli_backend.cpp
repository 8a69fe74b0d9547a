// Backend selection for the CLI.
#include "tools/mlasim/cli_backend.h"

#include "attention/cpu/cpu_backend.h"
#include "engine/replay.h"
#ifdef MLASIM_HAVE_CUDA
#include "base/check.h"
#include "tools/mlasim/cuda_module.h"
#endif

namespace mlasim::cli {

#ifdef MLASIM_HAVE_CUDA
namespace {
// The CUDA backend computes dense MLA; it has no DSA indexer yet (docs/spec/mla.md §10). A sparse
// model's attention is dense only while every sequence fits index_topk: "" when the scenario's do
// (a requests_file's are not known before the replay, so they count as not fitting).
std::string dsa_support_error(const Scenario& s) {
  const ModelConfig& m = s.model;
  if (!has_dsa_indexer(m)) return "";
  // The longest sequence a step attends over: the prompt, the outputs fed back (max_tokens - 1),
  // and a verify step's k draft tokens.
  bool fits = s.requests_file.empty();
  for (const RequestSpec& r : s.requests) {
    const long long prompt = r.prompt.empty() ? r.seeded_prompt_len : static_cast<long long>(r.prompt.size());
    fits = fits && prompt + r.max_tokens - 1 + s.scheduler.num_speculative_tokens <= *m.index_topk;
  }
  if (fits) return "";
  return "its sparse model's sequences pass index_topk " + std::to_string(*m.index_topk) +
         ", where each query attends to the DSA indexer's top-k positions; the CUDA backend has no indexer yet "
         "(it computes dense MLA): run it with --device cpu";
}

CudaBackendOptions cuda_options(const Scenario& s, const FaultSet& faults) {
  CudaBackendOptions o;
  o.tensor_parallel_size = s.parallel.tensor_parallel_size;
  o.num_blocks = s.scheduler.num_gpu_blocks;
  o.block_size = s.scheduler.block_size;
  o.faults = faults;
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
  if (std::string dsa = dsa_support_error(scenario); !dsa.empty()) return dsa;
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
