// JSON output: two-space indentation, keys in call order, ints as integers, doubles with 17 digits.
#include "base/formats/json_writer.h"

#include <array>
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

// The same test on 16 bytes at once (GCC and Clang's vector extensions: SSE2 or NEON compares,
// no intrinsics), for the long strings (a step's split reason, the trace events' reasons, long ids).
typedef unsigned char Bytes16 __attribute__((vector_size(16)));
bool block_needs_escape(const char* p) {
  Bytes16 v;
  std::memcpy(&v, p, 16);
  const Bytes16 hit = (v < 0x20) | (v == '"') | (v == '\\');
  std::uint64_t lo, hi;
  std::memcpy(&lo, &hit, 8);
  std::memcpy(&hi, reinterpret_cast<const char*>(&hit) + 8, 8);
  return (lo | hi) != 0;
}

// The bytes a JSON string escapes: controls, '"' and '\\'.
constexpr std::array<bool, 256> kNeedsEscape = [] {
  std::array<bool, 256> t{};
  for (int c = 0; c < 0x20; ++c) t[static_cast<std::size_t>(c)] = true;
  t[static_cast<unsigned char>('"')] = t[static_cast<unsigned char>('\\')] = true;
  return t;
}();

// The length of the prefix of s that needs no escape.
std::size_t plain_prefix(std::string_view s) {
  std::size_t i = 0;
  for (; i + 16 <= s.size(); i += 16)
    if (block_needs_escape(s.data() + i)) break;
  for (; i + 8 <= s.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    if (word_needs_escape(w)) break;
  }
  for (; i < s.size(); ++i)  // the tail (most ids are shorter than a word): one table load a byte
    if (kNeedsEscape[static_cast<unsigned char>(s[i])]) break;
  return i;
}

}  // namespace

char* put_json_string(char* p, std::string_view s) {
  *p++ = '"';
  const std::size_t run = plain_prefix(s);
  if (run > 0) std::memcpy(p, s.data(), run);
  p += run;
  for (std::size_t i = run; i < s.size(); ++i) {
    const char c = s[i];
    const char* escape = nullptr;
    switch (c) {
      case '"': escape = "\\\""; break;
      case '\\': escape = "\\\\"; break;
      case '\n': escape = "\\n"; break;
      case '\t': escape = "\\t"; break;
      case '\r': escape = "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) >= 0x20) {
          *p++ = c;
          continue;
        }
    }
    if (escape) {
      *p++ = escape[0];
      *p++ = escape[1];
    } else {
      constexpr char kHex[] = "0123456789abcdef";
      const auto u = static_cast<unsigned char>(c);
      std::memcpy(p, "\\u00", 4);
      p[4] = kHex[u >> 4];
      p[5] = kHex[u & 15];
      p += 6;
    }
  }
  *p++ = '"';
  return p;
}

void JsonWriter::write_string(std::string_view s) {
  // Most strings need no escape: one pass to find that out, then the text appended whole.
  if (plain_prefix(s) == s.size()) {
    out_ += '"';
    out_.append(s);
    out_ += '"';
    return;
  }
  const std::size_t at = out_.size();
  out_.resize(at + json_string_max(s.size()));
  out_.resize(static_cast<std::size_t>(put_json_string(out_.data() + at, s) - out_.data()));
}

void JsonWriter::append_int(long long v) {
  char buf[24];
  out_.append(buf, static_cast<std::size_t>(std::to_chars(buf, buf + sizeof buf, v).ptr - buf));  // not (first, last): no replace
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
  // Formatted a chunk at a time into a local buffer, appended once per chunk (a request's token
  // ids are thousands of numbers).
  char buf[4096];
  char* p = buf;
  *p++ = '[';
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (p > buf + sizeof buf - 16) {
      out_.append(buf, p);
      p = buf;
    }
    if (i) *p++ = ',', *p++ = ' ';
    p = std::to_chars(p, buf + sizeof buf, v[i]).ptr;
  }
  *p++ = ']';
  out_.append(buf, p);
  return *this;
}

JsonWriter& JsonWriter::string_array(const std::vector<std::string>& v) {
  begin_array();
  for (const auto& s : v) value(std::string_view(s));
  return end_array();
}

}  // namespace mlasim
