// The shared memory budget of `mlasim check -j N`.
#include "harness/memory_budget.h"

namespace mlasim {

void MemoryBudget::acquire(double bytes) {
  std::unique_lock<std::mutex> lock(mu_);
  freed_.wait(lock, [&] { return holders_ == 0 || held_ + bytes <= limit_; });
  held_ += bytes;
  ++holders_;
}

void MemoryBudget::release(double bytes) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    held_ -= bytes;
    --holders_;
    if (holders_ == 0) held_ = 0;  // no rounding drift across many leases
  }
  freed_.notify_all();
}

double MemoryBudget::held() const {
  std::lock_guard<std::mutex> lock(mu_);
  return held_;
}

}  // namespace mlasim
