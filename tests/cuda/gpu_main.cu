// GPU test binary: exits 77 (ctest: skipped) when no CUDA device is usable; otherwise runs the
// GPU tests and returns 0 when all pass, 1 otherwise.
#include <cstdio>
#include <string>
#include <vector>

#include "attention/cuda/cuda_check.h"
#include "attention/cuda/launch.cuh"
#include "attention/cuda/device_query.h"
#include "tests/cuda/gpu_test.h"

namespace mlasim::gpu_test {

std::vector<TestCase>& registry() {
  static std::vector<TestCase> tests;
  return tests;
}

}  // namespace mlasim::gpu_test

namespace {

__global__ void axpy_kernel(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

// The device runs a kernel and returns exact results: the toolchain, arch (sm_90a) and runtime agree.
GPU_TEST(kernel_launch) {
  const int n = 1000;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i), y[i] = 1.0f;
  float *dx = nullptr, *dy = nullptr;
  MLASIM_CUDA_CHECK(cudaMalloc(&dx, n * sizeof(float)));
  MLASIM_CUDA_CHECK(cudaMalloc(&dy, n * sizeof(float)));
  MLASIM_CUDA_CHECK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  MLASIM_CUDA_CHECK(cudaMemcpy(dy, y.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  MLASIM_LAUNCH((n + 255) / 256, 256, 0, nullptr, axpy_kernel)(n, 2.0f, dx, dy);
  MLASIM_CUDA_CHECK(cudaGetLastError());
  MLASIM_CUDA_CHECK(cudaMemcpy(y.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));
  MLASIM_CUDA_CHECK(cudaFree(dx));
  MLASIM_CUDA_CHECK(cudaFree(dy));
  for (int i = 0; i < n; ++i)
    if (y[i] != 2.0f * static_cast<float>(i) + 1.0f) {
      std::printf("  axpy mismatch at %d: %g\n", i, y[i]);
      return false;
    }
  return true;
}

}  // namespace

// Usage: mlasim_gpu_tests [substring]  (runs the tests whose name contains it)
int main(int argc, char** argv) {
  std::string why;
  int devices = mlasim::cuda_usable_device_count(&why);
  if (devices == 0) {
    std::printf("no usable CUDA device (%s): skipping GPU tests\n", why.c_str());
    return 77;
  }
  cudaDeviceProp prop{};
  MLASIM_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%d device(s); device 0: %s, sm_%d%d, %d SMs\n", devices, prop.name, prop.major, prop.minor,
              prop.multiProcessorCount);
  const std::string filter = argc > 1 ? argv[1] : "";
  int passed = 0, failed = 0;
  for (const auto& t : mlasim::gpu_test::registry()) {
    if (!filter.empty() && t.name.find(filter) == std::string::npos) continue;
    std::printf("RUN  %s\n", t.name.c_str());
    std::fflush(stdout);
    const bool ok = t.fn();
    std::printf("%s %s\n", ok ? "PASS" : "FAIL", t.name.c_str());
    (ok ? passed : failed)++;
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
