// LineReader (base/line_reader.h): lines through one buffer, and a line longer than the bound is
// an error naming the line, with the buffer never grown past the bound.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "base/file_read.h"
#include "base/line_reader.h"

namespace mlasim {
namespace {

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST_CASE("LineReader: lines, CRLF and the last line without a newline", "[base]") {
  const std::string path = write_temp("mlasim_line_reader_a.txt", "ab\r\n\ncd");
  LineReader r(path);
  REQUIRE(r.open().ok());
  std::string_view line;
  REQUIRE(r.next(line));
  CHECK(line == "ab");
  REQUIRE(r.next(line));
  CHECK(line.empty());
  REQUIRE(r.next(line));
  CHECK(line == "cd");
  CHECK(r.line_number() == 3);
  CHECK_FALSE(r.next(line));
  CHECK(r.status().ok());
  std::remove(path.c_str());
}

TEST_CASE("LineReader: a line longer than the bound is an error naming it", "[base]") {
  // Bound 100 bytes: line 1 (100) is read, line 2 (101, then a newline far away) is not.
  const std::string path = write_temp("mlasim_line_reader_b.txt",
                                      std::string(100, 'x') + "\n" + std::string(5000, 'y') + "\nz\n");
  LineReader r(path, 100);
  REQUIRE(r.open().ok());
  std::string_view line;
  REQUIRE(r.next(line));
  CHECK(line.size() == 100U);
  CHECK_FALSE(r.next(line));
  REQUIRE_FALSE(r.status().ok());
  const Error& e = r.status().error();
  CHECK(e.line == 2);
  CHECK(e.message == "line 2 is longer than mlasim reads (100 bytes)");
  std::remove(path.c_str());
}

TEST_CASE("getline_bounded: a line over the bound stops the reading (requests files)", "[base]") {
  std::istringstream in("abc\n" + std::string(20, 'x') + "\nz\n");
  std::string line;
  bool too_long = false;
  REQUIRE(getline_bounded(in, line, 10, too_long));
  CHECK(line == "abc");
  CHECK_FALSE(too_long);
  CHECK_FALSE(getline_bounded(in, line, 10, too_long));
  CHECK(too_long);
}

TEST_CASE("excerpt: long text cut to its start and size", "[base]") {
  CHECK(excerpt("short") == "short");
  CHECK(excerpt(std::string(100, 'a'), 4) == "aaaa... (100 bytes)");
}

}  // namespace
}  // namespace mlasim
