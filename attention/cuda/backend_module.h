// The CUDA backend as a separately linked module (libmlasim_cuda_backend.so): its one C entry point
// and the table of host-side functions it returns, so that the `mlasim` command loads cuBLAS only
// for `--device cuda`. Host-only header (no CUDA types).
#pragma once

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <string>

#include "attention/backend.h"
#include "attention/cuda/cuda_backend.h"
#include "model/mla_weights.h"

namespace mlasim {

// Raise on any change to CudaBackendModule or to what its functions take or return.
inline constexpr int kCudaBackendModuleAbi = 1;
inline constexpr const char* kCudaBackendModuleFile = "libmlasim_cuda_backend.so";
inline constexpr const char* kCudaBackendModuleEntry = "mlasim_cuda_backend_module";

// The sizes of the types that cross the boundary, folded into one number: a module built against
// other headers is refused even when nobody raised kCudaBackendModuleAbi.
inline constexpr std::size_t cuda_backend_module_layout() {
  std::size_t h = 0;
  for (std::size_t s : {sizeof(CudaBackendOptions), sizeof(FaultSet), sizeof(ModelConfig), sizeof(MlaWeights),
                        sizeof(StepInputs), sizeof(StepOutputs), sizeof(std::string), sizeof(std::unique_ptr<Backend>)})
    h = h * 1000003u + s;
  return h;
}

struct CudaBackendModule {
  // abi and layout stay the first two members in every ABI version: the loader checks them before
  // it uses anything else.
  int abi = kCudaBackendModuleAbi;
  std::size_t layout = cuda_backend_module_layout();
  const char* build = "";  // what the module was built with, e.g. "CUDA 13.0 runtime (static), cuBLAS 13.1"
  int (*usable_device_count)(std::string* why) = nullptr;                                     // device_query.h
  std::string (*support_error)(const ModelConfig&, const CudaBackendOptions&) = nullptr;      // cuda_backend.h
  std::unique_ptr<Backend> (*make_backend)(const MlaWeights&, const CudaBackendOptions&) = nullptr;  // idem
};

}  // namespace mlasim

// The entry point (kCudaBackendModuleEntry): the module's table, valid for the life of the process.
extern "C" const mlasim::CudaBackendModule* mlasim_cuda_backend_module();
