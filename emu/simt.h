// mlasim's host SIMT emulator: runs the project's CUDA kernels on the CPU so that CI (which has no
// GPU) executes their indexing, tiling, masking and synchronisation, not only compiles them.
//
// Model. A launch runs its blocks one after another on a few worker threads; inside a block every
// CUDA thread is a fiber (its own stack, a hand-written x86-64 context switch). Fibers run until
// they reach a synchronisation point:
//  - __syncthreads / bar.sync id, count: the barrier releases when every live thread (id 0) or
//    `count` threads (id > 0) arrived;
//  - a warp collective (shuffle, ldmatrix, mma.sync): the 32 lanes deposit their operands, the last
//    one to arrive computes the result for all, as the PTX ISA defines it (fragment layouts of
//    mma.m16n8k16 .bf16, ldmatrix .x4 and .trans), every lane must be in the same collective;
//  - cp.async: copies are queued per thread and land only at cp.async.wait_group (the latest moment
//    the hardware may complete them), so a read of a stage before its wait sees stale data.
// Fibers hand over to each other in thread order; MLASIM_EMU_ORDER=reverse walks the threads backwards
// instead, so a read that a missing barrier leaves unordered after another warp's write sees the old
// value in one of the two orders (the GPU tests run both).
// Racecheck for the shared-memory accesses the emulator sees (cp.async writes, ldmatrix reads), per
// 16-byte chunk, with epochs ended by block-wide barriers: an ldmatrix of a chunk with a cp.async in
// flight or filled by another warp in the same epoch (read after write), and a cp.async into a chunk
// another warp read in the same epoch (write after read), are reported. Plain loads and stores of
// shared memory are not seen.
// A barrier or collective that can never complete (a lane exited, lanes in different collectives,
// counts that disagree) is reported as a deadlock naming the kernel, block and threads; so are
// cp.async / ldmatrix addresses outside the block's shared memory or outside every device
// allocation, misaligned operands and __trap(). Device allocations sit between guard pages and are
// filled with 0xFF bytes (NaN in bf16 and fp32), as is shared memory at block start, so reading
// memory nobody wrote shows up as NaN in the results.
//
// Not modelled: timing, occupancy, registers, bank conflicts, memory ordering between blocks, the
// asynchronous overlap of streams (every call completes before it returns).
#pragma once

#include <cstddef>
#include <cstdint>

struct dim3;

namespace mlasim::emu {

// --- launching -------------------------------------------------------------------------------
using KernelBody = void (*)(const void* ctx);
// Runs `body(ctx)` as every thread of every block. Checks the configuration as the runtime does
// (block ≤ 1024 threads, grid limits, dynamic shared memory against the kernel's opt-in); returns a
// cudaError_t value.
int launch_kernel(const char* name, const void* kernel, const dim3& grid, const dim3& block, std::size_t smem,
                  KernelBody body, const void* ctx);
void set_max_dynamic_smem(const void* kernel, int bytes);

// --- inside a kernel -------------------------------------------------------------------------
unsigned char* dynamic_smem();
std::uint32_t shared_offset(const void* p);  // __cvta_generic_to_shared
void syncthreads();
void syncwarp(unsigned mask);
void named_barrier(int id, int count);
[[noreturn]] void trap();
[[noreturn]] void fail(const char* what);

enum class Shfl { kIdx, kUp, kDown, kXor };
std::uint64_t shfl(unsigned mask, std::uint64_t bits, Shfl kind, int arg, int width);

void cp_async_16(std::uint32_t dst, const void* src, int src_bytes);
void cp_async_commit();
void cp_async_wait(int n);

void ldmatrix_x4(std::uint32_t (&r)[4], std::uint32_t addr, bool trans);
void mma_m16n8k16_bf16(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1);

// --- device memory (runtime.cpp) -------------------------------------------------------------
void* device_alloc(std::size_t bytes);
bool device_free(void* p);
// True when [p, p + bytes) lies inside one live allocation.
bool device_range_ok(const void* p, std::size_t bytes);

}  // namespace mlasim::emu
