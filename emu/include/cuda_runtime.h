// The CUDA runtime as mlasim's SIMT emulator provides it (emu/simt.h): the subset of
// types, qualifiers, intrinsics and API calls the project uses, with the runtime's semantics and
// checks. Every TU of the emulated build force-includes this header, as nvcc does for .cu files.
#pragma once

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

#include "emu/simt.h"

#define MLASIM_CUDA_EMULATION 1

// --- qualifiers ------------------------------------------------------------------------------
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __align__(n) alignas(n)
// Blocks run one at a time per worker thread and the threads of a block are fibers of that worker,
// so a function-local static per worker thread is exactly one copy per running block.
#define __shared__ static thread_local

// --- vector types ----------------------------------------------------------------------------
struct uint3 {
  unsigned x, y, z;
};
struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  constexpr dim3(unsigned vx = 1, unsigned vy = 1, unsigned vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
};
struct alignas(8) float2 {
  float x, y;
};
struct alignas(16) float4 {
  float x, y, z, w;
};
struct alignas(8) int2 {
  int x, y;
};
struct alignas(16) int4 {
  int x, y, z, w;
};
struct alignas(8) uint2 {
  unsigned x, y;
};
struct alignas(16) uint4 {
  unsigned x, y, z, w;
};
inline float2 make_float2(float x, float y) { return {x, y}; }
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
inline int2 make_int2(int x, int y) { return {x, y}; }
inline int4 make_int4(int x, int y, int z, int w) { return {x, y, z, w}; }
inline uint2 make_uint2(unsigned x, unsigned y) { return {x, y}; }
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return {x, y, z, w}; }

inline thread_local uint3 threadIdx{0, 0, 0};
inline thread_local uint3 blockIdx{0, 0, 0};
inline thread_local dim3 blockDim{1, 1, 1};
inline thread_local dim3 gridDim{1, 1, 1};
constexpr int warpSize = 32;

// --- device intrinsics -----------------------------------------------------------------------
inline void __syncthreads() { mlasim::emu::syncthreads(); }
inline void __syncwarp(unsigned mask = 0xffffffffu) { mlasim::emu::syncwarp(mask); }
[[noreturn]] inline void __trap() { mlasim::emu::trap(); }

namespace mlasim::emu {
template <class T>
T shfl_value(unsigned mask, T v, Shfl kind, int arg, int width) {
  static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8, "shuffle of a type wider than 8 bytes");
  std::uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(T));
  bits = shfl(mask, bits, kind, arg, width);
  T out;
  std::memcpy(&out, &bits, sizeof(T));
  return out;
}
}  // namespace mlasim::emu
template <class T>
T __shfl_sync(unsigned mask, T v, int src_lane, int width = 32) {
  return mlasim::emu::shfl_value(mask, v, mlasim::emu::Shfl::kIdx, src_lane, width);
}
template <class T>
T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  return mlasim::emu::shfl_value(mask, v, mlasim::emu::Shfl::kUp, static_cast<int>(delta), width);
}
template <class T>
T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
  return mlasim::emu::shfl_value(mask, v, mlasim::emu::Shfl::kDown, static_cast<int>(delta), width);
}
template <class T>
T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32) {
  return mlasim::emu::shfl_value(mask, v, mlasim::emu::Shfl::kXor, lane_mask, width);
}

using std::isfinite;
using std::isinf;
using std::isnan;

inline std::size_t __cvta_generic_to_shared(const void* p) { return mlasim::emu::shared_offset(p); }
template <class T>
T __ldg(const T* p) {
  return *p;
}

inline float __int_as_float(int x) { return std::bit_cast<float>(x); }
inline float __uint_as_float(unsigned x) { return std::bit_cast<float>(x); }
inline int __float_as_int(float x) { return std::bit_cast<int>(x); }
inline unsigned __float_as_uint(float x) { return std::bit_cast<unsigned>(x); }
inline float __expf(float x) { return std::exp(x); }
inline float __exp2f(float x) { return std::exp2(x); }
inline float __logf(float x) { return std::log(x); }
inline float __log2f(float x) { return std::log2(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __fsqrt_rn(float x) { return std::sqrt(x); }
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline float __saturatef(float x) { return x < 0.f ? 0.f : (x > 1.f ? 1.f : x); }

// CUDA's global min/max overloads.
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }
inline long min(long a, long b) { return a < b ? a : b; }
inline long max(long a, long b) { return a > b ? a : b; }
inline float min(float a, float b) { return std::fmin(a, b); }
inline float max(float a, float b) { return std::fmax(a, b); }

// --- runtime API -----------------------------------------------------------------------------
enum cudaError_t {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidConfiguration = 9,
  cudaErrorInvalidDevicePointer = 17,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorNoDevice = 100,
  cudaErrorInvalidDevice = 101,
  cudaErrorLaunchFailure = 719,
};
using cudaError = cudaError_t;
enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4,
};
enum cudaFuncAttribute {
  cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
  cudaFuncAttributePreferredSharedMemoryCarveout = 9,
};
enum cudaDeviceAttr {
  cudaDevAttrMaxThreadsPerBlock = 1,
  cudaDevAttrMaxSharedMemoryPerBlock = 8,
  cudaDevAttrMultiProcessorCount = 16,
  cudaDevAttrL2CacheSize = 38,
  cudaDevAttrComputeCapabilityMajor = 75,
  cudaDevAttrComputeCapabilityMinor = 76,
  cudaDevAttrMaxSharedMemoryPerBlockOptin = 97,
};
struct CUstream_st;
struct CUevent_st;
using cudaStream_t = CUstream_st*;
using cudaEvent_t = CUevent_st*;
constexpr unsigned cudaStreamDefault = 0x0, cudaStreamNonBlocking = 0x1;
constexpr unsigned cudaEventDefault = 0x0, cudaEventBlockingSync = 0x1, cudaEventDisableTiming = 0x2;

struct cudaDeviceProp {
  char name[256];
  std::size_t totalGlobalMem;
  std::size_t sharedMemPerBlock;
  std::size_t sharedMemPerBlockOptin;
  int warpSize;
  int maxThreadsPerBlock;
  int major;
  int minor;
  int multiProcessorCount;
  int l2CacheSize;
};

const char* cudaGetErrorName(cudaError_t e);
const char* cudaGetErrorString(cudaError_t e);
cudaError_t cudaGetLastError();
cudaError_t cudaPeekAtLastError();
cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaGetDevice(int* device);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device);
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device);
cudaError_t cudaDeviceSynchronize();
cudaError_t cudaMalloc(void** p, std::size_t bytes);
template <class T>
cudaError_t cudaMalloc(T** p, std::size_t bytes) {
  return cudaMalloc(reinterpret_cast<void**>(p), bytes);
}
cudaError_t cudaFree(void* p);
cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind,
                            cudaStream_t stream = nullptr);
cudaError_t cudaMemset(void* p, int value, std::size_t bytes);
cudaError_t cudaMemsetAsync(void* p, int value, std::size_t bytes, cudaStream_t stream = nullptr);
cudaError_t cudaStreamCreate(cudaStream_t* s);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned flags);
cudaError_t cudaStreamDestroy(cudaStream_t s);
cudaError_t cudaStreamSynchronize(cudaStream_t s);
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned flags = 0);
cudaError_t cudaEventCreate(cudaEvent_t* e);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned flags);
cudaError_t cudaEventDestroy(cudaEvent_t e);
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s = nullptr);
cudaError_t cudaEventSynchronize(cudaEvent_t e);
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end);
cudaError_t cudaFuncSetAttribute(const void* func, cudaFuncAttribute attr, int value);
template <class F>
cudaError_t cudaFuncSetAttribute(F* func, cudaFuncAttribute attr, int value) {
  return cudaFuncSetAttribute(reinterpret_cast<const void*>(func), attr, value);
}

namespace mlasim::emu {
void set_last_error(int e);

// kernel<<<grid, block, smem, stream>>>(args...) is written MLASIM_LAUNCH(grid, block, smem, stream,
// kernel)(args...); here it becomes Launch{...}(args...).
template <class... P>
class Launch {
 public:
  Launch(const char* name, void (*kernel)(P...), dim3 grid, dim3 block, std::size_t smem = 0,
         cudaStream_t stream = nullptr)
      : name_(name), kernel_(kernel), grid_(grid), block_(block), smem_(smem) {
    (void)stream;  // every operation completes in call order
  }
  template <class... A>
  void operator()(A&&... args) const {
    static_assert(sizeof...(A) == sizeof...(P), "kernel launched with the wrong number of arguments");
    struct Ctx {
      void (*kernel)(P...);
      std::tuple<std::decay_t<P>...> args;
    } ctx{kernel_, std::tuple<std::decay_t<P>...>(static_cast<std::decay_t<P>>(std::forward<A>(args))...)};
    const KernelBody body = [](const void* c) {
      const auto* x = static_cast<const Ctx*>(c);
      std::apply([&](const auto&... a) { x->kernel(a...); }, x->args);
    };
    set_last_error(launch_kernel(name_, reinterpret_cast<const void*>(kernel_), grid_, block_, smem_, body, &ctx));
  }

 private:
  const char* name_;
  void (*kernel_)(P...);
  dim3 grid_, block_;
  std::size_t smem_;
};
}  // namespace mlasim::emu

#define MLASIM_LAUNCH(grid, block, smem, stream, ...) \
  ::mlasim::emu::Launch(#__VA_ARGS__, __VA_ARGS__, (grid), (block), (smem), (stream))
#define MLASIM_DYNAMIC_SMEM(name) unsigned char* const name = ::mlasim::emu::dynamic_smem()
