// Fiber stacks and context switch of the SIMT emulator (see fiber.h).
#include "emu/fiber.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

namespace mlasim::emu {

FiberStack fiber_stack_alloc(std::size_t usable_bytes) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t bytes = (usable_bytes + page - 1) / page * page + page;
  void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) {
    std::fprintf(stderr, "mlasim-emu: cannot map a %zu-byte fiber stack\n", bytes);
    std::abort();
  }
  mprotect(m, page, PROT_NONE);  // overflow faults instead of corrupting a neighbour
  return {static_cast<unsigned char*>(m), bytes};
}

void fiber_stack_free(FiberStack& s) {
  if (s.base) munmap(s.base, s.bytes);
  s = {};
}

#if defined(__x86_64__)

extern "C" void mlasim_emu_switch(void** save_sp, void* new_sp);
extern "C" void mlasim_emu_trampoline();

// mlasim_emu_switch(save, sp): push the callee-saved registers, store rsp in *save, load sp, pop the
// same frame, return into the other context. The FP control words (MXCSR, x87) are shared by every
// fiber of a thread and never changed by kernels, so they are not switched.
// mlasim_emu_trampoline: first return of a fresh fiber; calls r13(r12) and must never come back.
asm(R"(
  .text
  .globl mlasim_emu_switch
  .type mlasim_emu_switch,@function
mlasim_emu_switch:
  .cfi_startproc
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .cfi_endproc
  .size mlasim_emu_switch,.-mlasim_emu_switch

  .globl mlasim_emu_trampoline
  .type mlasim_emu_trampoline,@function
mlasim_emu_trampoline:
  movq %r12, %rdi
  callq *%r13
  ud2
  .size mlasim_emu_trampoline,.-mlasim_emu_trampoline
)");

void fiber_init(FiberContext& f, const FiberStack& stack, void (*entry)(void*), void* arg) {
  auto top = reinterpret_cast<std::uintptr_t>(stack.base + stack.bytes) & ~static_cast<std::uintptr_t>(15);
  auto* s = reinterpret_cast<std::uint64_t*>(top);
  // After `ret` into the trampoline rsp = top − 16 (16-byte aligned), as a call site requires.
  s[-1] = 0;
  s[-2] = 0;
  s[-3] = reinterpret_cast<std::uint64_t>(&mlasim_emu_trampoline);
  s[-4] = 0;                                        // rbp
  s[-5] = 0;                                        // rbx
  s[-6] = reinterpret_cast<std::uint64_t>(arg);     // r12
  s[-7] = reinterpret_cast<std::uint64_t>(entry);   // r13
  s[-8] = 0;                                        // r14
  s[-9] = 0;                                        // r15
  f.sp = &s[-9];
}

void fiber_switch(FiberContext& from, FiberContext& to) { mlasim_emu_switch(&from.sp, to.sp); }

void fiber_context_release(FiberContext& f) { f.sp = nullptr; }

#else  // portable fallback

namespace {
struct Start {
  void (*entry)(void*);
  void* arg;
};
void start_thunk(unsigned lo, unsigned hi) {
  auto* st = reinterpret_cast<Start*>((static_cast<std::uintptr_t>(hi) << 32) | lo);
  st->entry(st->arg);
  std::abort();
}
}  // namespace

void fiber_init(FiberContext& f, const FiberStack& stack, void (*entry)(void*), void* arg) {
  if (!f.uc) f.uc = new ucontext_t;
  auto* uc = static_cast<ucontext_t*>(f.uc);
  getcontext(uc);
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  // The Start record sits at the top of the stack it describes.
  auto* st = reinterpret_cast<Start*>(stack.base + stack.bytes - sizeof(Start));
  *st = {entry, arg};
  uc->uc_stack.ss_sp = stack.base + page;
  uc->uc_stack.ss_size = stack.bytes - page - 64;
  uc->uc_link = nullptr;
  const auto v = reinterpret_cast<std::uintptr_t>(st);
  makecontext(uc, reinterpret_cast<void (*)()>(&start_thunk), 2, static_cast<unsigned>(v),
              static_cast<unsigned>(v >> 32));
}

void fiber_switch(FiberContext& from, FiberContext& to) {
  if (!from.uc) from.uc = new ucontext_t;
  swapcontext(static_cast<ucontext_t*>(from.uc), static_cast<ucontext_t*>(to.uc));
}

void fiber_context_release(FiberContext& f) {
  delete static_cast<ucontext_t*>(f.uc);
  f.uc = nullptr;
}

#endif

}  // namespace mlasim::emu
