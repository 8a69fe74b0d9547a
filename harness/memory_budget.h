// The memory `mlasim check -j N`'s workers share: a scenario's model is built only while it fits
// beside the models already running, so N workers never hold more than the machine has (a model
// alone always starts; model_memory_check refuses one that could never fit).
#pragma once

#include <condition_variable>
#include <mutex>

namespace mlasim {

class MemoryBudget {
 public:
  explicit MemoryBudget(double limit_bytes) : limit_(limit_bytes) {}
  // Blocks until `bytes` fit beside what is held, or nothing is held.
  void acquire(double bytes);
  void release(double bytes);
  double held() const;

 private:
  const double limit_;
  mutable std::mutex mu_;
  std::condition_variable freed_;
  double held_ = 0;
  int holders_ = 0;
};

// Holds `bytes` of a budget (none when the budget is null) for its lifetime.
class MemoryLease {
 public:
  MemoryLease(MemoryBudget* budget, double bytes) : budget_(budget), bytes_(bytes) {
    if (budget_) budget_->acquire(bytes_);
  }
  ~MemoryLease() {
    if (budget_) budget_->release(bytes_);
  }
  MemoryLease(const MemoryLease&) = delete;
  MemoryLease& operator=(const MemoryLease&) = delete;

 private:
  MemoryBudget* budget_;
  double bytes_;
};

}  // namespace mlasim
