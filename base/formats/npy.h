// NumPy .npy files (format 1.0) of 2-D little-endian float arrays: logits [rows, vocab].
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace mlasim {

struct NpyArray {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::vector<double> data;  // row-major; values as stored (float32 widened exactly)
};

// The header (magic, version, dict, padding to 64 bytes) of a float32 C-order array of shape
// (rows, cols): 128 bytes for any shape of fewer than 61 digits in all.
std::string npy_float32_header(std::int64_t rows, std::int64_t cols);
// The bytes of a float32 ('<f4') C-order array of shape (rows, cols).
std::string npy_float32_bytes(std::int64_t rows, std::int64_t cols, const std::vector<float>& data);
// Parses .npy bytes ('<f4' or '<f8', C order, 1-D or 2-D); errors name the file and the header key.
Result<NpyArray> parse_npy(const std::string& bytes, const std::string& path);
// Reads at most kMaxNpyBytes (a golden of 4,096 rows of a 129,280-token vocabulary is 2 GiB).
constexpr std::size_t kMaxNpyBytes = std::size_t{8} << 30;
Result<NpyArray> read_npy(const std::string& path);

}  // namespace mlasim
