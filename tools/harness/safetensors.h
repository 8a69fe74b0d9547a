// safetensors files (the Hugging Face tensor format): an 8-byte little-endian header length, a
// JSON header {name: {dtype, shape, data_offsets}, "__metadata__": {...}}, then the raw data.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sim/status.h"

namespace mlasim {

struct NamedTensor {
  std::string name;
  std::vector<std::int64_t> shape;
  std::vector<float> data;  // row-major
};

// F32 tensors in the given order; metadata strings go to "__metadata__".
std::string safetensors_bytes(const std::vector<NamedTensor>& tensors,
                              const std::vector<std::pair<std::string, std::string>>& metadata);
// Reads F32, F64 (narrowed), BF16 and F16 tensors; errors name the file and the tensor.
Result<std::vector<NamedTensor>> read_safetensors(const std::string& path);

}  // namespace mlasim
