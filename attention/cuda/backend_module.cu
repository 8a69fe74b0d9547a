// The entry point of libmlasim_cuda_backend.so (backend_module.h): the CUDA backend's factory, its
// support check and the device query, for the CLI to find with dlsym. The only exported symbol.
#include "attention/cuda/backend_module.h"
#include "attention/cuda/device_query.h"

#if !defined(MLASIM_CUDA_EMULATION)
#include <cublas_api.h>

#define MLASIM_STR2(x) #x
#define MLASIM_STR(x) MLASIM_STR2(x)
#endif

namespace mlasim {
namespace {

constexpr const char* kBuild =
#if defined(MLASIM_CUDA_EMULATION)
    "mlasim's SIMT emulator on the CPU (results, not timings)";
#else
    "CUDA " MLASIM_STR(__CUDACC_VER_MAJOR__) "." MLASIM_STR(__CUDACC_VER_MINOR__) " runtime (static), cuBLAS " MLASIM_STR(
        CUBLAS_VER_MAJOR) "." MLASIM_STR(CUBLAS_VER_MINOR) "." MLASIM_STR(CUBLAS_VER_PATCH);
#endif

constexpr CudaBackendModule kModule{.build = kBuild,
                                    .usable_device_count = cuda_usable_device_count,
                                    .support_error = cuda_backend_support_error,
                                    .make_backend = make_cuda_backend};

}  // namespace
}  // namespace mlasim

extern "C" __attribute__((visibility("default"))) const mlasim::CudaBackendModule* mlasim_cuda_backend_module() {
  return &mlasim::kModule;
}
