// Where the CLI gets the CUDA backend: libmlasim_cuda_backend.so beside the executable, loaded with
// dlopen on first use so that only `--device cuda` loads cuBLAS; mlasim-emu links the emulated
// backend in instead. Only in builds with CUDA.
#pragma once

#include <string>

#include "attention/cuda/backend_module.h"

namespace mlasim::cli {

// The backend's table, loaded once and kept for the life of the process; nullptr when the module
// is missing, does not load (e.g. no libcublas) or was built for another ABI, with why in *why.
const CudaBackendModule* cuda_backend_module(std::string* why = nullptr);

// The file the module is loaded from ("" when the backend is linked in).
std::string cuda_backend_module_path();

}  // namespace mlasim::cli
