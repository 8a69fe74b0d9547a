// A token's KV slot, as vLLM's slot_mapping computes it: block_table[pos / B] * B + pos % B.
#pragma once

#include <cstddef>
#include <optional>
#include <span>

namespace mlasim {

// nullopt when `position` is outside the block table; the caller checks the block id against its
// cache.
inline std::optional<long long> slot_of(std::span<const int> block_table, int position, int block_size) {
  if (position < 0) return std::nullopt;
  const std::size_t b = static_cast<std::size_t>(position / block_size);
  if (b >= block_table.size()) return std::nullopt;
  return static_cast<long long>(block_table[b]) * block_size + position % block_size;
}

// The slots of consecutive positions of one row, one division for the first and none after:
// slot_of(block_table, position, block_size) for position, position + 1, ..., -1 outside the
// table.
class SlotWalker {
 public:
  SlotWalker(std::span<const int> block_table, int position, int block_size)
      : table_(block_table), block_size_(block_size), block_(position / block_size),
        offset_(position - block_ * block_size), valid_(position >= 0) {}
  long long slot() const {
    if (!valid_ || static_cast<std::size_t>(block_) >= table_.size()) return -1;
    return static_cast<long long>(table_[static_cast<std::size_t>(block_)]) * block_size_ + offset_;
  }
  void next() {
    if (++offset_ == block_size_) {
      offset_ = 0;
      ++block_;
    }
  }

 private:
  std::span<const int> table_;
  int block_size_, block_, offset_;
  bool valid_;
};

}  // namespace mlasim
