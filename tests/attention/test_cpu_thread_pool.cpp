// The CPU thread pool: every item runs exactly once for any pool size, nested loops run inline,
// exceptions reach the caller, and the thread-count text is parsed strictly.
#include <catch2/catch.hpp>

#include <atomic>
#include <stdexcept>
#include <vector>

#include "model/cpu_thread_pool.h"

using namespace mlasim;

namespace {

struct ThreadsGuard {  // restores the pool size a test changed
  int saved = cpu_threads();
  ~ThreadsGuard() { set_cpu_threads(saved); }
};

}  // namespace

TEST_CASE("parallel_for runs every item once for 1, 2, 3 and 7 threads", "[threads]") {
  ThreadsGuard guard;
  for (int threads : {1, 2, 3, 7}) {
    set_cpu_threads(threads);
    CHECK(cpu_threads() == threads);
    for (int n : {0, 1, 2, 5, 1000}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      parallel_for(n, [&](int i) { hits[static_cast<size_t>(i)].fetch_add(1); });
      for (int i = 0; i < n; ++i) REQUIRE(hits[static_cast<size_t>(i)].load() == 1);
    }
  }
}

TEST_CASE("parallel_for inside an item runs its items on the calling thread", "[threads]") {
  ThreadsGuard guard;
  set_cpu_threads(3);
  std::vector<std::atomic<int>> hits(40);
  parallel_for(4, [&](int outer) { parallel_for(10, [&](int inner) { hits[static_cast<size_t>(outer * 10 + inner)].fetch_add(1); }); });
  for (const std::atomic<int>& h : hits) CHECK(h.load() == 1);
}

TEST_CASE("parallel_for rethrows an item's exception after the other items finish", "[threads]") {
  ThreadsGuard guard;
  set_cpu_threads(3);
  std::atomic<int> ran{0};
  CHECK_THROWS_WITH(parallel_for(50,
                                 [&](int i) {
                                   ran.fetch_add(1);
                                   if (i == 17) throw std::runtime_error("item 17");
                                 }),
                    "item 17");
  CHECK(ran.load() == 50);
  // The pool still works afterwards.
  std::atomic<int> again{0};
  parallel_for(9, [&](int) { again.fetch_add(1); });
  CHECK(again.load() == 9);
}

TEST_CASE("parse_cpu_threads accepts auto and 1..1024 only", "[threads]") {
  CHECK(parse_cpu_threads("auto") == 0);
  CHECK(parse_cpu_threads("1") == 1);
  CHECK(parse_cpu_threads("1024") == 1024);
  for (const char* bad : {"", "0", "-1", "1025", "2x", " 2", "two", "1.5", "99999999999"}) CHECK_FALSE(parse_cpu_threads(bad));
}

TEST_CASE("set_cpu_threads(0) means the CPUs this process may use", "[threads]") {
  ThreadsGuard guard;
  set_cpu_threads(0);
  CHECK(cpu_threads() >= 1);
}
