// CUDA-event timing, the L2 flush and the copy / GEMM ceilings of the GPU benchmarks.
#include "kit/cuda/timing.h"

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>

#include "attention/cuda/cuda_check.h"
#include "attention/cuda/launch.cuh"

namespace mlasim::kit {

namespace {

__global__ void fill_uniform_bf16_kernel(__nv_bfloat16* p, std::int64_t n, std::uint64_t seed, float a) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    std::uint64_t z = seed + static_cast<std::uint64_t>(i) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    const float u = static_cast<float>(z >> 40) * 0x1p-24f;  // [0, 1)
    p[i] = __float2bfloat16((2.f * u - 1.f) * a);
  }
}

template <typename T>
T* dev_alloc(std::size_t n) {
  T* p = nullptr;
  MLASIM_CUDA_CHECK(cudaMalloc(&p, std::max<std::size_t>(n, 1) * sizeof(T)));
  return p;
}

}  // namespace

L2Flush::L2Flush(std::size_t min_bytes) {
  int dev = 0, l2 = 0;
  MLASIM_CUDA_CHECK(cudaGetDevice(&dev));
  MLASIM_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
  bytes_ = std::max<std::size_t>(2 * static_cast<std::size_t>(l2), min_bytes);
  buf_.reset(dev_alloc<char>(bytes_));
}

void L2Flush::DeviceFree::operator()(void* p) const { cudaFree(p); }

void L2Flush::operator()() const { MLASIM_CUDA_CHECK(cudaMemsetAsync(buf_.get(), 0, bytes_)); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double median_ms(int runs, const L2Flush* flush, const std::function<void()>& fn, int warmups) {
  cudaEvent_t a, b;
  MLASIM_CUDA_CHECK(cudaEventCreate(&a));
  MLASIM_CUDA_CHECK(cudaEventCreate(&b));
  for (int i = 0; i < warmups; ++i) fn();
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    if (flush) (*flush)();
    MLASIM_CUDA_CHECK(cudaEventRecord(a));
    fn();
    MLASIM_CUDA_CHECK(cudaEventRecord(b));
    MLASIM_CUDA_CHECK(cudaEventSynchronize(b));
    float t = 0;
    MLASIM_CUDA_CHECK(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  MLASIM_CUDA_CHECK(cudaEventDestroy(a));
  MLASIM_CUDA_CHECK(cudaEventDestroy(b));
  return median(ms);
}

double copy_bandwidth_tbs(std::size_t bytes, int runs, const L2Flush& flush) {
  void* src = dev_alloc<char>(bytes);
  void* dst = dev_alloc<char>(bytes);
  MLASIM_CUDA_CHECK(cudaMemset(src, 1, bytes));
  const double ms =
      median_ms(runs, &flush, [&] { MLASIM_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice)); });
  MLASIM_CUDA_CHECK(cudaFree(src));
  MLASIM_CUDA_CHECK(cudaFree(dst));
  return 2.0 * static_cast<double>(bytes) / (ms * 1e-3) / 1e12;
}

double gemm_bf16_tflops(int n, int runs, const L2Flush& flush) {
  const std::size_t elems = static_cast<std::size_t>(n) * n;
  void* a = dev_alloc<std::uint16_t>(elems);
  void* b = dev_alloc<std::uint16_t>(elems);
  void* c = dev_alloc<std::uint16_t>(elems);
  fill_uniform_bf16(a, elems, 1, 0.1f);
  fill_uniform_bf16(b, elems, 2, 0.1f);
  cublasHandle_t h = nullptr;
  MLASIM_CUBLAS_CHECK(cublasCreate(&h));
  const float alpha = 1.f, beta = 0.f;
  const double ms = median_ms(runs, &flush, [&] {
    MLASIM_CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a, CUDA_R_16BF, n, b, CUDA_R_16BF,
                                     n, &beta, c, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  });
  MLASIM_CUBLAS_CHECK(cublasDestroy(h));
  MLASIM_CUDA_CHECK(cudaFree(a));
  MLASIM_CUDA_CHECK(cudaFree(b));
  MLASIM_CUDA_CHECK(cudaFree(c));
  return 2.0 * n * static_cast<double>(n) * n / (ms * 1e-3) / 1e12;
}

void fill_uniform_bf16(void* x, std::size_t n, std::uint64_t seed, float a) {
  MLASIM_LAUNCH(1024, 256, 0, nullptr, fill_uniform_bf16_kernel)(static_cast<__nv_bfloat16*>(x),
                                                                 static_cast<std::int64_t>(n), seed, a);
  MLASIM_CUDA_CHECK(cudaGetLastError());
}

}  // namespace mlasim::kit
