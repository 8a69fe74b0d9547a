// Worker threads that take the next task number, and a calling thread that emits in order.
#include "harness/ordered_pool.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace mlasim {

void run_ordered(std::size_t count, int jobs, const std::function<void(std::size_t)>& work,
                 const std::function<void(std::size_t)>& emit) {
  if (jobs <= 1 || count <= 1) {
    for (std::size_t i = 0; i < count; ++i) {
      work(i);
      emit(i);
    }
    return;
  }
  std::atomic<std::size_t> next{0};
  std::mutex mu;
  std::condition_variable cv;
  std::vector<char> done(count, 0);               // guarded by mu
  std::vector<std::exception_ptr> errors(count);  // errors[i] written before done[i] is set
  auto worker = [&] {
    for (std::size_t i = next++; i < count; i = next++) {
      std::exception_ptr error;
      try {
        work(i);
      } catch (...) {
        error = std::current_exception();
        next = count;  // start nothing more
      }
      std::lock_guard<std::mutex> lock(mu);
      errors[i] = error;
      done[i] = 1;
      cv.notify_all();
    }
  };
  std::vector<std::thread> threads;
  const std::size_t num_threads = std::min(count, static_cast<std::size_t>(jobs));
  // Joins the workers on every way out of this function, an exception from emit included.
  struct Joiner {
    std::vector<std::thread>& threads;
    std::atomic<std::size_t>& next;
    std::size_t count;
    ~Joiner() {
      next = count;
      for (std::thread& t : threads) t.join();
    }
  } joiner{threads, next, count};
  for (std::size_t t = 0; t < num_threads; ++t) threads.emplace_back(worker);
  for (std::size_t i = 0; i < count; ++i) {
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return done[i] != 0; });
      if (errors[i]) std::rethrow_exception(errors[i]);
    }
    emit(i);
  }
}

Result<int> parse_jobs(const std::string& text, unsigned hardware_threads) {
  int v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end || v < 0) {
    Error e;
    e.file = "<command line>";
    e.key_path = "--jobs";
    e.message = "\"" + text + "\" is not a whole number >= 0";
    e.hint = "-j N runs N scenarios at once; -j 0 one per hardware thread (" +
             std::to_string(std::max(1u, hardware_threads)) + " here)";
    return e;
  }
  if (v == 0) return static_cast<int>(std::max(1u, hardware_threads));
  return v;
}

}  // namespace mlasim
