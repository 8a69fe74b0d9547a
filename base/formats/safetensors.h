// safetensors files (the Hugging Face tensor format): an 8-byte little-endian header length, a
// JSON header {name: {dtype, shape, data_offsets}, "__metadata__": {...}}, then the raw data.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace mlasim {

struct NamedTensor {
  std::string name;
  std::vector<std::int64_t> shape;
  std::vector<float> data;  // row-major
};

// An F32 tensor to write, held elsewhere (the weights are written without a copy).
struct TensorView {
  std::string name;
  std::vector<std::int64_t> shape;
  const float* data = nullptr;  // row-major
  std::size_t size = 0;         // values
};
// The 8-byte length and the JSON header (padded to 8 bytes) of F32 tensors in the given order,
// their data to follow in that order; metadata strings go to "__metadata__".
std::string safetensors_header(const std::vector<TensorView>& tensors,
                               const std::vector<std::pair<std::string, std::string>>& metadata);
// The whole file: the header, then each tensor's data.
std::string safetensors_bytes(const std::vector<NamedTensor>& tensors,
                              const std::vector<std::pair<std::string, std::string>>& metadata);
// Reads F32, F64 (narrowed), BF16 and F16 tensors; errors name the file and the tensor.
Result<std::vector<NamedTensor>> read_safetensors(const std::string& path);

}  // namespace mlasim
