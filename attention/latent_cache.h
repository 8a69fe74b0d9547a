// The paged latent cache of one layer (spec/mla.md §4): [num_blocks, block_size, r_kv + d_r] rows
// of [c_kv (post-norm) | k_pe (post-RoPE)]; V is the first r_kv columns of the same rows.
#pragma once

#include <string>
#include <vector>

#include "sim/check.h"

namespace mlasim {

template <typename T>
struct LatentCache {
  int num_blocks = 0;
  int block_size = 0;
  int row_dim = 0;      // r_kv + d_r
  std::vector<T> data;  // [num_blocks, block_size, row_dim]

  LatentCache() = default;
  LatentCache(int blocks, int block, int dim, T fill)
      : num_blocks(blocks), block_size(block), row_dim(dim),
        data(static_cast<size_t>(blocks) * static_cast<size_t>(block) * static_cast<size_t>(dim), fill) {}

  int num_slots() const { return num_blocks * block_size; }
  T* row(int slot) { return data.data() + checked(slot) * static_cast<size_t>(row_dim); }
  const T* row(int slot) const { return data.data() + checked(slot) * static_cast<size_t>(row_dim); }
  // The slot of `position` of a sequence with this block table (block_table[pos / B] * B + pos % B).
  int slot_of(const std::vector<int>& block_table, int position) const {
    const size_t b = static_cast<size_t>(position / block_size);
    MLASIM_CHECK(position >= 0 && b < block_table.size(), "position " + std::to_string(position) + " outside the block table");
    const long long slot = static_cast<long long>(block_table[b]) * block_size + position % block_size;
    MLASIM_CHECK(slot >= 0 && slot < num_slots(), "block id " + std::to_string(block_table[b]) + " outside the cache");
    return static_cast<int>(slot);
  }

 private:
  size_t checked(int slot) const {
    MLASIM_CHECK(slot >= 0 && slot < num_slots(), "cache slot " + std::to_string(slot) + " out of range");
    return static_cast<size_t>(slot);
  }
};

}  // namespace mlasim
