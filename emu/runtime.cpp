// The CUDA runtime API of the SIMT emulator: device memory between guard pages, synchronous copies
// and streams, device properties of an H200-like device, kernel attributes and the last-error slot.
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <shared_mutex>

#include "cuda_runtime.h"
#include "emu/simt.h"

struct CUstream_st {
  int device;
};
struct CUevent_st {
  std::chrono::steady_clock::time_point when;
};

namespace mlasim::emu {
namespace {

struct Allocation {
  std::size_t bytes;      // requested
  unsigned char* map;     // whole mapping (guard, data, guard)
  std::size_t map_bytes;
};

std::shared_mutex g_mem_mu;
std::map<std::uintptr_t, Allocation> g_allocs;  // by first byte
std::atomic<std::uint64_t> g_free_gen{0};

thread_local int t_device = 0;
thread_local cudaError_t t_last_error = cudaSuccess;
std::mutex g_handles_mu;
std::set<const void*> g_handles;  // live streams and events

int device_count() {
  static const int n = [] {
    const char* e = std::getenv("MLASIM_EMU_DEVICES");
    const int v = e ? std::atoi(e) : 1;
    return v >= 0 && v <= 64 ? v : 1;
  }();
  return n;
}

int sm_count() {
  static const int n = [] {
    const char* e = std::getenv("MLASIM_EMU_SMS");
    const int v = e ? std::atoi(e) : 132;
    return v >= 1 && v <= 1024 ? v : 132;
  }();
  return n;
}

cudaError_t ret(cudaError_t e) {
  if (e != cudaSuccess) t_last_error = e;
  return e;
}

bool handle_ok(const void* h) {
  if (!h) return true;  // the legacy default stream
  std::lock_guard<std::mutex> lock(g_handles_mu);
  return g_handles.count(h) != 0;
}

// Direction check of a copy: which sides must be device memory.
cudaError_t check_copy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, const char* api) {
  const bool dst_dev = device_range_ok(dst, bytes), src_dev = device_range_ok(src, bytes);
  bool ok = true;
  switch (kind) {
    case cudaMemcpyHostToDevice: ok = dst_dev && !src_dev; break;
    case cudaMemcpyDeviceToHost: ok = src_dev && !dst_dev; break;
    case cudaMemcpyDeviceToDevice: ok = src_dev && dst_dev; break;
    case cudaMemcpyHostToHost: ok = !src_dev && !dst_dev; break;
    case cudaMemcpyDefault: ok = true; break;
  }
  if (!ok) {
    const char* dst_is = dst_dev ? "inside" : "not inside";
    const char* src_is = src_dev ? "inside" : "not inside";
    std::fprintf(stderr,
                 "mlasim-emu: %s(dst %p, src %p, %zu bytes, kind %d): dst is %s one device allocation, src is %s one; "
                 "the kind needs otherwise\n",
                 api, dst, src, bytes, static_cast<int>(kind), dst_is, src_is);
    return cudaErrorInvalidValue;
  }
  return cudaSuccess;
}

}  // namespace

void* device_alloc(std::size_t bytes) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t padded = (bytes + 255) / 256 * 256;
  const std::size_t data_pages = (padded + page - 1) / page * page;
  const std::size_t map_bytes = data_pages + 2 * page;
  void* m = mmap(nullptr, map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) return nullptr;
  auto* base = static_cast<unsigned char*>(m);
  mprotect(base, page, PROT_NONE);
  mprotect(base + page + data_pages, page, PROT_NONE);
  // The data ends at the upper guard page (rounded to cudaMalloc's 256-byte alignment).
  unsigned char* data = base + page + data_pages - padded;
  std::memset(data, 0xff, padded);  // fresh device memory reads as NaN (bf16 and fp32)
  std::unique_lock<std::shared_mutex> lock(g_mem_mu);
  g_allocs[reinterpret_cast<std::uintptr_t>(data)] = {bytes, base, map_bytes};
  return data;
}

bool device_free(void* p) {
  std::unique_lock<std::shared_mutex> lock(g_mem_mu);
  auto it = g_allocs.find(reinterpret_cast<std::uintptr_t>(p));
  if (it == g_allocs.end()) return false;
  munmap(it->second.map, it->second.map_bytes);
  g_allocs.erase(it);
  ++g_free_gen;
  return true;
}

bool device_range_ok(const void* p, std::size_t bytes) {
  struct Hit {
    std::uintptr_t start = 0, end = 0;
    std::uint64_t gen = ~0ull;
  };
  thread_local Hit last;
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  if (last.gen == g_free_gen.load(std::memory_order_relaxed) && a >= last.start && a + bytes <= last.end) return true;
  std::shared_lock<std::shared_mutex> lock(g_mem_mu);
  auto it = g_allocs.upper_bound(a);
  if (it == g_allocs.begin()) return false;
  --it;
  const std::uintptr_t end = it->first + it->second.bytes;
  if (a + bytes > end || a + bytes < a) return false;
  last = {it->first, end, g_free_gen.load(std::memory_order_relaxed)};
  return true;
}

void set_last_error(int e) {
  if (e != cudaSuccess) t_last_error = static_cast<cudaError_t>(e);
}

}  // namespace mlasim::emu

using namespace mlasim::emu;

const char* cudaGetErrorName(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    case cudaErrorInvalidDevicePointer: return "cudaErrorInvalidDevicePointer";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cudaErrorNoDevice: return "cudaErrorNoDevice";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
  }
  return "cudaErrorUnknown";
}

const char* cudaGetErrorString(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidDevicePointer: return "invalid device pointer";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
  }
  return "unknown error";
}

cudaError_t cudaGetLastError() {
  const cudaError_t e = t_last_error;
  t_last_error = cudaSuccess;
  return e;
}
cudaError_t cudaPeekAtLastError() { return t_last_error; }

cudaError_t cudaGetDeviceCount(int* count) {
  if (!count) return ret(cudaErrorInvalidValue);
  *count = device_count();
  return device_count() == 0 ? ret(cudaErrorNoDevice) : cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  if (device < 0 || device >= device_count()) return ret(cudaErrorInvalidDevice);
  t_device = device;
  return cudaSuccess;
}

cudaError_t cudaGetDevice(int* device) {
  if (!device) return ret(cudaErrorInvalidValue);
  *device = t_device;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  if (!prop) return ret(cudaErrorInvalidValue);
  if (device < 0 || device >= device_count()) return ret(cudaErrorInvalidDevice);
  *prop = cudaDeviceProp{};
  std::snprintf(prop->name, sizeof prop->name, "mlasim SIMT emulator (H200-like, %d SMs)", sm_count());
  prop->totalGlobalMem = std::size_t{141} << 30;
  prop->sharedMemPerBlock = 48 * 1024;
  prop->sharedMemPerBlockOptin = 232448;
  prop->warpSize = 32;
  prop->maxThreadsPerBlock = 1024;
  prop->major = 9;
  prop->minor = 0;
  prop->multiProcessorCount = sm_count();
  prop->l2CacheSize = 60 << 20;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  if (!value) return ret(cudaErrorInvalidValue);
  if (device < 0 || device >= device_count()) return ret(cudaErrorInvalidDevice);
  switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock: *value = 1024; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *value = 48 * 1024; break;
    case cudaDevAttrMultiProcessorCount: *value = sm_count(); break;
    case cudaDevAttrL2CacheSize: *value = 60 << 20; break;
    case cudaDevAttrComputeCapabilityMajor: *value = 9; break;
    case cudaDevAttrComputeCapabilityMinor: *value = 0; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = 232448; break;
    default: return ret(cudaErrorInvalidValue);
  }
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }

cudaError_t cudaMalloc(void** p, std::size_t bytes) {
  if (!p) return ret(cudaErrorInvalidValue);
  *p = nullptr;
  if (bytes == 0) return cudaSuccess;
  *p = device_alloc(bytes);
  return *p ? cudaSuccess : ret(cudaErrorMemoryAllocation);
}

cudaError_t cudaFree(void* p) {
  if (!p) return cudaSuccess;
  if (!device_free(p)) {
    std::fprintf(stderr, "mlasim-emu: cudaFree(%p): not the start of a live device allocation\n", p);
    return ret(cudaErrorInvalidValue);
  }
  return cudaSuccess;
}

cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind) {
  if (bytes == 0) return cudaSuccess;
  if (!dst || !src) return ret(cudaErrorInvalidValue);
  if (const cudaError_t e = check_copy(dst, src, bytes, kind, "cudaMemcpy"); e != cudaSuccess) return ret(e);
  std::memmove(dst, src, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, cudaStream_t stream) {
  if (!handle_ok(stream)) return ret(cudaErrorInvalidResourceHandle);
  return cudaMemcpy(dst, src, bytes, kind);
}

cudaError_t cudaMemset(void* p, int value, std::size_t bytes) {
  if (bytes == 0) return cudaSuccess;
  if (!device_range_ok(p, bytes)) {
    std::fprintf(stderr, "mlasim-emu: cudaMemset(%p, %zu bytes): not inside one device allocation\n", p, bytes);
    return ret(cudaErrorInvalidValue);
  }
  std::memset(p, value, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemsetAsync(void* p, int value, std::size_t bytes, cudaStream_t stream) {
  if (!handle_ok(stream)) return ret(cudaErrorInvalidResourceHandle);
  return cudaMemset(p, value, bytes);
}

cudaError_t cudaStreamCreate(cudaStream_t* s) { return cudaStreamCreateWithFlags(s, cudaStreamDefault); }

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned) {
  if (!s) return ret(cudaErrorInvalidValue);
  *s = new CUstream_st{t_device};
  std::lock_guard<std::mutex> lock(g_handles_mu);
  g_handles.insert(*s);
  return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t s) {
  std::lock_guard<std::mutex> lock(g_handles_mu);
  if (!s || !g_handles.erase(s)) return ret(cudaErrorInvalidResourceHandle);
  delete s;
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t s) {
  return handle_ok(s) ? cudaSuccess : ret(cudaErrorInvalidResourceHandle);
}

cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned) {
  return handle_ok(s) && e && handle_ok(e) ? cudaSuccess : ret(cudaErrorInvalidResourceHandle);
}

cudaError_t cudaEventCreate(cudaEvent_t* e) { return cudaEventCreateWithFlags(e, cudaEventDefault); }

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned) {
  if (!e) return ret(cudaErrorInvalidValue);
  *e = new CUevent_st{std::chrono::steady_clock::now()};
  std::lock_guard<std::mutex> lock(g_handles_mu);
  g_handles.insert(*e);
  return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t e) {
  std::lock_guard<std::mutex> lock(g_handles_mu);
  if (!e || !g_handles.erase(e)) return ret(cudaErrorInvalidResourceHandle);
  delete e;
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
  if (!e || !handle_ok(e) || !handle_ok(s)) return ret(cudaErrorInvalidResourceHandle);
  e->when = std::chrono::steady_clock::now();
  return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t e) {
  return e && handle_ok(e) ? cudaSuccess : ret(cudaErrorInvalidResourceHandle);
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  if (!ms || !start || !end) return ret(cudaErrorInvalidValue);
  *ms = std::chrono::duration<float, std::milli>(end->when - start->when).count();
  return cudaSuccess;
}

cudaError_t cudaFuncSetAttribute(const void* func, cudaFuncAttribute attr, int value) {
  if (!func) return ret(cudaErrorInvalidValue);
  if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize) {
    if (value < 0 || value > 232448) {
      std::fprintf(stderr, "mlasim-emu: cudaFuncSetAttribute: %d bytes of dynamic shared memory exceed the 232448 "
                           "an H100/H200 block may opt in to\n", value);
      return ret(cudaErrorInvalidValue);
    }
    set_max_dynamic_smem(func, value);
  }
  return cudaSuccess;
}
