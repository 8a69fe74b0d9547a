// The SIMT emulator's block scheduler (see simt.h): a launch's blocks spread over worker threads,
// each block's CUDA threads run as fibers, a deadlock or invalid access reported with its place.
#include "emu/simt_worker.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

namespace mlasim::emu {
namespace detail {

namespace {

constexpr std::size_t kStackBytes = 256 * 1024;
constexpr std::size_t kDefaultSmemLimit = 48 * 1024;
constexpr int kMaxThreads = 1024;

std::mutex g_attr_mu;
std::unordered_map<const void*, int> g_smem_optin;
std::mutex g_pool_mu;
std::vector<std::unique_ptr<Worker>> g_pool;  // reused across launches (stacks stay mapped)

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

}  // namespace

thread_local Worker* tw = nullptr;

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

}  // namespace detail

using namespace detail;

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

void trap() { fail("__trap()"); }

void fail(const char* what) {
  char buf[512];
  where_prefix(buf, sizeof buf);
  std::fprintf(stderr, "%s: %s\n", buf, what);
  std::fflush(stderr);
  std::abort();
}

}  // namespace mlasim::emu
