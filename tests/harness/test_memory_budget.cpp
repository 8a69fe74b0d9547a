// check -j's memory budget: a lease waits while it does not fit beside those held, and one alone
// always starts.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "harness/memory_budget.h"

using namespace mlasim;

TEST_CASE("a lease that does not fit waits for the others to end", "[memory_budget]") {
  MemoryBudget budget(10);
  std::atomic<bool> second_started{false};
  std::thread second;
  {
    MemoryLease first(&budget, 8);
    second = std::thread([&] {
      MemoryLease lease(&budget, 5);
      second_started = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK_FALSE(second_started);  // 8 + 5 > 10
    CHECK(budget.held() == 8);
  }
  second.join();
  CHECK(second_started);
  CHECK(budget.held() == 0);
}

TEST_CASE("leases that fit together hold at once, and one larger than the budget runs alone", "[memory_budget]") {
  MemoryBudget budget(10);
  {
    MemoryLease a(&budget, 4), b(&budget, 6);  // 10 <= 10: no wait
    CHECK(budget.held() == 10);
  }
  {
    MemoryLease big(&budget, 25);  // alone: it starts
    CHECK(budget.held() == 25);
  }
  MemoryLease none(nullptr, 1e18);  // no budget: nothing held, nothing waits
  CHECK(budget.held() == 0);
}
