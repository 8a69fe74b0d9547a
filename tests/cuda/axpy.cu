// The launch test's kernel: y = a·x + y, one thread per element.
#include "tests/cuda/axpy.h"

#include <cuda_runtime.h>

#include "attention/cuda/cuda_check.h"
#include "attention/cuda/launch.cuh"

namespace mlasim::gpu_test {

namespace {
__global__ void axpy_kernel(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
}  // namespace

void axpy(int n, float a, const float* x, float* y) {
  MLASIM_LAUNCH((n + 255) / 256, 256, 0, nullptr, axpy_kernel)(n, a, x, y);
  MLASIM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace mlasim::gpu_test
