// DeviceBuffer and DeviceWeights: host-side slicing of the rank's shard, then one synchronous
// upload per tensor (bf16 bits for Linear weights / embeddings, fp32 for norm weights).
#include "attention/cuda/device_weights.h"

#include <cuda_runtime.h>

#include <bit>
#include <utility>

#include "model/bf16.h"
#include "attention/cuda/cuda_check.h"
#include "base/check.h"

namespace mlasim {

DeviceBuffer::DeviceBuffer(int device, std::size_t bytes) { reserve(device, bytes); }

DeviceBuffer::~DeviceBuffer() { release(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept
    : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)), device_(std::exchange(o.device_, -1)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    release();
    ptr_ = std::exchange(o.ptr_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
    device_ = std::exchange(o.device_, -1);
  }
  return *this;
}

void DeviceBuffer::release() {
  if (ptr_) {
    cudaSetDevice(device_);
    cudaFree(ptr_);
  }
  ptr_ = nullptr;
  bytes_ = 0;
}

void DeviceBuffer::reserve(int device, std::size_t bytes) {
  if (ptr_ && device == device_ && bytes <= bytes_) return;
  release();
  device_ = device;
  if (bytes == 0) return;
  bytes_ = (bytes + 255) / 256 * 256;
  MLASIM_CUDA_CHECK(cudaSetDevice(device));
  MLASIM_CUDA_CHECK(cudaMalloc(&ptr_, bytes_));
}

void DeviceBuffer::upload(const void* host, std::size_t bytes) {
  MLASIM_CHECK(bytes <= bytes_, "DeviceBuffer::upload: more bytes than reserved");
  if (bytes == 0) return;
  MLASIM_CUDA_CHECK(cudaSetDevice(device_));
  MLASIM_CUDA_CHECK(cudaMemcpy(ptr_, host, bytes, cudaMemcpyHostToDevice));
}

void DeviceBuffer::zero() {
  if (!ptr_) return;
  MLASIM_CUDA_CHECK(cudaSetDevice(device_));
  MLASIM_CUDA_CHECK(cudaMemset(ptr_, 0, bytes_));
}

std::vector<float> slice_rows(const WeightTensor& t, int row_begin, int row_end) {
  MLASIM_CHECK(t.shape.size() == 2 && 0 <= row_begin && row_begin <= row_end && row_end <= t.shape[0],
               "slice_rows: bad range");
  const std::size_t cols = static_cast<std::size_t>(t.shape[1]);
  return {t.values.begin() + static_cast<long>(static_cast<std::size_t>(row_begin) * cols),
          t.values.begin() + static_cast<long>(static_cast<std::size_t>(row_end) * cols)};
}

std::vector<float> slice_cols(const WeightTensor& t, int col_begin, int col_end) {
  MLASIM_CHECK(t.shape.size() == 2 && 0 <= col_begin && col_begin <= col_end && col_end <= t.shape[1],
               "slice_cols: bad range");
  const std::size_t rows = static_cast<std::size_t>(t.shape[0]), cols = static_cast<std::size_t>(t.shape[1]);
  const std::size_t w = static_cast<std::size_t>(col_end - col_begin);
  std::vector<float> out(rows * w);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < w; ++c) out[r * w + c] = t.values[r * cols + static_cast<std::size_t>(col_begin) + c];
  return out;
}

const std::uint16_t* DeviceWeights::bf16(const std::vector<float>& values) {
  std::vector<std::uint16_t> bits(values.size());
  for (std::size_t i = 0; i < values.size(); ++i)  // exact for seeded weights; rounded (nearest even) otherwise
    bits[i] = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(round_to_bf16(values[i])) >> 16);
  DeviceBuffer& b = buffers_.emplace_back(device_, bits.size() * sizeof(std::uint16_t));
  b.upload(bits.data(), bits.size() * sizeof(std::uint16_t));
  return b.as<const std::uint16_t>();
}

const float* DeviceWeights::f32(const std::vector<float>& values) {
  DeviceBuffer& b = buffers_.emplace_back(device_, values.size() * sizeof(float));
  b.upload(values.data(), values.size() * sizeof(float));
  return b.as<const float>();
}

DeviceWeights::DeviceWeights(const MlaWeights& w, const TpShard& shard, int device, bool with_lm_head)
    : config_(w.config), shard_(shard), device_(device) {
  const ModelConfig& c = w.config;
  const int dqk = c.qk_nope_head_dim + c.qk_rope_head_dim, dkv = c.qk_nope_head_dim + c.v_head_dim;
  buffers_.reserve(4 + 13 * w.layers.size());  // pointers into buffers_ stay valid (moves keep the allocation anyway)
  embed_ = bf16(w.embed_tokens.values);
  if (with_lm_head) {
    norm_ = f32(w.norm.values);
    lm_head_ = bf16(w.lm_head.values);
  }
  for (const MlaLayerWeights& l : w.layers) {
    DeviceLayerWeights d;
    d.input_layernorm = f32(l.input_layernorm.values);
    if (c.q_lora_rank == 0) {
      d.q_proj = bf16(slice_rows(l.q_proj, shard.head_begin * dqk, shard.head_end * dqk));
    } else {
      d.q_a_proj = bf16(l.q_a_proj.values);
      d.q_a_layernorm = f32(l.q_a_layernorm.values);
      d.q_b_proj = bf16(slice_rows(l.q_b_proj, shard.head_begin * dqk, shard.head_end * dqk));
    }
    d.kv_a_proj_with_mqa = bf16(l.kv_a_proj_with_mqa.values);
    d.kv_a_layernorm = f32(l.kv_a_layernorm.values);
    d.kv_b_proj = bf16(slice_rows(l.kv_b_proj, shard.head_begin * dkv, shard.head_end * dkv));
    d.o_proj = bf16(slice_cols(l.o_proj, shard.head_begin * c.v_head_dim, shard.head_end * c.v_head_dim));
    d.post_attention_layernorm = f32(l.post_attention_layernorm.values);
    d.gate_proj = bf16(slice_rows(l.gate_proj, shard.mlp_begin, shard.mlp_end));
    d.up_proj = bf16(slice_rows(l.up_proj, shard.mlp_begin, shard.mlp_end));
    d.down_proj = bf16(slice_cols(l.down_proj, shard.mlp_begin, shard.mlp_end));
    layers_.push_back(d);
  }
}

std::size_t DeviceWeights::bytes() const {
  std::size_t total = 0;
  for (const DeviceBuffer& b : buffers_) total += b.bytes();
  return total;
}

}  // namespace mlasim
