// Runs numbered tasks on worker threads and hands their results back in number order, each as
// soon as it and all before it are done (`mlasim check -j N` prints exactly what a serial run does).
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "base/status.h"

namespace mlasim {

// Calls work(i) once for every i in [0, count) on min(jobs, count) threads, and emit(i) on the
// calling thread in ascending i, each as soon as work(0..i) have returned. work must be safe to
// call concurrently for different i; emit needs no locking. jobs <= 1: work(0), emit(0), work(1),
// ... on the calling thread. If work(i) throws, emit(0..i-1) run, no further work starts, and the
// exception is rethrown here once the running work has returned.
void run_ordered(std::size_t count, int jobs, const std::function<void(std::size_t)>& work,
                 const std::function<void(std::size_t)>& emit);

// Parses a job count as given to -j/--jobs: a whole number >= 0, where 0 means `hardware_threads`
// (std::thread::hardware_concurrency(); 1 when that is 0).
Result<int> parse_jobs(const std::string& text, unsigned hardware_threads);

}  // namespace mlasim
