// A fixed pool of worker threads that take items of one loop at a time from a shared counter.
#include "model/cpu_thread_pool.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace mlasim {
namespace {

int available_cpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

int default_threads() {
  if (const char* env = std::getenv("MLASIM_CPU_THREADS")) {
    const std::optional<int> n = parse_cpu_threads(env);
    if (n && *n > 0) return *n;
  }
  return available_cpus();
}

// One loop in flight: items are claimed from `next`; `pending` counts those not yet finished.
struct Job {
  const std::function<void(int)>* fn = nullptr;
  int n = 0;
  std::atomic<int> next{0};
  std::atomic<int> pending{0};
  std::exception_ptr error;
  std::mutex error_mutex;

  void run_items() {
    for (int i = next.fetch_add(1); i < n; i = next.fetch_add(1)) {
      try {
        (*fn)(i);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
      }
      pending.fetch_sub(1);
    }
  }
};

class Pool {
 public:
  ~Pool() { resize(0); }

  void run(int n, const std::function<void(int)>& fn, int threads) {
    std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
    if (!busy.owns_lock() || threads <= 1 || n <= 1) {
      for (int i = 0; i < n; ++i) fn(i);
      return;
    }
    resize(threads - 1);
    Job job;
    job.fn = &fn;
    job.n = n;
    job.pending = n;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      job_ = &job;
      ++generation_;
    }
    wake_.notify_all();
    job.run_items();
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return job.pending.load() == 0 && active_ == 0; });
    job_ = nullptr;
    lock.unlock();
    if (job.error) std::rethrow_exception(job.error);
  }

 private:
  void resize(int workers) {
    if (static_cast<int>(threads_.size()) == workers) return;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : threads_) t.join();
    threads_.clear();
    stop_ = false;
    for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { work(); });
  }

  void work() {
    unsigned long long seen = 0;
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      wake_.wait(lock, [&] { return stop_ || (job_ != nullptr && generation_ != seen); });
      if (stop_) return;
      seen = generation_;
      Job* job = job_;
      ++active_;
      lock.unlock();
      job->run_items();
      lock.lock();
      --active_;
      done_.notify_all();
    }
  }

  std::mutex busy_;   // held by the parallel_for in flight
  std::mutex mutex_;  // guards job_, generation_, active_, stop_
  std::condition_variable wake_, done_;
  std::vector<std::thread> threads_;
  Job* job_ = nullptr;
  unsigned long long generation_ = 0;
  int active_ = 0;
  bool stop_ = false;
};

std::atomic<int> g_threads{0};  // 0: not chosen yet

Pool& pool() {
  static Pool p;
  return p;
}

}  // namespace

int cpu_threads() {
  int n = g_threads.load();
  if (n == 0) {
    n = default_threads();
    g_threads.store(n);
  }
  return n;
}

void set_cpu_threads(int n) { g_threads.store(n > 0 ? n : available_cpus()); }

std::optional<int> parse_cpu_threads(std::string_view text) {
  if (text == "auto") return 0;
  int n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n < 1 || n > 1024) return std::nullopt;
  return n;
}

void parallel_for(int n, const std::function<void(int)>& fn) { pool().run(n, fn, std::min(cpu_threads(), n)); }

}  // namespace mlasim
