// JSON scanning by hand: no allocation unless a string holds escapes, no locale, no doubles.
#include "base/json_scanner.h"

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

}  // namespace

void JsonScanner::fail(std::size_t offset, std::string message) const {
  throw JsonSyntaxError{offset, std::move(message)};
}

void JsonScanner::skip_ws() {
  while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\r' || s_[pos_] == '\n')) ++pos_;
}

bool JsonScanner::consume(char c) {
  skip_ws();
  if (pos_ < s_.size() && s_[pos_] == c) {
    ++pos_;
    return true;
  }
  return false;
}

void JsonScanner::expect(char c) {
  if (consume(c)) return;
  if (at_end()) fail(pos_, std::string("expected '") + c + "', found the end of the text");
  fail(pos_, std::string("expected '") + c + "', found '" + s_[pos_] + "'");
}

bool JsonScanner::consume_word(std::string_view word) {
  if (s_.substr(pos_, word.size()) != word) return false;
  pos_ += word.size();
  return true;
}

unsigned JsonScanner::hex4(std::size_t backslash) {
  unsigned code = 0;
  for (int i = 0; i < 4; ++i) {
    const int h = pos_ < s_.size() ? hex_value(s_[pos_]) : -1;
    if (h < 0) fail(backslash, "expected 4 hex digits after \\u");
    code = code * 16 + static_cast<unsigned>(h);
    ++pos_;
  }
  return code;
}

std::string_view JsonScanner::string(std::string& scratch) {
  skip_ws();
  if (at_end() || s_[pos_] != '"') fail(pos_, "expected a string");
  const std::size_t start = ++pos_;
  bool escaped = false;
  scratch.clear();
  while (pos_ < s_.size() && s_[pos_] != '"') {
    const char c = s_[pos_];
    if (static_cast<unsigned char>(c) < 0x20) fail(pos_, "control character inside a string");
    if (c != '\\') {
      if (escaped) scratch += c;
      ++pos_;
      continue;
    }
    if (!escaped) {  // the text so far becomes the decoded prefix
      scratch.assign(s_.substr(start, pos_ - start));
      escaped = true;
    }
    if (pos_ + 1 >= s_.size()) fail(start - 1, "unterminated string");
    const std::size_t backslash = pos_;
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
        unsigned code = hex4(backslash);
        if (code >= 0xDC00 && code <= 0xDFFF) fail(backslash, "unpaired surrogate in a \\u escape");
        if (code >= 0xD800 && code <= 0xDBFF) {  // a high surrogate: its low half must follow
          if (s_.substr(pos_, 2) != "\\u") fail(backslash, "unpaired surrogate in a \\u escape");
          const std::size_t low_at = pos_;
          pos_ += 2;
          const unsigned low = hex4(low_at);
          if (low < 0xDC00 || low > 0xDFFF) fail(backslash, "unpaired surrogate in a \\u escape");
          code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
        }
        append_utf8(scratch, code);
        break;
      }
      default: fail(backslash, std::string("unknown escape \\") + e);
    }
  }
  if (at_end()) fail(start - 1, "unterminated string");
  const std::string_view text = escaped ? std::string_view(scratch) : s_.substr(start, pos_ - start);
  ++pos_;  // closing quote
  return text;
}

std::string_view JsonScanner::number() {
  skip_ws();
  const std::size_t start = pos_;
  std::size_t p = pos_;
  if (p < s_.size() && s_[p] == '-') ++p;
  if (p >= s_.size() || !is_digit(s_[p])) fail(start, "expected a number");
  if (s_[p] == '0' && p + 1 < s_.size() && is_digit(s_[p + 1])) fail(start, "a number must not have leading zeros");
  while (p < s_.size() && is_digit(s_[p])) ++p;
  if (p < s_.size() && s_[p] == '.') {
    ++p;
    if (p >= s_.size() || !is_digit(s_[p])) fail(p, "expected digits after the decimal point");
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

void JsonScanner::skip_value(int depth) {
  skip_ws();
  if (at_end()) fail(pos_, "expected a value");
  const char c = s_[pos_];
  if ((c == '{' || c == '[') && depth >= kMaxDepth) fail(pos_, "nested deeper than 64 levels");
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
  } else if (!consume_word("true") && !consume_word("false") && !consume_word("null")) {
    if (c != '-' && !is_digit(c)) fail(pos_, "expected a value");
    number();
  }
}

}  // namespace mlasim
