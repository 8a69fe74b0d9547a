// The one JSON scanner (RFC 8259) behind every JSON mlasim reads: request-file lines
// (JsonLineParser), imported JSON-lines traces, and its own files (parse_json). The caller walks
// the values; a syntax error throws JsonSyntaxError with the 0-based offset of the offending
// character and a message without a prefix (each reader adds its own).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace mlasim {

struct JsonSyntaxError {
  std::size_t offset = 0;
  std::string message;
};

class JsonScanner {
 public:
  static constexpr int kMaxDepth = 64;  // arrays and objects nest at most this deep

  explicit JsonScanner(std::string_view text) : s_(text) {}

  // Skips JSON white space: space, tab, CR, LF.
  void skip_ws();
  std::size_t offset() const { return pos_; }
  bool at_end() const { return pos_ >= s_.size(); }
  char peek() const { return at_end() ? '\0' : s_[pos_]; }  // the next character, white space included
  // Skips white space, then consumes `c` when it is next.
  bool consume(char c);
  // The same, throwing "expected 'c'" when `c` is not next.
  void expect(char c);
  // Consumes `word` (true, false, null) when it is next (no white space skipped).
  bool consume_word(std::string_view word);
  // A string (at the next non-space character); escapes (surrogate pairs included) are decoded
  // into `scratch` when present, else the view is into the text.
  std::string_view string(std::string& scratch);
  // The text of a number, checked against JSON's grammar (e.g. "-12", "3.5e2").
  std::string_view number();
  // Skips any value: string, number, literal, array or object (`depth`: the arrays and objects
  // around it).
  void skip_value(int depth = 0);
  [[noreturn]] void fail(std::size_t offset, std::string message) const;

 private:
  unsigned hex4(std::size_t backslash);  // the 4 hex digits of a \u escape at pos_

  std::string_view s_;
  std::size_t pos_ = 0;
};

}  // namespace mlasim
