// The paged latent cache of one layer (docs/spec/mla.md §4): [num_blocks, block_size, r_kv + d_r] rows
// of [c_kv (post-norm) | k_pe (post-RoPE)]; V is the first r_kv columns of the same rows. Blocks
// are allocated on first write (a default pool of 8192 blocks would be ~1 GB in double); a row
// of a block never written reads as the fill value (NaN poisons it in tests).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "attention/slot_mapping.h"
#include "base/check.h"

namespace mlasim {

template <typename T>
class LatentCache {
 public:
  LatentCache() = default;
  LatentCache(int num_blocks, int block_size, int row_dim, T fill)
      : num_blocks_(num_blocks), block_size_(block_size), row_dim_(row_dim),
        blocks_(static_cast<size_t>(num_blocks)), fill_row_(static_cast<size_t>(row_dim), fill) {}

  int num_blocks() const { return num_blocks_; }
  int block_size() const { return block_size_; }
  int row_dim() const { return row_dim_; }  // r_kv + d_r
  int num_slots() const { return num_blocks_ * block_size_; }
  T fill() const { return fill_row_.empty() ? T(0) : fill_row_[0]; }
  bool block_allocated(int block) const { return !blocks_[static_cast<size_t>(block)].empty(); }

  // The row of `slot` for writing; allocates its block (filled) on first use.
  T* mutable_row(int slot) {
    std::vector<T>& b = blocks_[checked_block(slot)];
    if (b.empty()) b.assign(static_cast<size_t>(block_size_) * static_cast<size_t>(row_dim_), fill());
    return b.data() + offset(slot);
  }
  // The row of `slot` for reading: fill values when its block was never written.
  const T* row(int slot) const {
    const std::vector<T>& b = blocks_[checked_block(slot)];
    return b.empty() ? fill_row_.data() : b.data() + offset(slot);
  }

  // The slot of `position` of a sequence with this block table (block_table[pos / B] * B + pos % B).
  int slot_of(const std::vector<int>& block_table, int position) const {
    const std::optional<long long> slot = mlasim::slot_of(block_table, position, block_size_);
    MLASIM_CHECK(slot.has_value(), "position " + std::to_string(position) + " outside the block table");
    MLASIM_CHECK(*slot >= 0 && *slot < num_slots(),
                 "block id " + std::to_string(block_table[static_cast<size_t>(position / block_size_)]) + " outside the cache");
    return static_cast<int>(*slot);
  }

 private:
  size_t checked_block(int slot) const {
    MLASIM_CHECK(slot >= 0 && slot < num_slots(), "cache slot " + std::to_string(slot) + " out of range");
    return static_cast<size_t>(slot / block_size_);
  }
  size_t offset(int slot) const { return static_cast<size_t>(slot % block_size_) * static_cast<size_t>(row_dim_); }

  int num_blocks_ = 0, block_size_ = 0, row_dim_ = 0;
  std::vector<std::vector<T>> blocks_;  // [num_blocks][block_size * row_dim], empty until written
  std::vector<T> fill_row_;             // row_dim values
};

}  // namespace mlasim
