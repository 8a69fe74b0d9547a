// The CPU reference's worker threads (docs/spec/cpu_reference.md §2): one process-wide pool that
// runs the independent items of a loop (rows, heads, GEMM tiles) on all cores. Callers split work
// into items whose results do not depend on which thread runs them, so every result is the same
// for 1, 2 or N threads.
#pragma once

#include <functional>
#include <optional>
#include <string_view>

namespace mlasim {

// The pool's size: set_cpu_threads, else MLASIM_CPU_THREADS, else the CPUs this process may run on.
int cpu_threads();

// Fixes the pool's size (>= 1); 0 means the CPUs this process may run on. Takes effect at the
// next parallel_for.
void set_cpu_threads(int n);

// "auto" -> 0, "1".."1024" -> that number; nullopt for anything else.
std::optional<int> parse_cpu_threads(std::string_view text);

// Runs fn(i) once for every i in [0, n), on the pool and the calling thread, and returns when all
// have run. Called from inside an item (or while another parallel_for is running), it runs the
// items on the calling thread, in order. The first exception an item throws is rethrown here after
// the others finish.
void parallel_for(int n, const std::function<void(int)>& fn);

}  // namespace mlasim
