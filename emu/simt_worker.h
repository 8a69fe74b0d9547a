// The SIMT emulator's state shared by its phases (simt_launch, simt_sync, simt_warp, simt_memory):
// a worker runs one block at a time, each CUDA thread a fiber; warps meet in collectives. Internal.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <vector>

#include "cuda_runtime.h"
#include "emu/fiber.h"
#include "emu/simt.h"

namespace mlasim::emu::detail {

enum class Wait : unsigned char { kNone, kBarrier, kWarp };
enum class Op : unsigned char { kNone, kShfl, kLdmatrix, kLdmatrixTrans, kMma, kSyncwarp };

const char* op_name(Op op);

struct CpCopy {
  std::uint32_t dst;
  const void* src;
  int bytes;
};

struct Thread {
  FiberContext ctx;
  uint3 tid{};
  int linear = 0;
  bool done = false;
  Wait wait = Wait::kNone;
  int wait_obj = 0;
  std::uint64_t wait_gen = 0;
  std::vector<CpCopy> pending;                 // issued, not committed
  std::deque<std::vector<CpCopy>> groups;      // committed, not yet landed
};

struct Barrier {
  int arrived = 0;
  int expected = 0;
  std::uint64_t gen = 0;
};

struct WarpState {
  int arrived = 0;
  int lanes = 32;
  std::uint64_t gen = 0;
  Op op = Op::kNone;
  alignas(16) unsigned char in[32][48];
  alignas(16) unsigned char out[32][16];
};

// Racecheck state of one 16-byte chunk of shared memory, for the accesses the emulator sees
// (cp.async writes, ldmatrix reads); an epoch ends at every block-wide barrier.
struct Chunk {
  std::uint32_t write_epoch = 0, read_epoch = 0;
  int writer_warp = -1, reader_warp = -1;  // reader -2: several warps
  int in_flight = 0;                        // cp.async copies issued, not landed
};

struct LaunchInfo {
  const char* name = "";
  KernelBody body = nullptr;
  const void* ctx = nullptr;
  dim3 grid, block;
  std::size_t smem = 0;
  int nthreads = 0;
};

struct Worker {
  std::vector<FiberStack> stacks;
  std::vector<Thread> threads;
  std::vector<WarpState> warps;
  Barrier barriers[16];
  std::unique_ptr<unsigned char[]> smem_store;
  unsigned char* smem = nullptr;
  std::size_t smem_cap = 0, smem_bytes = 0;
  FiberContext sched;
  Thread* cur = nullptr;
  int live = 0;
  std::vector<Chunk> chunks;
  std::uint32_t epoch = 1;
  const LaunchInfo* launch = nullptr;
  uint3 block{};
  std::vector<unsigned char> altstack;

  ~Worker() {
    for (auto& s : stacks) fiber_stack_free(s);
    for (auto& t : threads) fiber_context_release(t.ctx);
    fiber_context_release(sched);
  }
};

// The worker running on this OS thread (null outside a launch).
extern thread_local Worker* tw;

// The current worker, or abort naming `what` when called outside a kernel.
Worker& cur_worker(const char* what);
// "mlasim-emu: kernel K, block (..), thread (..)" for the fiber running now.
void where_prefix(char* buf, std::size_t n);
// MLASIM_EMU_ORDER=reverse: fibers are run in reverse order (a race shows up either way).
bool reverse_order();
// The current fiber waits on `kind` `obj` until its generation moves past `gen`.
void block_on(Worker& w, Wait kind, int obj, std::uint64_t gen);
// The current fiber cannot go on: the next runnable fiber, or the scheduler, gets the worker.
void hand_off(Worker& w);
// __syncthreads completes when every live thread arrived; it also ends a racecheck epoch.
bool release_barrier0_if_complete(Worker& w);
// A committed cp.async group lands in shared memory (racecheck: written by `warp`).
void perform(Worker& w, const std::vector<CpCopy>& g, int warp);
// A 16-byte shared-memory operand at `addr`, or fail naming `what`.
const unsigned char* smem_operand(Worker& w, std::uint32_t addr, const char* what);
void check_full_mask(unsigned mask);

// Warp collective: deposit this lane's operands; the last lane to arrive computes every lane's result.
template <class Compute>
void warp_collective(Op op, const void* in, std::size_t in_bytes, void* out, std::size_t out_bytes,
                     Compute&& compute) {
  Worker& w = cur_worker(op_name(op));
  Thread& t = *w.cur;
  const int warp = t.linear / 32, lane = t.linear % 32;
  WarpState& ws = w.warps[static_cast<std::size_t>(warp)];
  if (ws.lanes != 32) fail("a full-warp collective in a warp with fewer than 32 threads");
  if (ws.arrived == 0) {
    ws.op = op;
  } else if (ws.op != op) {
    char msg[160];
    std::snprintf(msg, sizeof msg, "divergent warp: this lane is in %s while %d other lane(s) wait in %s", op_name(op),
                  ws.arrived, op_name(ws.op));
    fail(msg);
  }
  std::memcpy(ws.in[lane], in, in_bytes);
  if (++ws.arrived == 32) {
    compute(ws);
    ws.arrived = 0;
    ++ws.gen;
  } else {
    block_on(w, Wait::kWarp, warp, ws.gen);
  }
  if (out_bytes) std::memcpy(out, ws.out[lane], out_bytes);
}

}  // namespace mlasim::emu::detail
