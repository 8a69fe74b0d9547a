// The model's weights on one device for one tensor-parallel rank (docs/spec/mla.md §3): Linear weights
// and embeddings as bf16 (exact for seeded weights; other values rounded to nearest even), norm weights as
// fp32; per-head weights (q_proj / q_b_proj rows, kv_b_proj rows) and o_proj columns cut to the
// rank's heads, gate/up rows and down_proj columns to its MLP slice, the rest replicated.
// Host-only header; DeviceBuffer is the owning device allocation used across attention/cuda.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/mla_weights.h"
#include "model/tp_shard.h"

namespace mlasim {

// One cudaMalloc'd allocation on a device; moved, never copied. reserve() grows it (contents lost;
// the caller makes sure no queued work still uses it).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(int device, std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void reserve(int device, std::size_t bytes);  // at least `bytes` (256-byte rounded), on `device`
  void upload(const void* host, std::size_t bytes);  // synchronous host -> device
  void zero();                                       // synchronous memset 0
  void* get() const { return ptr_; }
  template <typename T>
  T* as() const { return static_cast<T*>(ptr_); }
  std::size_t bytes() const { return bytes_; }
  int device() const { return device_; }

 private:
  void release();
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
  int device_ = -1;
};

struct DeviceLayerWeights {
  const float* input_layernorm = nullptr;            // [d]
  const std::uint16_t* q_proj = nullptr;              // [nh·(d_n+d_r), d]      r_q == 0
  const std::uint16_t* q_a_proj = nullptr;            // [r_q, d]               r_q > 0
  const float* q_a_layernorm = nullptr;               // [r_q]                  r_q > 0
  const std::uint16_t* q_b_proj = nullptr;            // [nh·(d_n+d_r), r_q]    r_q > 0
  const std::uint16_t* kv_a_proj_with_mqa = nullptr;  // [r_kv + d_r, d]
  const float* kv_a_layernorm = nullptr;              // [r_kv]
  const std::uint16_t* kv_b_proj = nullptr;           // [nh·(d_n+d_v), r_kv]: per local head W_UK (d_n rows), W_UV (d_v rows)
  const std::uint16_t* o_proj = nullptr;              // [d, nh·d_v]: the rank's columns
  const float* post_attention_layernorm = nullptr;    // [d]
  const std::uint16_t* gate_proj = nullptr;           // [m, d]: the rank's rows
  const std::uint16_t* up_proj = nullptr;             // [m, d]
  const std::uint16_t* down_proj = nullptr;           // [d, m]: the rank's columns
};

// Everything one rank needs; `with_lm_head` also uploads model.norm and lm_head (the rank that
// computes the logits). nh = shard.head_end - shard.head_begin, m = shard.mlp_end - shard.mlp_begin.
class DeviceWeights {
 public:
  DeviceWeights(const MlaWeights& weights, const TpShard& shard, int device, bool with_lm_head);

  const ModelConfig& config() const { return config_; }
  const TpShard& shard() const { return shard_; }
  int device() const { return device_; }
  int num_local_heads() const { return shard_.head_end - shard_.head_begin; }
  int mlp_width() const { return shard_.mlp_end - shard_.mlp_begin; }
  const std::uint16_t* embed_tokens() const { return embed_; }  // [V, d]
  const float* norm() const { return norm_; }                   // [d], nullptr without lm_head
  const std::uint16_t* lm_head() const { return lm_head_; }     // [V, d], nullptr without lm_head
  const DeviceLayerWeights& layer(int l) const { return layers_[static_cast<std::size_t>(l)]; }
  std::size_t bytes() const;

 private:
  const std::uint16_t* bf16(const std::vector<float>& values);
  const float* f32(const std::vector<float>& values);

  ModelConfig config_;
  TpShard shard_;
  int device_ = 0;
  std::vector<DeviceBuffer> buffers_;
  const std::uint16_t* embed_ = nullptr;
  const float* norm_ = nullptr;
  const std::uint16_t* lm_head_ = nullptr;
  std::vector<DeviceLayerWeights> layers_;
};

// Host-side slices of a row-major [rows, cols] tensor (used by DeviceWeights; exposed for tests).
std::vector<float> slice_rows(const WeightTensor& t, int row_begin, int row_end);
std::vector<float> slice_cols(const WeightTensor& t, int col_begin, int col_end);

}  // namespace mlasim
