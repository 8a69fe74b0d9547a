// safetensors encoding and decoding.
#include "base/file_read.h"
#include "base/formats/safetensors.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "base/formats/json_value.h"
#include "base/formats/json_writer.h"

namespace mlasim {
namespace {

Error st_error(const std::string& path, const std::string& key, const std::string& message) {
  Error e;
  e.file = path;
  e.key_path = key;
  e.message = message;
  e.hint = "expected a safetensors file as written by `mlasim export`";
  return e;
}

float bf16_to_float(std::uint16_t h) {
  std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

float f16_to_float(std::uint16_t h) {
  const std::uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float value;
  if (exp == 0)
    value = static_cast<float>(mant) * 0x1p-24f;
  else if (exp == 31)
    value = mant ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
  else
    value = (1.0f + static_cast<float>(mant) * 0x1p-10f) * std::ldexp(1.0f, static_cast<int>(exp) - 15);
  return sign ? -value : value;
}

}  // namespace

std::string safetensors_header(const std::vector<TensorView>& tensors,
                               const std::vector<std::pair<std::string, std::string>>& metadata) {
  JsonWriter w;
  w.begin_object();
  w.key("__metadata__").begin_object();
  for (const auto& [k, v] : metadata) w.key(k).value(v);
  w.end_object();
  std::size_t offset = 0;
  for (const TensorView& t : tensors) {
    w.key(t.name).begin_object();
    w.key("dtype").value("F32");
    w.key("shape").begin_array();
    for (std::int64_t d : t.shape) w.value(static_cast<long long>(d));
    w.end_array();
    w.key("data_offsets").begin_array();
    w.value(static_cast<long long>(offset));
    offset += t.size * 4;
    w.value(static_cast<long long>(offset));
    w.end_array();
    w.end_object();
  }
  w.end_object();
  std::string header = w.str();
  header.append((8 - header.size() % 8) % 8, ' ');  // align the data to 8 bytes
  std::string out(8, '\0');
  std::uint64_t len = header.size();
  for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = static_cast<char>((len >> (8 * i)) & 0xff);
  return out + header;
}

std::string safetensors_bytes(const std::vector<NamedTensor>& tensors,
                              const std::vector<std::pair<std::string, std::string>>& metadata) {
  std::vector<TensorView> views;
  for (const NamedTensor& t : tensors) views.push_back({t.name, t.shape, t.data.data(), t.data.size()});
  std::string out = safetensors_header(views, metadata);
  for (const NamedTensor& t : tensors) out.append(reinterpret_cast<const char*>(t.data.data()), t.data.size() * 4);
  return out;
}

Result<std::vector<NamedTensor>> read_safetensors(const std::string& path) {
  if (Status st = check_regular_input(path, "the safetensors file"); !st) return st.error();
  std::ifstream in(path, std::ios::binary);
  if (!in) return st_error(path, "", "cannot read the file");
  std::ostringstream buf;
  buf << in.rdbuf();
  const std::string bytes = buf.str();
  if (bytes.size() < 8) return st_error(path, "header", "file shorter than the 8-byte header length");
  std::uint64_t len = 0;
  for (int i = 0; i < 8; ++i)
    len |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes[static_cast<std::size_t>(i)])) << (8 * i);
  if (len > bytes.size() - 8)
    return st_error(path, "header", "header length " + std::to_string(len) + " exceeds the file");
  Result<JsonValue> header = parse_json(bytes.substr(8, len), path + " (header)");
  if (!header) return header.error();
  if (!header.value().is_object()) return st_error(path, "header", "the header is not a JSON object");
  const std::size_t data_start = 8 + len;
  std::vector<NamedTensor> out;
  for (const auto& [name, info] : header.value().object()) {
    if (name == "__metadata__") continue;
    const JsonValue* dtype = info.find("dtype");
    const JsonValue* shape = info.find("shape");
    const JsonValue* offsets = info.find("data_offsets");
    if (!dtype || !dtype->is_string() || !shape || !shape->is_array() || !offsets || !offsets->is_array() ||
        offsets->array().size() != 2)
      return st_error(path, name, "tensor entry needs dtype, shape and data_offsets [begin, end]");
    NamedTensor t;
    t.name = name;
    std::size_t count = 1;
    for (const JsonValue& d : shape->array()) {
      t.shape.push_back(static_cast<std::int64_t>(d.number()));
      count *= static_cast<std::size_t>(d.number());
    }
    const auto begin = static_cast<std::size_t>(offsets->array()[0].number());
    const auto end = static_cast<std::size_t>(offsets->array()[1].number());
    const std::string& dt = dtype->string();
    const std::size_t width = dt == "F32" ? 4 : dt == "F64" ? 8 : (dt == "BF16" || dt == "F16") ? 2 : 0;
    if (width == 0) return st_error(path, name, "unsupported dtype " + dt);
    if (end < begin || end - begin != count * width || data_start + end > bytes.size())
      return st_error(path, name,
                      "data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                          "] do not match its shape and dtype or run past the file");
    const char* p = bytes.data() + data_start + begin;
    t.data.resize(count);
    for (std::size_t i = 0; i < count; ++i) {
      if (width == 4) {
        std::memcpy(&t.data[i], p + 4 * i, 4);
      } else if (width == 8) {
        double d;
        std::memcpy(&d, p + 8 * i, 8);
        t.data[i] = static_cast<float>(d);
      } else {
        std::uint16_t h;
        std::memcpy(&h, p + 2 * i, 2);
        t.data[i] = dt == "BF16" ? bf16_to_float(h) : f16_to_float(h);
      }
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace mlasim
