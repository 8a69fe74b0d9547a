// JSON scanning by hand: no allocation unless a string holds escapes, no locale, no doubles.
#include "tools/import/json_line.h"

namespace mlasim {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void append_utf8(std::string& out, unsigned code) {
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xC0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xE0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code >> 18));
    out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  }
}

constexpr int kMaxDepth = 64;

}  // namespace

void JsonLineScanner::fail(std::size_t offset, std::string message) const {
  throw JsonLineError{offset, "invalid JSON: " + std::move(message)};
}

void JsonLineScanner::skip_ws() {
  while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t')) ++pos_;
}

bool JsonLineScanner::consume(char c) {
  skip_ws();
  if (pos_ < s_.size() && s_[pos_] == c) {
    ++pos_;
    return true;
  }
  return false;
}

void JsonLineScanner::expect(char c) {
  if (consume(c)) return;
  if (at_end()) fail(pos_, std::string("expected '") + c + "', found the end of the line");
  fail(pos_, std::string("expected '") + c + "', found '" + s_[pos_] + "'");
}

std::string_view JsonLineScanner::string(std::string& scratch) {
  skip_ws();
  if (at_end() || s_[pos_] != '"') fail(pos_, "expected a string");
  const std::size_t start = ++pos_;
  bool escaped = false;
  scratch.clear();
  while (pos_ < s_.size() && s_[pos_] != '"') {
    const char c = s_[pos_];
    if (static_cast<unsigned char>(c) < 0x20) fail(pos_, "control character in a string");
    if (c != '\\') {
      if (escaped) scratch += c;
      ++pos_;
      continue;
    }
    if (!escaped) {  // the text so far becomes the decoded prefix
      scratch.assign(s_.substr(start, pos_ - start));
      escaped = true;
    }
    if (pos_ + 1 >= s_.size()) fail(pos_, "unterminated string");
    const char e = s_[pos_ + 1];
    pos_ += 2;
    switch (e) {
      case '"': scratch += '"'; break;
      case '\\': scratch += '\\'; break;
      case '/': scratch += '/'; break;
      case 'b': scratch += '\b'; break;
      case 'f': scratch += '\f'; break;
      case 'n': scratch += '\n'; break;
      case 'r': scratch += '\r'; break;
      case 't': scratch += '\t'; break;
      case 'u': {
        unsigned code = 0;
        for (int i = 0; i < 4; ++i) {
          const int h = pos_ < s_.size() ? hex_value(s_[pos_]) : -1;
          if (h < 0) fail(pos_, "expected 4 hex digits after \\u");
          code = code * 16 + static_cast<unsigned>(h);
          ++pos_;
        }
        append_utf8(scratch, code);
        break;
      }
      default: fail(pos_ - 2, std::string("unknown escape \\") + e);  // at the backslash
    }
  }
  if (at_end()) fail(start - 1, "unterminated string");
  const std::string_view text = escaped ? std::string_view(scratch) : s_.substr(start, pos_ - start);
  ++pos_;  // closing quote
  return text;
}

std::string_view JsonLineScanner::number() {
  skip_ws();
  const std::size_t start = pos_;
  std::size_t p = pos_;
  if (p < s_.size() && s_[p] == '-') ++p;
  if (p >= s_.size() || !is_digit(s_[p])) fail(start, "expected a number");
  if (s_[p] == '0' && p + 1 < s_.size() && is_digit(s_[p + 1])) fail(p, "leading zero in a number");
  while (p < s_.size() && is_digit(s_[p])) ++p;
  if (p < s_.size() && s_[p] == '.') {
    ++p;
    if (p >= s_.size() || !is_digit(s_[p])) fail(p, "expected digits after '.'");
    while (p < s_.size() && is_digit(s_[p])) ++p;
  }
  if (p < s_.size() && (s_[p] == 'e' || s_[p] == 'E')) {
    ++p;
    if (p < s_.size() && (s_[p] == '+' || s_[p] == '-')) ++p;
    if (p >= s_.size() || !is_digit(s_[p])) fail(p, "expected digits in the exponent");
    while (p < s_.size() && is_digit(s_[p])) ++p;
  }
  pos_ = p;
  return s_.substr(start, p - start);
}

void JsonLineScanner::skip_value(int depth) {
  if (depth > kMaxDepth) fail(pos_, "nested more than 64 deep");
  skip_ws();
  if (at_end()) fail(pos_, "expected a value, found the end of the line");
  const char c = s_[pos_];
  std::string scratch;
  if (c == '"') {
    string(scratch);
  } else if (c == '{') {
    ++pos_;
    if (consume('}')) return;
    do {
      string(scratch);
      expect(':');
      skip_value(depth + 1);
    } while (consume(','));
    expect('}');
  } else if (c == '[') {
    ++pos_;
    if (consume(']')) return;
    do skip_value(depth + 1);
    while (consume(','));
    expect(']');
  } else if (s_.substr(pos_, 4) == "true" || s_.substr(pos_, 4) == "null") {
    pos_ += 4;
  } else if (s_.substr(pos_, 5) == "false") {
    pos_ += 5;
  } else {
    number();
  }
}

}  // namespace mlasim
