// Block scheduler, barriers, warp collectives and cp.async of the SIMT emulator (see simt.h).
#include "emu/simt.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "cuda_runtime.h"
#include "emu/fiber.h"

namespace mlasim::emu {
namespace {

constexpr std::size_t kStackBytes = 256 * 1024;
constexpr std::size_t kDefaultSmemLimit = 48 * 1024;
constexpr std::size_t kMaxSmemOptin = 232448;  // H100 / H200: 227 KiB per block
constexpr int kMaxThreads = 1024;

enum class Wait : unsigned char { kNone, kBarrier, kWarp };
enum class Op : unsigned char { kNone, kShfl, kLdmatrix, kLdmatrixTrans, kMma, kSyncwarp };

const char* op_name(Op op) {
  switch (op) {
    case Op::kShfl: return "__shfl_*_sync";
    case Op::kLdmatrix: return "ldmatrix.x4";
    case Op::kLdmatrixTrans: return "ldmatrix.x4.trans";
    case Op::kMma: return "mma.sync.m16n8k16";
    case Op::kSyncwarp: return "__syncwarp";
    default: return "?";
  }
}

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

thread_local Worker* tw = nullptr;

std::mutex g_attr_mu;
std::unordered_map<const void*, int> g_smem_optin;
std::mutex g_pool_mu;
std::vector<std::unique_ptr<Worker>> g_pool;  // reused across launches (stacks stay mapped)

Worker& cur_worker(const char* what) {
  if (!tw || !tw->cur) {
    std::fprintf(stderr, "mlasim-emu: %s called outside a kernel\n", what);
    std::abort();
  }
  return *tw;
}

void where_prefix(char* buf, std::size_t n) {
  if (tw && tw->launch && tw->cur)
    std::snprintf(buf, n, "mlasim-emu: kernel %s, block (%u,%u,%u), thread (%u,%u,%u)", tw->launch->name, tw->block.x,
                  tw->block.y, tw->block.z, tw->cur->tid.x, tw->cur->tid.y, tw->cur->tid.z);
  else
    std::snprintf(buf, n, "mlasim-emu");
}

void on_segv(int sig, siginfo_t* info, void*) {
  char buf[512];
  where_prefix(buf, sizeof buf);
  char msg[700];
  const int len = std::snprintf(msg, sizeof msg,
                                "%s: invalid memory access at %p (outside every device allocation, or a fiber "
                                "stack overflow)\n",
                                buf, info ? info->si_addr : nullptr);
  if (len > 0) (void)!write(2, msg, static_cast<std::size_t>(len));
  signal(sig, SIG_DFL);
  raise(sig);
}

void install_segv_reporter(Worker& w) {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_sigaction = &on_segv;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGSEGV, &sa, nullptr);
    sigaction(SIGBUS, &sa, nullptr);
  });
  if (w.altstack.empty()) w.altstack.resize(64 * 1024);
  stack_t ss{};
  ss.ss_sp = w.altstack.data();
  ss.ss_size = w.altstack.size();
  sigaltstack(&ss, nullptr);
}

void perform(Worker& w, const std::vector<CpCopy>& g, int warp) {
  for (const CpCopy& c : g) {
    Chunk& ch = w.chunks[c.dst / 16];
    --ch.in_flight;
    ch.write_epoch = w.epoch;
    ch.writer_warp = warp;
    if (c.bytes > 0) std::memcpy(w.smem + c.dst, c.src, static_cast<std::size_t>(c.bytes));
    if (c.bytes < 16) std::memset(w.smem + c.dst + c.bytes, 0, static_cast<std::size_t>(16 - c.bytes));
  }
}

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

void thread_entry(void* arg) {
  auto* t = static_cast<Thread*>(arg);
  Worker& w = *tw;
  w.launch->body(w.launch->ctx);
  // Copies still in flight land (nobody can observe them any more).
  for (auto& g : t->groups) perform(w, g, t->linear / 32);
  perform(w, t->pending, t->linear / 32);
  t->groups.clear();
  t->pending.clear();
  t->done = true;
  --w.live;
  release_barrier0_if_complete(w);
  hand_off(w);
  std::abort();  // a finished fiber is never resumed
}

[[noreturn]] void deadlock(Worker& w) {
  std::fprintf(stderr, "mlasim-emu: kernel %s, block (%u,%u,%u): deadlock, no thread can proceed\n", w.launch->name,
               w.block.x, w.block.y, w.block.z);
  for (std::size_t id = 0; id < 16; ++id) {
    const Barrier& b = w.barriers[id];
    if (b.arrived > 0)
      std::fprintf(stderr, "  barrier %zu: %d thread(s) arrived, waiting for %d%s\n", id, b.arrived,
                   id == 0 ? w.live : b.expected, id == 0 ? " (every live thread)" : "");
  }
  for (std::size_t i = 0; i < w.warps.size(); ++i) {
    const WarpState& ws = w.warps[i];
    if (ws.arrived == 0) continue;
    int exited = 0;
    for (int l = 0; l < ws.lanes; ++l) exited += w.threads[i * 32 + static_cast<std::size_t>(l)].done ? 1 : 0;
    std::fprintf(stderr, "  warp %zu: %d of %d lanes wait in %s; %d lane(s) exited, the others are elsewhere\n", i,
                 ws.arrived, ws.lanes, op_name(ws.op), exited);
  }
  std::abort();
}

void run_block(Worker& w, uint3 bid) {
  const LaunchInfo& L = *w.launch;
  w.block = bid;
  blockIdx = bid;
  std::memset(w.smem, 0xff, w.smem_bytes);  // uninitialised shared memory reads as NaN
  w.chunks.assign(w.smem_bytes / 16 + 1, Chunk{});
  w.epoch = 1;
  for (Barrier& b : w.barriers) b = Barrier{};
  for (std::size_t i = 0; i < w.warps.size(); ++i) {
    WarpState& ws = w.warps[i];
    ws.arrived = 0;
    ws.op = Op::kNone;
    ws.lanes = std::min(32, L.nthreads - static_cast<int>(i) * 32);
  }
  for (int i = 0; i < L.nthreads; ++i) {
    Thread& t = w.threads[static_cast<std::size_t>(i)];
    t.linear = i;
    const unsigned bx = L.block.x, by = L.block.y;
    t.tid = {static_cast<unsigned>(i) % bx, static_cast<unsigned>(i) / bx % by, static_cast<unsigned>(i) / (bx * by)};
    t.done = false;
    t.wait = Wait::kNone;
    t.pending.clear();
    t.groups.clear();
    fiber_init(t.ctx, w.stacks[static_cast<std::size_t>(i)], &thread_entry, &t);
  }
  w.live = L.nthreads;
  // Fibers hand control to each other (hand_off); the scheduler gets it back only when none can run.
  Thread& first = w.threads[reverse_order() ? static_cast<std::size_t>(L.nthreads - 1) : 0];
  w.cur = &first;
  threadIdx = first.tid;
  fiber_switch(w.sched, first.ctx);
  w.cur = nullptr;
  if (w.live > 0) deadlock(w);
}

void prepare_worker(Worker& w, const LaunchInfo& L) {
  w.launch = &L;
  while (w.stacks.size() < static_cast<std::size_t>(L.nthreads)) w.stacks.push_back(fiber_stack_alloc(kStackBytes));
  if (w.threads.size() < static_cast<std::size_t>(L.nthreads)) w.threads.resize(static_cast<std::size_t>(L.nthreads));
  w.warps.resize(static_cast<std::size_t>((L.nthreads + 31) / 32));
  const std::size_t want = std::max<std::size_t>(L.smem, 16);
  if (w.smem_cap < want) {
    w.smem_store = std::make_unique<unsigned char[]>(want + 128);
    w.smem = reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(w.smem_store.get()) + 127) &
                                              ~static_cast<std::uintptr_t>(127));
    w.smem_cap = want;
  }
  w.smem_bytes = L.smem;
  blockDim = L.block;
  gridDim = L.grid;
  install_segv_reporter(w);
}

int worker_count(long long blocks) {
  static const int configured = [] {
    const char* e = std::getenv("MLASIM_EMU_THREADS");
    int n = e ? std::atoi(e) : static_cast<int>(std::thread::hardware_concurrency());
    return std::clamp(n, 1, 64);
  }();
  return static_cast<int>(std::min<long long>(configured, blocks));
}

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

void check_full_mask(unsigned mask) {
  if (mask != 0xffffffffu) fail("partial warp masks are not emulated (every collective here uses 0xffffffff)");
}

const unsigned char* smem_operand(Worker& w, std::uint32_t addr, const char* what) {
  if (addr % 16 != 0 || static_cast<std::size_t>(addr) + 16 > w.smem_bytes) {
    char msg[200];
    std::snprintf(msg, sizeof msg, "%s: shared address %u is misaligned or past the %zu bytes of dynamic shared memory",
                  what, addr, w.smem_bytes);
    fail(msg);
  }
  return w.smem + addr;
}

}  // namespace

void set_max_dynamic_smem(const void* kernel, int bytes) {
  std::lock_guard<std::mutex> lock(g_attr_mu);
  g_smem_optin[kernel] = bytes;
}

int launch_kernel(const char* name, const void* kernel, const dim3& grid, const dim3& block, std::size_t smem,
                  KernelBody body, const void* ctx) {
  const long long nthreads = static_cast<long long>(block.x) * block.y * block.z;
  if (nthreads <= 0 || nthreads > kMaxThreads || block.z > 64) {
    std::fprintf(stderr, "mlasim-emu: launch of %s: block (%u,%u,%u) is not a valid block shape\n", name, block.x,
                 block.y, block.z);
    return cudaErrorInvalidConfiguration;
  }
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.y > 65535 || grid.z > 65535 || grid.x > 0x7fffffffu) {
    std::fprintf(stderr, "mlasim-emu: launch of %s: grid (%u,%u,%u) is not a valid grid shape\n", name, grid.x, grid.y,
                 grid.z);
    return cudaErrorInvalidConfiguration;
  }
  std::size_t limit = kDefaultSmemLimit;
  {
    std::lock_guard<std::mutex> lock(g_attr_mu);
    auto it = g_smem_optin.find(kernel);
    if (it != g_smem_optin.end()) limit = std::max<std::size_t>(limit, static_cast<std::size_t>(it->second));
  }
  if (smem > limit) {
    std::fprintf(stderr,
                 "mlasim-emu: launch of %s: %zu bytes of dynamic shared memory exceed the kernel's limit of %zu "
                 "(cudaFuncAttributeMaxDynamicSharedMemorySize)\n",
                 name, smem, limit);
    return cudaErrorInvalidValue;
  }
  const LaunchInfo L{name, body, ctx, grid, block, smem, static_cast<int>(nthreads)};
  const long long blocks = static_cast<long long>(grid.x) * grid.y * grid.z;
  const int nworkers = worker_count(blocks);
  std::vector<Worker*> workers;
  {
    std::lock_guard<std::mutex> lock(g_pool_mu);
    while (g_pool.size() < static_cast<std::size_t>(nworkers)) g_pool.push_back(std::make_unique<Worker>());
    for (int i = 0; i < nworkers; ++i) workers.push_back(g_pool[static_cast<std::size_t>(i)].get());
  }
  std::atomic<long long> next{0};
  auto work = [&](Worker* w) {
    Worker* saved = tw;
    const uint3 saved_block = blockIdx, saved_thread = threadIdx;
    const dim3 saved_bdim = blockDim, saved_gdim = gridDim;
    tw = w;
    prepare_worker(*w, L);
    for (long long b; (b = next.fetch_add(1)) < blocks;) {
      const auto ub = static_cast<unsigned long long>(b);
      run_block(*w, {static_cast<unsigned>(ub % grid.x), static_cast<unsigned>(ub / grid.x % grid.y),
                     static_cast<unsigned>(ub / (static_cast<unsigned long long>(grid.x) * grid.y))});
    }
    w->launch = nullptr;
    tw = saved;
    blockIdx = saved_block;
    threadIdx = saved_thread;
    blockDim = saved_bdim;
    gridDim = saved_gdim;
  };
  std::vector<std::thread> helpers;
  for (int i = 1; i < nworkers; ++i) helpers.emplace_back(work, workers[static_cast<std::size_t>(i)]);
  work(workers[0]);
  for (auto& h : helpers) h.join();
  return cudaSuccess;
}

unsigned char* dynamic_smem() { return cur_worker("dynamic shared memory").smem; }

std::uint32_t shared_offset(const void* p) {
  Worker& w = cur_worker("__cvta_generic_to_shared");
  const auto* c = static_cast<const unsigned char*>(p);
  if (c < w.smem || c > w.smem + w.smem_bytes)
    fail("__cvta_generic_to_shared of an address outside the block's dynamic shared memory");
  return static_cast<std::uint32_t>(c - w.smem);
}

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

void syncwarp(unsigned mask) {
  check_full_mask(mask);
  warp_collective(Op::kSyncwarp, &mask, sizeof mask, nullptr, 0, [](WarpState&) {});
}

void trap() { fail("__trap()"); }

void fail(const char* what) {
  char buf[512];
  where_prefix(buf, sizeof buf);
  std::fprintf(stderr, "%s: %s\n", buf, what);
  std::fflush(stderr);
  std::abort();
}

std::uint64_t shfl(unsigned mask, std::uint64_t bits, Shfl kind, int arg, int width) {
  check_full_mask(mask);
  if (width < 1 || width > 32 || (width & (width - 1)) != 0) fail("shuffle width must be a power of two up to 32");
  struct In {
    std::uint64_t bits;
    int kind, arg, width;
  } in{bits, static_cast<int>(kind), arg, width};
  std::uint64_t out = 0;
  warp_collective(Op::kShfl, &in, sizeof in, &out, sizeof out, [](WarpState& ws) {
    for (int l = 0; l < 32; ++l) {
      In x;
      std::memcpy(&x, ws.in[l], sizeof x);
      const int w = x.width, seg = l & ~(w - 1);
      int src = l;
      switch (static_cast<Shfl>(x.kind)) {
        case Shfl::kIdx: src = seg + (x.arg & (w - 1)); break;
        case Shfl::kUp: src = l - seg >= x.arg ? l - x.arg : l; break;
        case Shfl::kDown: src = l - seg + x.arg < w ? l + x.arg : l; break;
        case Shfl::kXor: src = l ^ x.arg; if (src < 0 || src > 31 || src >= seg + w) src = l; break;
      }
      In y;
      std::memcpy(&y, ws.in[src], sizeof y);
      std::memcpy(ws.out[l], &y.bits, sizeof y.bits);
    }
  });
  return out;
}

void cp_async_16(std::uint32_t dst, const void* src, int src_bytes) {
  Worker& w = cur_worker("cp.async");
  (void)smem_operand(w, dst, "cp.async destination");
  if (src_bytes < 0 || src_bytes > 16) fail("cp.async: src-size must be 0..16");
  if (reinterpret_cast<std::uintptr_t>(src) % 16 != 0) fail("cp.async.cg: the global source must be 16-byte aligned");
  if (!device_range_ok(src, src_bytes > 0 ? static_cast<std::size_t>(src_bytes) : 1)) {
    char msg[200];
    std::snprintf(msg, sizeof msg, "cp.async source %p (%d bytes) lies outside every device allocation", src,
                  src_bytes);
    fail(msg);
  }
  Chunk& ch = w.chunks[dst / 16];
  const int warp = w.cur->linear / 32;
  if (ch.read_epoch == w.epoch && ch.reader_warp != warp) {
    char msg[220];
    std::snprintf(msg, sizeof msg,
                  "racecheck: cp.async into shared byte %u, which warp %d read with ldmatrix since the last "
                  "__syncthreads (write after read)",
                  dst, ch.reader_warp >= 0 ? ch.reader_warp : -1);
    fail(msg);
  }
  ++ch.in_flight;
  w.cur->pending.push_back({dst, src, src_bytes});
}

void cp_async_commit() {
  Worker& w = cur_worker("cp.async.commit_group");
  w.cur->groups.push_back(std::move(w.cur->pending));
  w.cur->pending.clear();
}

void cp_async_wait(int n) {
  Worker& w = cur_worker("cp.async.wait_group");
  auto& groups = w.cur->groups;
  while (static_cast<int>(groups.size()) > n) {
    perform(w, groups.front(), w.cur->linear / 32);
    groups.pop_front();
  }
}

void ldmatrix_x4(std::uint32_t (&r)[4], std::uint32_t addr, bool trans) {
  Worker& w = cur_worker("ldmatrix");
  warp_collective(trans ? Op::kLdmatrixTrans : Op::kLdmatrix, &addr, sizeof addr, r, sizeof r,
                  [&w, trans](WarpState& ws) {
                    // rows[j][i][c]: matrix j, row i (given by lane 8j + i), element c.
                    std::uint16_t rows[4][8][8];
                    const int warp = w.cur->linear / 32;
                    for (int l = 0; l < 32; ++l) {
                      std::uint32_t a;
                      std::memcpy(&a, ws.in[l], sizeof a);
                      std::memcpy(rows[l / 8][l % 8], smem_operand(w, a, "ldmatrix row address"), 16);
                      Chunk& ch = w.chunks[a / 16];
                      if (ch.in_flight > 0 || (ch.write_epoch == w.epoch && ch.writer_warp != warp)) {
                        char msg[220];
                        std::snprintf(msg, sizeof msg,
                                      "racecheck: ldmatrix reads shared byte %u %s (read after write)", a,
                                      ch.in_flight > 0 ? "while a cp.async into it is still in flight"
                                                       : "that another warp's cp.async filled after the last "
                                                         "__syncthreads");
                        fail(msg);
                      }
                      ch.reader_warp = ch.read_epoch == w.epoch && ch.reader_warp != warp ? -2 : warp;
                      ch.read_epoch = w.epoch;
                    }
                    for (int l = 0; l < 32; ++l) {
                      const int g = l / 4, c = 2 * (l % 4);
                      std::uint32_t v[4];
                      for (int j = 0; j < 4; ++j) {
                        const std::uint16_t lo = trans ? rows[j][c][g] : rows[j][g][c];
                        const std::uint16_t hi = trans ? rows[j][c + 1][g] : rows[j][g][c + 1];
                        v[j] = static_cast<std::uint32_t>(lo) | (static_cast<std::uint32_t>(hi) << 16);
                      }
                      std::memcpy(ws.out[l], v, sizeof v);
                    }
                  });
}

void mma_m16n8k16_bf16(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1) {
  struct In {
    std::uint32_t a[4], b[2];
    float c[4];
  } in{{a[0], a[1], a[2], a[3]}, {b0, b1}, {d[0], d[1], d[2], d[3]}};
  warp_collective(Op::kMma, &in, sizeof in, d, sizeof d, [](WarpState& ws) {
    auto bf = [](std::uint32_t reg, int half) {
      const std::uint32_t bits = (half ? reg >> 16 : reg & 0xffffu) << 16;
      float f;
      std::memcpy(&f, &bits, sizeof f);
      return f;
    };
    // PTX ISA, "Matrix fragments for mma.m16n8k16" (.bf16 A/B, .f32 C/D); g = lane / 4, t = lane % 4.
    float A[16][16], B[16][8], C[16][8];
    for (int l = 0; l < 32; ++l) {
      In x;
      std::memcpy(&x, ws.in[l], sizeof x);
      const int g = l / 4, t = l % 4;
      for (int e = 0; e < 2; ++e) {
        A[g][2 * t + e] = bf(x.a[0], e);
        A[g + 8][2 * t + e] = bf(x.a[1], e);
        A[g][2 * t + 8 + e] = bf(x.a[2], e);
        A[g + 8][2 * t + 8 + e] = bf(x.a[3], e);
        B[2 * t + e][g] = bf(x.b[0], e);
        B[2 * t + 8 + e][g] = bf(x.b[1], e);
        C[g][2 * t + e] = x.c[e];
        C[g + 8][2 * t + e] = x.c[2 + e];
      }
    }
    // Products of two bf16 values are exact in fp32; they are accumulated in fp32, in k order.
    float D[16][8];
    for (int i = 0; i < 16; ++i) {
      for (int j = 0; j < 8; ++j) D[i][j] = C[i][j];
      for (int k = 0; k < 16; ++k) {
        const float a_ik = A[i][k];
        for (int j = 0; j < 8; ++j) D[i][j] += a_ik * B[k][j];
      }
    }
    for (int l = 0; l < 32; ++l) {
      const int g = l / 4, t = l % 4;
      const float v[4] = {D[g][2 * t], D[g][2 * t + 1], D[g + 8][2 * t], D[g + 8][2 * t + 1]};
      std::memcpy(ws.out[l], v, sizeof v);
    }
  });
}

}  // namespace mlasim::emu
