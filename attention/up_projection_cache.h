// Memo of the prefill form's up-projected context keys and values per cache slot and head
// (k_nope_h = W_UK_h c_kv, v_h = W_UV_h c_kv), so gathered context is not re-projected every step.
// Exact: an entry is the same computation on the same cached latent, and writing a slot
// invalidates it. Blocks are allocated on first use.
#pragma once

#include <algorithm>
#include <vector>

#include "attention/mla_dims.h"
#include "attention/mla_ops.h"

namespace mlasim {

template <typename T>
class UpProjectionCache {
 public:
  UpProjectionCache(int num_blocks, int block_size, const MlaDims& dims)
      : block_size_(block_size), dims_(dims), values_(static_cast<size_t>(num_blocks)), valid_(static_cast<size_t>(num_blocks)) {}

  // The slot's latent changed: forget its entries.
  void invalidate(int slot) {
    std::vector<char>& v = valid_[static_cast<size_t>(slot / block_size_)];
    if (v.empty()) return;
    const size_t at = static_cast<size_t>(slot % block_size_) * static_cast<size_t>(dims_.num_heads);
    std::fill(v.begin() + static_cast<long>(at), v.begin() + static_cast<long>(at) + dims_.num_heads, char(0));
  }

  // [k_nope (d_n) | v (d_v)] of head h at slot, projected from latent_row with kv_b_proj on first use.
  const T* get(int slot, int head, const T* latent_row, const T* kv_b_proj) {
    const size_t b = static_cast<size_t>(slot / block_size_);
    const int width = dims_.d_n + dims_.d_v;
    if (valid_[b].empty()) {
      valid_[b].assign(static_cast<size_t>(block_size_) * dims_.num_heads, char(0));
      values_[b].resize(static_cast<size_t>(block_size_) * dims_.num_heads * width);
    }
    const size_t e = static_cast<size_t>(slot % block_size_) * dims_.num_heads + static_cast<size_t>(head);
    T* out = &values_[b][e * static_cast<size_t>(width)];
    if (!valid_[b][e]) {
      const T* w = kv_b_proj + static_cast<long long>(head) * width * dims_.r_kv;
      for (int o = 0; o < width; ++o) out[o] = dot(w + static_cast<long long>(o) * dims_.r_kv, latent_row, dims_.r_kv);
      valid_[b][e] = 1;
    }
    return out;
  }

 private:
  int block_size_;
  MlaDims dims_;
  std::vector<std::vector<T>> values_;   // [block][slot in block, head, d_n + d_v]
  std::vector<std::vector<char>> valid_;  // [block][slot in block, head]
};

}  // namespace mlasim
