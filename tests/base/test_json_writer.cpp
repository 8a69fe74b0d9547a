// base/formats/json_writer: strings escaped at every position the 16- and 8-byte scans can place a
// special byte, and int arrays across the chunks they are formatted in, each against a plain
// character-by-character reference written here.
#include <catch2/catch.hpp>

#include <climits>
#include <cstdio>
#include <string>
#include <vector>

#include "base/formats/json_writer.h"

using namespace mlasim;

namespace {

std::string reference_quoted(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string written(const std::string& s) {
  JsonWriter w(0, JsonWriter::Layout::kOneLine);
  w.value(s);
  return std::string(w.text());
}

}  // namespace

TEST_CASE("json_writer: a special byte is escaped wherever it stands in strings up to 48 bytes", "[json]") {
  // '\x7f' and a UTF-8 byte need no escape: they sit beside the escaped ones to catch a scan that
  // flags too much.
  const std::string specials = std::string("\"\\\n\t\r\x01\x1f\x7f") + "\xc3";
  int checked = 0;
  for (std::size_t len = 1; len <= 48; ++len) {
    for (std::size_t pos = 0; pos < len; ++pos) {
      for (const char c : specials) {
        std::string s(len, 'a');
        s[pos] = c;
        REQUIRE(written(s) == reference_quoted(s));
        ++checked;
      }
    }
  }
  CHECK(checked == 1176 * 9);
  CHECK(written("") == "\"\"");
  CHECK(written(std::string(40, 'x')) == "\"" + std::string(40, 'x') + "\"");
  // Two specials in one 16-byte block and one past it.
  const std::string s = "ab\"cd\\ef" + std::string(12, 'z') + "\n";
  CHECK(written(s) == "\"ab\\\"cd\\\\ef" + std::string(12, 'z') + "\\n\"");
}

TEST_CASE("json_writer: int arrays across the chunks they are formatted in", "[json]") {
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{350}, std::size_t{3000}}) {
    std::vector<int> v(n);
    for (std::size_t i = 0; i < n; ++i)
      v[i] = i % 3 == 0 ? INT_MIN + static_cast<int>(i) : i % 3 == 1 ? INT_MAX - static_cast<int>(i) : static_cast<int>(i);
    std::string expected = "[";
    for (std::size_t i = 0; i < n; ++i) expected += (i ? ", " : "") + std::to_string(v[i]);
    expected += "]";
    JsonWriter w(0, JsonWriter::Layout::kOneLine);
    w.int_array(v);
    REQUIRE(std::string(w.text()) == expected);
  }
  // Inside an object, after another member: the separator comes before the array.
  JsonWriter w(0, JsonWriter::Layout::kOneLine);
  w.begin_object().key("a").value(1).key("ids").int_array({7, -8}).end_object();
  CHECK(std::string(w.text()) == "{\"a\": 1, \"ids\": [7, -8]}");
}
