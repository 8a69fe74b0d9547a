// run_ordered (the engine of `mlasim check -j N`): every task once, results handed back in order
// as soon as the ones before are done, exceptions passed on; and the -j/--jobs values.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "harness/ordered_pool.h"

using namespace mlasim;

TEST_CASE("one job alternates work and emit on the calling thread", "[pool]") {
  std::vector<std::string> trace;
  run_ordered(3, 1, [&](std::size_t i) { trace.push_back("w" + std::to_string(i)); },
              [&](std::size_t i) { trace.push_back("e" + std::to_string(i)); });
  CHECK(trace == std::vector<std::string>{"w0", "e0", "w1", "e1", "w2", "e2"});
}

TEST_CASE("many jobs: every task runs once and emits come in index order", "[pool]") {
  for (int jobs : {2, 3, 8, 200}) {
    std::vector<std::atomic<int>> runs(100);
    std::vector<std::size_t> emitted;
    run_ordered(100, jobs, [&](std::size_t i) { runs[i]++; },
                [&](std::size_t i) {
                  CHECK(runs[i] == 1);  // emit(i) sees work(i) done
                  emitted.push_back(i);
                });
    std::vector<std::size_t> want(100);
    for (std::size_t i = 0; i < want.size(); ++i) want[i] = i;
    CHECK(emitted == want);
    for (auto& r : runs) CHECK(r == 1);
  }
}

TEST_CASE("a later task finishing first is still emitted after the earlier ones", "[pool]") {
  // work(0) waits until work(3) has returned, so the tasks finish in the order 1, 2, 3, 0.
  std::mutex mu;
  std::condition_variable cv;
  bool last_done = false, timed_out = false;
  std::vector<std::size_t> finished, emitted;
  run_ordered(
      4, 2,
      [&](std::size_t i) {
        std::unique_lock<std::mutex> lock(mu);
        if (i == 0) timed_out = !cv.wait_for(lock, std::chrono::seconds(20), [&] { return last_done; });
        if (i == 3) last_done = true;
        finished.push_back(i);
        cv.notify_all();
      },
      [&](std::size_t i) { emitted.push_back(i); });
  CHECK_FALSE(timed_out);
  CHECK(finished == std::vector<std::size_t>{1, 2, 3, 0});
  CHECK(emitted == std::vector<std::size_t>{0, 1, 2, 3});
}

TEST_CASE("a task is emitted as soon as it and the ones before are done, not at the end", "[pool]") {
  // Every task after the first waits for emit(0): a pool that emitted only at the end would stall.
  std::mutex mu;
  std::condition_variable cv;
  bool first_emitted = false;
  std::atomic<int> timeouts{0};
  std::vector<std::size_t> emitted;
  run_ordered(
      5, 3,
      [&](std::size_t i) {
        if (i == 0) return;
        std::unique_lock<std::mutex> lock(mu);
        if (!cv.wait_for(lock, std::chrono::seconds(20), [&] { return first_emitted; })) timeouts++;
      },
      [&](std::size_t i) {
        std::lock_guard<std::mutex> lock(mu);
        if (i == 0) first_emitted = true;
        emitted.push_back(i);
        cv.notify_all();
      });
  CHECK(timeouts == 0);
  CHECK(emitted == std::vector<std::size_t>{0, 1, 2, 3, 4});
}

TEST_CASE("an exception from a task is rethrown after the tasks before it are emitted", "[pool]") {
  for (int jobs : {1, 4}) {
    std::vector<std::size_t> emitted;
    std::atomic<int> started_after{0};
    CHECK_THROWS_WITH(run_ordered(
                          50, jobs,
                          [&](std::size_t i) {
                            if (i == 2) throw std::runtime_error("task 2 failed");
                            if (i > 2) started_after++;
                          },
                          [&](std::size_t i) { emitted.push_back(i); }),
                      "task 2 failed");
    CHECK(emitted == std::vector<std::size_t>{0, 1});
    if (jobs == 1) CHECK(started_after == 0);  // with threads, how many had started is a race
  }
}

TEST_CASE("the job count of -j/--jobs is a whole number >= 0, 0 meaning one per hardware thread", "[pool]") {
  CHECK(parse_jobs("1", 8).value() == 1);
  CHECK(parse_jobs("12", 8).value() == 12);
  CHECK(parse_jobs("0", 8).value() == 8);
  CHECK(parse_jobs("0", 0).value() == 1);  // hardware_concurrency() may not know
  for (const char* bad : {"", "-1", "abc", "4x", " 4", "1.5", "99999999999"}) {
    Result<int> r = parse_jobs(bad, 8);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().format() == std::string("<command line>: error: --jobs: \"") + bad +
                                    "\" is not a whole number >= 0\n"
                                    "  hint: -j N runs N scenarios at once; -j 0 one per hardware thread (8 here)");
  }
}
