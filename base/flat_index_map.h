// A uint64 -> non-negative int map for hot paths (prefix-cache hash -> block; request id -> the
// scheduler's slot, at arrivals): open addressing, linear probing, backward-shift deletion, grows
// at half load; no per-operation allocation. Never iterated for output, so its layout cannot leak
// into results.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

#include "base/recycled_storage.h"

namespace mlasim {

class FlatIndexMap {
 public:
  explicit FlatIndexMap(int expected_entries = 8) { reset(capacity_for(expected_entries)); }
  // Empty, sized for `expected_entries`, in the slots of `donor` (base/recycled_storage.h).
  FlatIndexMap(int expected_entries, FlatIndexMap& donor) {
    take_capacity(slots_, donor.slots_);
    reset(capacity_for(expected_entries));
  }

  // The value stored under `key`, or -1.
  int find(std::uint64_t key) const {
    for (std::size_t i = home(key);; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.value < 0) return -1;
      if (s.key == key) return s.value;
    }
  }
  // Inserts or overwrites; returns the previous value or -1.
  int put(std::uint64_t key, int value) {
    for (std::size_t i = home(key);; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.value < 0) {
        s = Slot{key, value};
        if (++size_ * 2 > slots_.size()) grow();
        return -1;
      }
      if (s.key == key) {
        const int old = s.value;
        s.value = value;
        return old;
      }
    }
  }
  // Removes `key`; returns the value it had, or -1 when it was absent.
  int erase(std::uint64_t key) {
    std::size_t i = home(key);
    while (true) {
      if (slots_[i].value < 0) return -1;
      if (slots_[i].key == key) break;
      i = (i + 1) & mask_;
    }
    const int removed = slots_[i].value;
    // Backward-shift: pull later entries of the probe run into the gap.
    std::size_t gap = i;
    for (std::size_t j = (gap + 1) & mask_; slots_[j].value >= 0; j = (j + 1) & mask_) {
      const std::size_t h = home(slots_[j].key);
      // Move j into the gap if its home is not in (gap, j] cyclically.
      const bool in_range = gap <= j ? (gap < h && h <= j) : (gap < h || h <= j);
      if (!in_range) {
        slots_[gap] = slots_[j];
        gap = j;
      }
    }
    slots_[gap] = Slot{0, -1};
    --size_;
    return removed;
  }
  std::size_t size() const { return size_; }
  // A hint that `key` is looked up soon: its home slot is fetched into the cache. No effect on
  // the contents.
  void prefetch(std::uint64_t key) const { __builtin_prefetch(&slots_[home(key)]); }

 private:
  struct Slot {
    std::uint64_t key;
    int value;  // -1 = empty
  };
  static std::size_t capacity_for(int expected_entries) {
    return std::bit_ceil(static_cast<std::size_t>(expected_entries) * 2 + 2);
  }
  void reset(std::size_t cap) {
    slots_.assign(cap, Slot{0, -1});
    mask_ = cap - 1;
    shift_ = 64 - std::countr_zero(cap);
    size_ = 0;
  }
  void grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    reset(old.size() * 2);
    for (const Slot& s : old) {
      if (s.value >= 0) put(s.key, s.value);
    }
  }
  std::size_t home(std::uint64_t key) const { return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ULL) >> shift_); }

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  int shift_ = 0;
  std::size_t size_ = 0;
};

}  // namespace mlasim
