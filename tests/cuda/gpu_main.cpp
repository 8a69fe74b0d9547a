// GPU test binary (Catch2): exits 77 (ctest: skipped) when no CUDA device is usable; otherwise runs
// the Catch2 session (arguments as Catch2's: a test name runs that test) and returns 0 when every
// check passes, 1 otherwise. A failing check is reported with its expression and values.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#include <cuda_runtime.h>

#include <cstdio>
#include <string>
#include <vector>

#include "attention/cuda/cuda_check.h"
#include "attention/cuda/device_query.h"
#include "tests/cuda/axpy.h"

// The device runs a kernel and returns exact results: the toolchain, arch (sm_90a) and runtime agree.
TEST_CASE("kernel_launch", "[gpu][forward-only]") {
  const int n = 1000;
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) x[i] = static_cast<float>(i), y[i] = 1.0f;
  float *dx = nullptr, *dy = nullptr;
  MLASIM_CUDA_CHECK(cudaMalloc(&dx, n * sizeof(float)));
  MLASIM_CUDA_CHECK(cudaMalloc(&dy, n * sizeof(float)));
  MLASIM_CUDA_CHECK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  MLASIM_CUDA_CHECK(cudaMemcpy(dy, y.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  mlasim::gpu_test::axpy(n, 2.0f, dx, dy);
  MLASIM_CUDA_CHECK(cudaMemcpy(y.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));
  MLASIM_CUDA_CHECK(cudaFree(dx));
  MLASIM_CUDA_CHECK(cudaFree(dy));
  int first_wrong = -1;
  for (int i = 0; i < n && first_wrong < 0; ++i)
    if (y[i] != 2.0f * static_cast<float>(i) + 1.0f) first_wrong = i;
  INFO("y[" << first_wrong << "] = " << (first_wrong < 0 ? 0.0f : y[first_wrong]));
  CHECK(first_wrong == -1);
}

int main(int argc, char** argv) {
  // A listing (--list-test-names-only, read by ctest's test discovery) prints the names alone and
  // needs no device.
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]).rfind("--list", 0) == 0) return Catch::Session().run(argc, argv);
  std::string why;
  const int devices = mlasim::cuda_usable_device_count(&why);
  if (devices == 0) {
    std::printf("no usable CUDA device (%s): skipping GPU tests\n", why.c_str());
    return 77;
  }
  cudaDeviceProp prop{};
  MLASIM_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%d device(s); device 0: %s, sm_%d%d, %d SMs\n", devices, prop.name, prop.major, prop.minor,
              prop.multiProcessorCount);
  std::fflush(stdout);
  // Catch2 returns the number of failed checks; 77 of them must not read as "skipped".
  return Catch::Session().run(argc, argv) == 0 ? 0 : 1;
}
