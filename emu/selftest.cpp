// Self-test of the SIMT emulator. `mlasim_emu_selftest` runs the semantic checks (each instruction
// against its plain definition); `mlasim_emu_selftest --expect-abort NAME` runs one kernel with a
// defect the emulator must report (ctest matches the report: see CMakeLists.txt).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "attention/cuda/launch.cuh"
#include "attention/cuda/ptx.cuh"

namespace {

using mlasim::ptx::cp_async_16;
using mlasim::ptx::cp_async_commit;
using mlasim::ptx::cp_async_wait;
using mlasim::ptx::ldmatrix_x4;
using mlasim::ptx::ldmatrix_x4_trans;
using mlasim::ptx::mma_bf16_16816;
using mlasim::ptx::smem_u32;

int g_failures = 0;
void expect(bool ok, const char* what) {
  if (!ok) {
    std::printf("  FAIL %s\n", what);
    ++g_failures;
  }
}

template <class T>
T* to_device(const std::vector<T>& h) {
  T* d = nullptr;
  cudaMalloc(&d, h.size() * sizeof(T));
  cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice);
  return d;
}
template <class T>
std::vector<T> to_host(const T* d, std::size_t n) {
  std::vector<T> h(n);
  cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost);
  return h;
}

// --- mma.m16n8k16: each lane gathers its fragments by the PTX ISA table, the warp multiplies ------
__global__ void mma_kernel(const __nv_bfloat16* a, const __nv_bfloat16* b, const float* c, float* d) {
  const int lane = threadIdx.x, g = lane / 4, t = lane % 4;
  auto pack = [](__nv_bfloat16 lo, __nv_bfloat16 hi) {
    return static_cast<std::uint32_t>(lo.__x) | (static_cast<std::uint32_t>(hi.__x) << 16);
  };
  const auto A = [&](int r, int k) { return a[r * 16 + k]; };  // row-major 16x16
  const auto B = [&](int k, int n) { return b[k * 8 + n]; };   // row-major 16x8
  const std::uint32_t af[4] = {pack(A(g, 2 * t), A(g, 2 * t + 1)), pack(A(g + 8, 2 * t), A(g + 8, 2 * t + 1)),
                               pack(A(g, 2 * t + 8), A(g, 2 * t + 9)), pack(A(g + 8, 2 * t + 8), A(g + 8, 2 * t + 9))};
  const std::uint32_t b0 = pack(B(2 * t, g), B(2 * t + 1, g)), b1 = pack(B(2 * t + 8, g), B(2 * t + 9, g));
  float acc[4] = {c[g * 8 + 2 * t], c[g * 8 + 2 * t + 1], c[(g + 8) * 8 + 2 * t], c[(g + 8) * 8 + 2 * t + 1]};
  mma_bf16_16816(acc, af, b0, b1);
  d[g * 8 + 2 * t] = acc[0], d[g * 8 + 2 * t + 1] = acc[1];
  d[(g + 8) * 8 + 2 * t] = acc[2], d[(g + 8) * 8 + 2 * t + 1] = acc[3];
}

void test_mma() {
  std::vector<__nv_bfloat16> a(256), b(128);
  std::vector<float> c(128);
  for (int i = 0; i < 256; ++i) a[i] = __nv_bfloat16(static_cast<float>((i * 37) % 23 - 11) / 8.f);
  for (int i = 0; i < 128; ++i) b[i] = __nv_bfloat16(static_cast<float>((i * 53) % 19 - 9) / 4.f);
  for (int i = 0; i < 128; ++i) c[i] = static_cast<float>(i % 7) - 3.f;
  auto *da = to_device(a), *db = to_device(b);
  auto* dc = to_device(c);
  float* dd = nullptr;
  cudaMalloc(&dd, 128 * sizeof(float));
  MLASIM_LAUNCH(1, 32, 0, nullptr, mma_kernel)(da, db, dc, dd);
  const auto d = to_host(dd, 128);
  bool ok = cudaGetLastError() == cudaSuccess;
  for (int r = 0; r < 16; ++r)
    for (int n = 0; n < 8; ++n) {
      double s = c[r * 8 + n];
      for (int k = 0; k < 16; ++k) s += static_cast<double>(static_cast<float>(a[r * 16 + k])) * static_cast<float>(b[k * 8 + n]);
      ok = ok && d[r * 8 + n] == static_cast<float>(s);  // small dyadic values: exact
    }
  expect(ok, "mma.m16n8k16 D = A·B + C with the PTX fragment layout");
  cudaFree(da), cudaFree(db), cudaFree(dc), cudaFree(dd);
}

// --- ldmatrix .x4 (plain, .trans): register j of lane l against the PTX definition -------------
__global__ void ldmatrix_kernel(std::uint32_t* out, bool trans) {
  MLASIM_DYNAMIC_SMEM(smem);
  auto* m = reinterpret_cast<std::uint16_t*>(smem);  // 4 matrices of 8x8, matrix j at rows 8j..8j+7
  for (int i = threadIdx.x; i < 256; i += 32) m[i] = static_cast<std::uint16_t>(i);
  __syncwarp();
  const int lane = threadIdx.x;
  std::uint32_t r[4];
  const std::uint32_t addr = smem_u32(m + lane * 8);  // lane l: row l % 8 of matrix l / 8
  if (trans)
    ldmatrix_x4_trans(r, addr);
  else
    ldmatrix_x4(r, addr);
  for (int j = 0; j < 4; ++j) out[lane * 4 + j] = r[j];
}

void test_ldmatrix() {
  std::uint32_t* d = nullptr;
  cudaMalloc(&d, 128 * sizeof(std::uint32_t));
  for (bool trans : {false, true}) {
    MLASIM_LAUNCH(1, 32, 512, nullptr, ldmatrix_kernel)(d, trans);
    const auto h = to_host(d, 128);
    bool ok = true;
    for (int l = 0; l < 32; ++l)
      for (int j = 0; j < 4; ++j) {
        const int row = l / 4, col = 2 * (l % 4);
        const auto at = [&](int r, int c) { return static_cast<std::uint32_t>(j * 64 + r * 8 + c); };
        const std::uint32_t lo = trans ? at(col, row) : at(row, col), hi = trans ? at(col + 1, row) : at(row, col + 1);
        ok = ok && h[l * 4 + j] == (lo | hi << 16);
      }
    expect(ok, trans ? "ldmatrix.x4.trans fragment layout" : "ldmatrix.x4 fragment layout");
  }
  cudaFree(d);
}

// --- shuffles ------------------------------------------------------------------------------------
__global__ void shfl_kernel(int* out) {
  const int l = threadIdx.x;
  out[l] = __shfl_xor_sync(0xffffffffu, l * 10, 5);
  out[32 + l] = __shfl_sync(0xffffffffu, l * 10, (l * 7) % 32);
  out[64 + l] = __shfl_down_sync(0xffffffffu, l * 10, 3, 8);
  out[96 + l] = __shfl_up_sync(0xffffffffu, l * 10, 2);
}

void test_shfl() {
  int* d = nullptr;
  cudaMalloc(&d, 128 * sizeof(int));
  MLASIM_LAUNCH(1, 32, 0, nullptr, shfl_kernel)(d);
  const auto h = to_host(d, 128);
  bool ok = true;
  for (int l = 0; l < 32; ++l) {
    ok = ok && h[l] == (l ^ 5) * 10 && h[32 + l] == ((l * 7) % 32) * 10;
    ok = ok && h[64 + l] == ((l % 8) + 3 < 8 ? l + 3 : l) * 10 && h[96 + l] == (l >= 2 ? l - 2 : l) * 10;
  }
  expect(ok, "__shfl_xor_sync / __shfl_sync / __shfl_down_sync (width 8) / __shfl_up_sync");
  cudaFree(d);
}

// --- cp.async lands at wait_group, zero-fills, and barriers order the block ------------------------
__global__ void cp_async_kernel(const std::uint32_t* src, std::uint32_t* out) {
  MLASIM_DYNAMIC_SMEM(smem);
  auto* s = reinterpret_cast<std::uint32_t*>(smem);
  const int t = threadIdx.x;  // 64 threads, 16 B each
  cp_async_16(smem_u32(s + 4 * t), src + 4 * t, t % 2 == 0 ? 16 : 8);
  cp_async_commit();
  out[t] = s[4 * t];  // before the wait: still the 0xff fill of fresh shared memory
  cp_async_wait<0>();
  __syncthreads();
  const int peer = 63 - t;  // another warp's chunk, visible after the barrier
  out[64 + t] = s[4 * peer];
  out[128 + t] = s[4 * peer + 3];  // bytes 12..15: zero-filled for the 8-byte copies
}

void test_cp_async() {
  std::vector<std::uint32_t> src(256);
  for (int i = 0; i < 256; ++i) src[i] = 1000u + static_cast<std::uint32_t>(i);
  auto* d_src = to_device(src);
  std::uint32_t* d_out = nullptr;
  cudaMalloc(&d_out, 192 * sizeof(std::uint32_t));
  MLASIM_LAUNCH(1, 64, 1024, nullptr, cp_async_kernel)(d_src, d_out);
  const auto h = to_host(d_out, 192);
  bool early = true, late = true;
  for (int t = 0; t < 64; ++t) {
    const int peer = 63 - t;
    early = early && h[t] == 0xffffffffu;
    late = late && h[64 + t] == 1000u + 4u * peer && h[128 + t] == (peer % 2 == 0 ? 1000u + 4u * peer + 3u : 0u);
  }
  expect(early, "cp.async data is not visible before cp.async.wait_group");
  expect(late, "cp.async lands at wait_group with zero fill past src-size; __syncthreads publishes it");
  cudaFree(d_src), cudaFree(d_out);
}

// --- MLASIM_EMU_ORDER: a read left unordered by a missing barrier sees the write in one order only --
__global__ void unordered_kernel(std::uint32_t* out) {
  MLASIM_DYNAMIC_SMEM(smem);
  auto* s = reinterpret_cast<std::uint32_t*>(smem);
  if (threadIdx.x == 0) s[0] = 7u;
  if (threadIdx.x == 32) out[0] = s[0];  // no __syncthreads between the write and this read
}

void test_order() {
  const char* e = std::getenv("MLASIM_EMU_ORDER");
  const bool reverse = e && std::string(e) == "reverse";
  std::uint32_t* d = nullptr;
  cudaMalloc(&d, 4);
  MLASIM_LAUNCH(1, 64, 16, nullptr, unordered_kernel)(d);
  const auto h = to_host(d, 1);
  expect(h[0] == (reverse ? 0xffffffffu : 7u),
         reverse ? "reverse order: warp 1 reads before warp 0 writes" : "forward order: warp 0 writes first");
  cudaFree(d);
}

// --- launch configuration checks (errors, not aborts) -----------------------------------------
__global__ void empty_kernel() {}

void test_launch_checks() {
  MLASIM_LAUNCH(1, 32, 64 * 1024, nullptr, empty_kernel)();
  expect(cudaGetLastError() == cudaErrorInvalidValue, "> 48 KiB dynamic shared memory without the opt-in is refused");
  cudaFuncSetAttribute(empty_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024);
  MLASIM_LAUNCH(1, 32, 64 * 1024, nullptr, empty_kernel)();
  expect(cudaGetLastError() == cudaSuccess, "the opt-in allows it");
  expect(cudaFuncSetAttribute(empty_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 300000) ==
             cudaErrorInvalidValue,
         "an opt-in past 227 KiB is refused");
  MLASIM_LAUNCH(1, 2048, 0, nullptr, empty_kernel)();
  expect(cudaGetLastError() == cudaErrorInvalidConfiguration, "2048 threads per block are refused");
  float* d = nullptr;
  cudaMalloc(&d, 64);
  float h[32] = {};
  expect(cudaMemcpy(d, h, 128, cudaMemcpyHostToDevice) == cudaErrorInvalidValue, "a copy past an allocation is refused");
  (void)cudaGetLastError();
  cudaFree(d);
}

// --- defects the emulator must report (each aborts the process) ------------------------------------
__global__ void exited_lane_kernel(float* out) {
  if (threadIdx.x == 3) return;
  out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, 1.f, 1);
}
__global__ void divergent_kernel(float* out) {
  if (threadIdx.x < 16)
    out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, 1.f, 1);
  else
    __syncwarp();
}
__global__ void missing_barrier_kernel(float* out) {
  if (threadIdx.x >= 64) mlasim::ptx::named_barrier_sync(1, 128);  // only 64 of the 128 ever arrive
  out[threadIdx.x % 64] = 1.f;
}
__global__ void cp_async_oob_kernel(const std::uint32_t* src) {
  MLASIM_DYNAMIC_SMEM(smem);
  cp_async_16(smem_u32(smem), src + 128, 16);  // one chunk past a 512-byte allocation
  cp_async_commit();
  cp_async_wait<0>();
}
__global__ void global_oob_kernel(const float* src, float* out) { out[0] = src[128 + threadIdx.x]; }  // 512 B allocation
// Warp 0 fills 32 chunks with cp.async; warp 1 reads them with ldmatrix without a __syncthreads.
__global__ void race_raw_kernel(const std::uint32_t* src, std::uint32_t* out) {
  MLASIM_DYNAMIC_SMEM(smem);
  const int t = threadIdx.x, lane = t % 32;
  if (t < 32) {
    cp_async_16(smem_u32(smem + 16 * lane), src + 4 * lane, 16);
    cp_async_commit();
    cp_async_wait<0>();
  } else {
    std::uint32_t r[4];
    ldmatrix_x4(r, smem_u32(smem + 16 * lane));
    out[lane] = r[0];
  }
}
// Warp 0 reads 32 chunks with ldmatrix; warp 1 overwrites one with cp.async without a __syncthreads.
__global__ void race_war_kernel(const std::uint32_t* src, std::uint32_t* out) {
  MLASIM_DYNAMIC_SMEM(smem);
  const int t = threadIdx.x, lane = t % 32;
  if (t < 32) {
    std::uint32_t r[4];
    ldmatrix_x4(r, smem_u32(smem + 16 * lane));
    out[lane] = r[0];
  } else if (lane == 0) {
    cp_async_16(smem_u32(smem), src, 16);
    cp_async_commit();
    cp_async_wait<0>();
  }
}
__global__ void trap_kernel() {
  if (threadIdx.x == 5) __trap();
}

int run_case(const std::string& name) {
  float* d = nullptr;
  cudaMalloc(&d, 512);
  if (name == "exited_lane") MLASIM_LAUNCH(1, 32, 0, nullptr, exited_lane_kernel)(d);
  else if (name == "divergent") MLASIM_LAUNCH(1, 32, 0, nullptr, divergent_kernel)(d);
  else if (name == "missing_barrier") MLASIM_LAUNCH(1, 128, 0, nullptr, missing_barrier_kernel)(d);
  else if (name == "cp_async_oob") MLASIM_LAUNCH(1, 32, 16, nullptr, cp_async_oob_kernel)(reinterpret_cast<std::uint32_t*>(d));
  else if (name == "global_oob") MLASIM_LAUNCH(1, 32, 0, nullptr, global_oob_kernel)(d, d);
  else if (name == "trap") MLASIM_LAUNCH(1, 32, 0, nullptr, trap_kernel)();
  else if (name == "race_raw") MLASIM_LAUNCH(1, 64, 512, nullptr, race_raw_kernel)(reinterpret_cast<std::uint32_t*>(d), reinterpret_cast<std::uint32_t*>(d));
  else if (name == "race_war") MLASIM_LAUNCH(1, 64, 512, nullptr, race_war_kernel)(reinterpret_cast<std::uint32_t*>(d), reinterpret_cast<std::uint32_t*>(d));
  else {
    std::printf("unknown case %s\n", name.c_str());
    return 2;
  }
  std::printf("the emulator did not report the defect of %s\n", name.c_str());
  return 1;
}

// Runs the case in a child process; passes (0) when the child died of a signal, the report on stderr.
int run_expected_abort(const std::string& name) {
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(1, 2);
    _exit(run_case(name));
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) {
    std::printf("the case died of signal %d, as it must\n", WTERMSIG(status));
    return 0;
  }
  std::printf("the case exited with %d instead of being stopped\n", WEXITSTATUS(status));
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--expect-abort") return run_expected_abort(argv[2]);
  test_mma();
  test_ldmatrix();
  test_shfl();
  test_cp_async();
  test_launch_checks();
  test_order();
  std::printf("%s: %d failure(s)\n", g_failures ? "FAIL" : "PASS", g_failures);
  return g_failures ? 1 : 0;
}
