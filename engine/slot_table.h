// Values by scenario request index for the requests alive: slots are reused, so memory follows the
// requests alive, not the trace; lookups go through a FlatIndexMap (no per-request node
// allocation, no hashing of std::hash's kind on every row of every step).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/check.h"
#include "base/flat_index_map.h"

namespace mlasim {

template <typename T>
class SlotTable {
 public:
  // Returns the value's slot: a small number, stable until the request leaves the table.
  int emplace(int index, T value) {
    int slot;
    if (!free_.empty()) {
      slot = free_.back();
      free_.pop_back();
      slots_[static_cast<std::size_t>(slot)] = std::move(value);
    } else {
      slot = static_cast<int>(slots_.size());
      slots_.push_back(std::move(value));
    }
    MLASIM_CHECK(index_.put(key(index), slot) < 0, "a request arrived twice");
    return slot;
  }
  // The request's slot, or -1 when it is not in the table.
  int slot(int index) const { return index_.find(key(index)); }
  // The value, or null when the request is not in the table.
  T* find(int index) {
    const int slot = index_.find(key(index));
    return slot < 0 ? nullptr : &slots_[static_cast<std::size_t>(slot)];
  }
  const T* find(int index) const { return const_cast<SlotTable*>(this)->find(index); }
  T& at(int index) {
    T* v = find(index);
    MLASIM_CHECK(v != nullptr, "request " + std::to_string(index) + " is not alive");
    return *v;
  }
  const T& at(int index) const { return const_cast<SlotTable*>(this)->at(index); }
  // Removes the request and returns its value; its slot's memory goes with it.
  T take(int index) {
    const int slot = index_.erase(key(index));
    MLASIM_CHECK(slot >= 0, "request " + std::to_string(index) + " is not alive");
    T value = std::exchange(slots_[static_cast<std::size_t>(slot)], T{});
    free_.push_back(slot);
    return value;
  }
  void erase(int index) {
    if (index_.find(key(index)) >= 0) take(index);
  }
  std::size_t size() const { return index_.size(); }

 private:
  static std::uint64_t key(int index) { return static_cast<std::uint64_t>(static_cast<std::uint32_t>(index)); }
  FlatIndexMap index_;
  std::vector<T> slots_;
  std::vector<int> free_;
};

}  // namespace mlasim
