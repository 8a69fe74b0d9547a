// .npy, JSON and safetensors: round trips and the errors a damaged file gives.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "base/formats/json_value.h"
#include "base/formats/npy.h"
#include "base/formats/safetensors.h"

using namespace mlasim;

TEST_CASE("npy float32 round trip with a 64-byte aligned header", "[formats]") {
  std::vector<float> v = {1.5f, -2.25f, 0.0f, 3e-8f, 1e30f, -0.0f};
  std::string bytes = npy_float32_bytes(2, 3, v);
  CHECK(bytes.compare(0, 6, "\x93NUMPY") == 0);
  const std::size_t header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
  CHECK((10 + header_len) % 64 == 0);
  CHECK(bytes[10 + header_len - 1] == '\n');
  Result<NpyArray> a = parse_npy(bytes, "x.npy");
  REQUIRE(a.ok());
  CHECK(a.value().rows == 2);
  CHECK(a.value().cols == 3);
  for (std::size_t i = 0; i < v.size(); ++i) CHECK(a.value().data[i] == static_cast<double>(v[i]));
}

TEST_CASE("a damaged npy file names the file and the header key", "[formats]") {
  std::string bytes = npy_float32_bytes(2, 3, std::vector<float>(6, 1.0f));
  Result<NpyArray> truncated = parse_npy(bytes.substr(0, bytes.size() - 4), "golden/x/logits.npy");
  REQUIRE_FALSE(truncated.ok());
  CHECK(truncated.error().headline() ==
        "golden/x/logits.npy: error: data: expected 24 data bytes for shape (2, 3), found 20");
  std::string wrong = bytes;
  wrong.replace(wrong.find("<f4"), 3, "<i4");
  Result<NpyArray> dtype = parse_npy(wrong, "l.npy");
  REQUIRE_FALSE(dtype.ok());
  CHECK(dtype.error().key_path == "descr");
  Result<NpyArray> magic = parse_npy("not numpy at all", "l.npy");
  REQUIRE_FALSE(magic.ok());
  CHECK(magic.error().key_path == "magic");
}

TEST_CASE("JSON parses nested values and reports line and column of an error", "[formats]") {
  Result<JsonValue> v = parse_json("{\"a\": [1, 2.5, -3e2], \"b\": {\"c\": \"x\\ny\"}, \"d\": null, \"e\": true}", "f.json");
  REQUIRE(v.ok());
  const JsonValue* a = v.value().find("a");
  REQUIRE(a);
  REQUIRE(a->array().size() == 3);
  CHECK(a->array()[2].number() == -300.0);
  CHECK(v.value().find("b")->find("c")->string() == "x\ny");
  Result<JsonValue> bad = parse_json("{\n  \"a\": [1, 2,\n}", "f.json");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().headline() == "f.json:3:1: error: invalid JSON: expected a value");
}

TEST_CASE("safetensors round trip keeps names, shapes, values and alignment", "[formats]") {
  std::vector<NamedTensor> tensors = {{"model.embed_tokens.weight", {3, 2}, {1, 2, 3, 4, 5, 6}},
                                      {"model.norm.weight", {2}, {0.5f, -0.25f}}};
  std::string bytes = safetensors_bytes(tensors, {{"format", "pt"}});
  std::uint64_t len = 0;
  for (int i = 0; i < 8; ++i) len |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes[static_cast<std::size_t>(i)])) << (8 * i);
  CHECK(len % 8 == 0);
  const std::string path = (std::filesystem::temp_directory_path() / ("mlasim_st_" + std::to_string(::getpid()))).string();
  std::ofstream(path, std::ios::binary) << bytes;
  Result<std::vector<NamedTensor>> back = read_safetensors(path);
  REQUIRE(back.ok());
  REQUIRE(back.value().size() == 2);
  CHECK(back.value()[0].name == "model.embed_tokens.weight");
  CHECK(back.value()[0].shape == std::vector<std::int64_t>{3, 2});
  CHECK(back.value()[0].data == tensors[0].data);
  CHECK(back.value()[1].data == tensors[1].data);
  std::ofstream(path, std::ios::binary) << bytes.substr(0, bytes.size() - 4);
  Result<std::vector<NamedTensor>> cut = read_safetensors(path);
  REQUIRE_FALSE(cut.ok());
  CHECK(cut.error().key_path == "model.norm.weight");
  std::remove(path.c_str());
}
