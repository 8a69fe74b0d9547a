// Recursive-descent JSON parser (RFC 8259 subset: \u escapes of the BMP only).
#include "tools/harness/json_value.h"

#include <cstdlib>

namespace mlasim {
namespace {

class Parser {
 public:
  static constexpr int kMaxDepth = 64;
  Parser(const std::string& text, const std::string& path) : s_(text), path_(path) {}

  JsonValue parse_document() {
    JsonValue v = value();
    skip_ws();
    if (pos_ != s_.size()) fail("unexpected text after the JSON value");
    return v;
  }

  struct Failure {
    Error error;
  };

 private:
  [[noreturn]] void fail(const std::string& message) {
    Error e;
    e.file = path_;
    e.line = 1;
    e.column = 1;
    for (std::size_t i = 0; i < pos_ && i < s_.size(); ++i) {
      if (s_[i] == '\n')
        ++e.line, e.column = 1;
      else
        ++e.column;
    }
    e.message = "invalid JSON: " + message;
    e.hint = "this file is written by mlasim; regenerate it rather than editing it by hand";
    throw Failure{e};
  }

  void skip_ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\t' || s_[pos_] == '\r')) ++pos_;
  }

  bool consume(char c) {
    skip_ws();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  void expect(char c) {
    if (!consume(c)) fail(std::string("expected '") + c + "'");
  }

  JsonValue value() {
    skip_ws();
    if (pos_ >= s_.size()) fail("unexpected end of input");
    const char c = s_[pos_];
    if (c == '{' || c == '[') {
      // Bounded so a hostile file cannot exhaust the stack (mlasim's own files nest 3 deep).
      if (++depth_ > kMaxDepth) fail("nested deeper than " + std::to_string(kMaxDepth) + " levels");
      JsonValue v = c == '{' ? object() : array();
      --depth_;
      return v;
    }
    if (c == '"') return JsonValue{string()};
    if (s_.compare(pos_, 4, "null") == 0) return pos_ += 4, JsonValue{nullptr};
    if (s_.compare(pos_, 4, "true") == 0) return pos_ += 4, JsonValue{true};
    if (s_.compare(pos_, 5, "false") == 0) return pos_ += 5, JsonValue{false};
    return number();
  }

  JsonValue object() {
    expect('{');
    JsonValue::Object members;
    if (consume('}')) return JsonValue{members};
    do {
      skip_ws();
      if (pos_ >= s_.size() || s_[pos_] != '"') fail("expected a string key");
      std::string key = string();
      expect(':');
      members.emplace_back(std::move(key), value());
    } while (consume(','));
    expect('}');
    return JsonValue{members};
  }

  JsonValue array() {
    expect('[');
    JsonValue::Array items;
    if (consume(']')) return JsonValue{items};
    do items.push_back(value());
    while (consume(','));
    expect(']');
    return JsonValue{items};
  }

  std::string string() {
    ++pos_;  // opening quote
    std::string out;
    while (pos_ < s_.size() && s_[pos_] != '"') {
      char c = s_[pos_++];
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= s_.size()) break;
      char e = s_[pos_++];
      switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'u': {
          if (pos_ + 4 > s_.size()) fail("truncated \\u escape");
          unsigned code = static_cast<unsigned>(std::strtoul(s_.substr(pos_, 4).c_str(), nullptr, 16));
          pos_ += 4;
          if (code < 0x80) {
            out += static_cast<char>(code);
          } else if (code < 0x800) {
            out += static_cast<char>(0xC0 | (code >> 6));
            out += static_cast<char>(0x80 | (code & 0x3F));
          } else {
            out += static_cast<char>(0xE0 | (code >> 12));
            out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (code & 0x3F));
          }
          break;
        }
        default: out += e;
      }
    }
    if (pos_ >= s_.size()) fail("unterminated string");
    ++pos_;  // closing quote
    return out;
  }

  JsonValue number() {
    const char* start = s_.c_str() + pos_;
    char* end = nullptr;
    double d = std::strtod(start, &end);
    if (end == start) fail("expected a value");
    pos_ += static_cast<std::size_t>(end - start);
    return JsonValue{d};
  }

  const std::string& s_;
  const std::string& path_;
  std::size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

const JsonValue* JsonValue::find(const std::string& key) const {
  if (!is_object()) return nullptr;
  for (const auto& [k, val] : object())
    if (k == key) return &val;
  return nullptr;
}

Result<JsonValue> parse_json(const std::string& text, const std::string& path) {
  try {
    return Parser(text, path).parse_document();
  } catch (const Parser::Failure& f) {
    return f.error;
  }
}

}  // namespace mlasim
