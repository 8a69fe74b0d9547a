// JSON output: two-space indentation, keys in call order, ints as integers, doubles with 17 digits.
#include "base/formats/json_writer.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace mlasim {

void JsonWriter::newline() {
  if (layout_ == Layout::kOneLine) return;
  out_ += '\n';
  out_.append(2 * (first_.size() + static_cast<std::size_t>(depth_)), ' ');
}

JsonWriter& JsonWriter::raw_element(std::string_view json) {
  before_value();
  out_ += json;
  return *this;
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_ += layout_ == Layout::kOneLine ? ", " : ",";
    first_.back() = false;
    newline();
  }
}

JsonWriter& JsonWriter::begin_object() {
  before_value();
  out_ += '{';
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::close(char bracket) {
  bool empty = first_.back();
  first_.pop_back();
  if (!empty) newline();
  out_ += bracket;
  return *this;
}

JsonWriter& JsonWriter::end_object() { return close('}'); }

JsonWriter& JsonWriter::begin_array() {
  before_value();
  out_ += '[';
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::end_array() { return close(']'); }

JsonWriter& JsonWriter::key(std::string_view k) {
  before_value();
  write_string(k);
  out_ += ": ";
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view s) {
  before_value();
  write_string(s);
  return *this;
}

namespace {

// Whether any of the 8 bytes of w is below 0x20, '"' or '\\' (Bit Twiddling Hacks, "determine if a
// word has a byte less than n", exact for n <= 128; a byte equal to c is a zero byte of w ^ c).
bool word_needs_escape(std::uint64_t w) {
  constexpr std::uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
  auto has_less = [](std::uint64_t x, std::uint64_t n) { return ((x - ones * n) & ~x & highs) != 0; };
  return has_less(w, 0x20) || has_less(w ^ (ones * '"'), 1) || has_less(w ^ (ones * '\\'), 1);
}

}  // namespace

void JsonWriter::write_string(std::string_view s) {
  // Runs of characters that need no escape are appended whole (most strings are one run), and
  // looked through 8 bytes at a time.
  out_ += '"';
  std::size_t run = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i + 8 <= s.size()) {
      std::uint64_t w;
      std::memcpy(&w, s.data() + i, 8);
      if (!word_needs_escape(w)) {
        i += 7;
        continue;
      }
    }
    const char c = s[i];
    if (static_cast<unsigned char>(c) >= 0x20 && c != '"' && c != '\\') continue;
    out_.append(s.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"': out_ += "\\\""; break;
      case '\\': out_ += "\\\\"; break;
      case '\n': out_ += "\\n"; break;
      case '\t': out_ += "\\t"; break;
      case '\r': out_ += "\\r"; break;
      default: {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
        out_ += buf;
      }
    }
  }
  out_.append(s.data() + run, s.size() - run);
  out_ += '"';
}

void JsonWriter::append_int(long long v) {
  char buf[24];
  out_.append(buf, std::to_chars(buf, buf + sizeof buf, v).ptr);
}

JsonWriter& JsonWriter::value(long long v) {
  before_value();
  append_int(v);
  return *this;
}

JsonWriter& JsonWriter::value(bool b) {
  before_value();
  out_ += b ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::fixed(double v, int decimals) {
  before_value();
  if (!std::isfinite(v)) {
    out_ += "null";
    return *this;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  out_ += buf;
  return *this;
}

JsonWriter& JsonWriter::value(double v) {
  before_value();
  if (!std::isfinite(v)) {
    out_ += "null";
    return *this;
  }
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  out_ += buf;
  // A whole number stays a float to readers that check the type (transformers' config checks
  // do): 1 is written 1.0.
  if (std::strpbrk(buf, ".eEn") == nullptr) out_ += ".0";
  return *this;
}

JsonWriter& JsonWriter::null() {
  before_value();
  out_ += "null";
  return *this;
}

JsonWriter& JsonWriter::int_array(const std::vector<int>& v) {
  before_value();
  out_ += '[';
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i) out_ += ", ";
    append_int(v[i]);
  }
  out_ += ']';
  return *this;
}

JsonWriter& JsonWriter::string_array(const std::vector<std::string>& v) {
  begin_array();
  for (const auto& s : v) value(std::string_view(s));
  return end_array();
}

}  // namespace mlasim
