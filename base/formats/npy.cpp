// .npy encoding and decoding (header dict, 64-byte alignment, little-endian data).
#include "base/formats/npy.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "base/file_read.h"

namespace mlasim {
namespace {

constexpr char kMagic[] = "\x93NUMPY";

Error npy_error(const std::string& path, const std::string& key, const std::string& message) {
  Error e;
  e.file = path;
  e.key_path = key;
  e.message = message;
  e.hint = "goldens are written only by `mlasim golden update`; regenerate this file";
  return e;
}

// The value text of 'key': in the header dict, or "" when absent.
std::string dict_value(const std::string& header, const std::string& key) {
  std::size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) return "";
  std::size_t colon = header.find(':', k);
  if (colon == std::string::npos) return "";
  std::size_t start = header.find_first_not_of(' ', colon + 1);
  if (start == std::string::npos) return "";
  if (header[start] == '(') return header.substr(start, header.find(')', start) - start + 1);
  std::size_t end = header.find_first_of(",}", start);
  return header.substr(start, end - start);
}

// "(4, 512)", "(512,)", "()": whole numbers below 2^40 separated by ", ", with a trailing comma
// for one dimension. False for anything else.
bool parse_shape(const std::string& text, std::vector<long long>& dims) {
  dims.clear();
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') return false;
  std::size_t i = 1;
  const std::size_t end = text.size() - 1;
  while (i < end) {
    while (i < end && text[i] == ' ') ++i;
    if (i == end) break;
    long long v = 0;
    std::size_t digits = 0;
    while (i < end && text[i] >= '0' && text[i] <= '9') {
      v = v * 10 + (text[i] - '0');
      if (v >= (1LL << 40)) return false;
      ++i, ++digits;
    }
    if (digits == 0) return false;
    dims.push_back(v);
    while (i < end && text[i] == ' ') ++i;
    if (i < end && text[i] != ',') return false;
    if (i < end) ++i;
  }
  return true;
}

}  // namespace

std::string npy_float32_header(std::int64_t rows, std::int64_t cols) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(rows) + ", " +
                       std::to_string(cols) + "), }";
  const std::size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::string out(kMagic, 6);
  out += '\x01';
  out += '\x00';
  const auto len = static_cast<std::uint16_t>(header.size());
  out += static_cast<char>(len & 0xff);
  out += static_cast<char>(len >> 8);
  out += header;
  return out;
}

std::string npy_float32_bytes(std::int64_t rows, std::int64_t cols, const std::vector<float>& data) {
  std::string out = npy_float32_header(rows, cols);
  const std::size_t offset = out.size();
  out.resize(offset + data.size() * 4);
  std::memcpy(out.data() + offset, data.data(), data.size() * 4);  // x86-64 and aarch64 are little-endian
  return out;
}

Result<NpyArray> parse_npy(const std::string& bytes, const std::string& path) {
  if (bytes.size() < 10 || bytes.compare(0, 6, kMagic, 6) != 0)
    return npy_error(path, "magic", "not a .npy file (missing the \\x93NUMPY magic)");
  const int major = static_cast<unsigned char>(bytes[6]);
  std::size_t header_len = 0, header_start = 0;
  if (major == 1) {
    header_len =
        static_cast<unsigned char>(bytes[8]) | (static_cast<std::size_t>(static_cast<unsigned char>(bytes[9])) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return npy_error(path, "header", "truncated header");
    for (int i = 0; i < 4; ++i)
      header_len |= static_cast<std::size_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
    header_start = 12;
  } else {
    return npy_error(path, "version", "unsupported .npy format version " + std::to_string(major));
  }
  if (bytes.size() < header_start + header_len) return npy_error(path, "header", "truncated header");
  const std::string header = bytes.substr(header_start, header_len);
  const std::string descr = dict_value(header, "descr");
  int width = 0;
  if (descr == "'<f4'")
    width = 4;
  else if (descr == "'<f8'")
    width = 8;
  else
    return npy_error(
        path, "descr",
        "unsupported dtype " + (descr.empty() ? std::string("(missing)") : descr) + "; expected '<f4' or '<f8'");
  if (dict_value(header, "fortran_order") != "False")
    return npy_error(path, "fortran_order", "only C-order arrays are supported");
  const std::string shape = dict_value(header, "shape");
  std::vector<long long> dims;
  if (!parse_shape(shape, dims) || dims.empty() || dims.size() > 2)
    return npy_error(path, "shape",
                     "expected a 1-D or 2-D shape of whole numbers, got " +
                         (shape.empty() ? std::string("nothing") : shape));
  NpyArray a;
  a.rows = dims.size() == 2 ? dims[0] : 1;
  a.cols = dims.back();
  // The byte count, checked for overflow (each dimension is below 2^40, the product may not be).
  const std::size_t data_start = header_start + header_len;
  std::uint64_t want = 0;
  const bool overflow =
      __builtin_mul_overflow(static_cast<std::uint64_t>(a.rows), static_cast<std::uint64_t>(a.cols), &want) ||
      __builtin_mul_overflow(want, static_cast<std::uint64_t>(width), &want);
  if (overflow || want != bytes.size() - data_start)
    return npy_error(path, "data",
                     "expected " + (overflow ? std::string("more than 2^64") : std::to_string(want)) +
                         " data bytes for shape " + shape + ", found " + std::to_string(bytes.size() - data_start));
  const std::size_t count = static_cast<std::size_t>(a.rows) * static_cast<std::size_t>(a.cols);
  a.data.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    if (width == 4) {
      float f;
      std::memcpy(&f, bytes.data() + data_start + 4 * i, 4);
      a.data[i] = f;
    } else {
      std::memcpy(&a.data[i], bytes.data() + data_start + 8 * i, 8);
    }
  }
  return a;
}

Result<NpyArray> read_npy(const std::string& path) {
  Result<std::string> bytes = read_file_bounded(path, kMaxNpyBytes, "the .npy file");
  if (!bytes) return bytes.error();
  return parse_npy(bytes.value(), path);
}

}  // namespace mlasim
