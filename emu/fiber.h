// Fibers for the SIMT emulator: one stack per emulated CUDA thread and a context switch that saves
// only the callee-saved registers and the FP control words (x86-64 System V; ucontext elsewhere).
#pragma once

#include <cstddef>

namespace mlasim::emu {

struct FiberStack {
  unsigned char* base = nullptr;  // mapping, a guard page at the bottom
  std::size_t bytes = 0;
};

FiberStack fiber_stack_alloc(std::size_t usable_bytes);
void fiber_stack_free(FiberStack& s);

// A saved execution context; `entry(arg)` runs on the fiber's first resume and must never return.
struct FiberContext {
  void* sp = nullptr;  // x86-64: saved stack pointer
  void* uc = nullptr;  // other targets: ucontext_t
};
void fiber_init(FiberContext& f, const FiberStack& stack, void (*entry)(void*), void* arg);
// Saves the current context into `from` and resumes `to`.
void fiber_switch(FiberContext& from, FiberContext& to);
void fiber_context_release(FiberContext& f);

}  // namespace mlasim::emu
