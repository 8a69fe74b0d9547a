// Fibers handing the worker to each other, and the barriers (__syncthreads, bar.sync) of the SIMT
// emulator (see simt.h).
#include "emu/simt_worker.h"

#include <cstdlib>
#include <string>

namespace mlasim::emu {
namespace detail {

bool runnable(const Worker& w, const Thread& t) {
  if (t.done) return false;
  if (t.wait == Wait::kBarrier) return w.barriers[t.wait_obj].gen != t.wait_gen;
  if (t.wait == Wait::kWarp) return w.warps[static_cast<std::size_t>(t.wait_obj)].gen != t.wait_gen;
  return true;
}

bool reverse_order() {
  static const bool rev = [] {
    const char* e = std::getenv("MLASIM_EMU_ORDER");
    return e && std::string(e) == "reverse";
  }();
  return rev;
}

// The current fiber cannot go on (it waits or finished): hand the worker straight to the next
// runnable fiber in round-robin order, or back to the scheduler when there is none (block done, or
// deadlock). Returns when some fiber hands control back to this one.
void hand_off(Worker& w) {
  Thread* const self = w.cur;
  const int n = w.launch->nthreads;
  const int step = reverse_order() ? n - 1 : 1;  // (i + n − 1) % n walks backwards
  for (int k = 1; k <= n; ++k) {
    Thread& t = w.threads[static_cast<std::size_t>((self->linear + static_cast<long long>(k) * step) % n)];
    if (!runnable(w, t)) continue;
    t.wait = Wait::kNone;
    if (&t == self) return;
    w.cur = &t;
    threadIdx = t.tid;
    fiber_switch(self->ctx, t.ctx);
    return;
  }
  fiber_switch(self->ctx, w.sched);
}

void block_on(Worker& w, Wait kind, int obj, std::uint64_t gen) {
  Thread& t = *w.cur;
  t.wait = kind;
  t.wait_obj = obj;
  t.wait_gen = gen;
  hand_off(w);
}

// __syncthreads completes when every live thread arrived; it also ends a racecheck epoch.
bool release_barrier0_if_complete(Worker& w) {
  Barrier& b = w.barriers[0];
  if (b.arrived == 0 || b.arrived < w.live) return false;
  b.arrived = 0;
  ++b.gen;
  ++w.epoch;
  return true;
}

}  // namespace detail

using namespace detail;

void syncthreads() {
  Worker& w = cur_worker("__syncthreads");
  Barrier& b = w.barriers[0];
  const std::uint64_t gen = b.gen;
  ++b.arrived;
  if (!release_barrier0_if_complete(w)) block_on(w, Wait::kBarrier, 0, gen);
}

void named_barrier(int id, int count) {
  Worker& w = cur_worker("bar.sync");
  if (id < 0 || id > 15) fail("bar.sync: barrier id outside 0..15");
  if (count <= 0 || count % 32 != 0 || count > w.launch->nthreads)
    fail("bar.sync: thread count must be a positive multiple of 32, at most the block size");
  Barrier& b = w.barriers[id];
  if (b.arrived == 0) {
    b.expected = count;
  } else if (b.expected != count) {
    fail("bar.sync: threads arrive at one barrier with different thread counts");
  }
  const std::uint64_t gen = b.gen;
  if (++b.arrived >= b.expected) {
    b.arrived = 0;
    ++b.gen;
    return;
  }
  block_on(w, Wait::kBarrier, id, gen);
}

}  // namespace mlasim::emu
