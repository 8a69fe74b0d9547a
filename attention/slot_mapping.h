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

}  // namespace mlasim
